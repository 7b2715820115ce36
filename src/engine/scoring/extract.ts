import { pyStrip } from './normalize';

export interface ExtractedAnswer {
  answer: string;
  /** `tag`: last `<tag>…</tag>` pair; `last-line`: no pair, last non-empty line; `empty`: nothing to read. */
  via: 'tag' | 'last-line' | 'empty';
}

/**
 * The final answer in a model reply, as the reference reads it: the content of the last
 * `<answer>…</answer>` pair (tag name case-insensitive, content may span lines), else the last non-empty
 * line. Models reason before answering, so the last pair is the committed one.
 */
export function extractAnswer(text: string, tag = 'answer'): ExtractedAnswer {
  const name = tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pairs = [...text.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'gi'))];
  const last = pairs[pairs.length - 1];
  // Lines and blanks as Python's splitlines() and strip() see them (a lone \r, \x85, U+2028 … end a line).
  if (last) return { answer: pyStrip(last[1] ?? ''), via: 'tag' };
  return lastLine(text);
}

// Python's str.splitlines() boundaries.
// eslint-disable-next-line no-control-regex -- Python splits lines at these control characters too
const pyLineBreak = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

function lastLine(text: string): ExtractedAnswer {
  const lines = text
    .split(pyLineBreak)
    .map(pyStrip)
    .filter((l) => l !== '');
  const line = lines[lines.length - 1];
  return line === undefined ? { answer: pyStrip(text), via: 'empty' } : { answer: line, via: 'last-line' };
}

/**
 * DocVQA's reading: the text between the last `<tag>` and the last `</tag>` when the close comes
 * after the open, else the last non-empty line.
 */
export function extractLastOpenClose(text: string, tag = 'answer'): ExtractedAnswer {
  const lower = text.toLowerCase();
  const open = `<${tag.toLowerCase()}>`;
  const start = lower.lastIndexOf(open);
  const end = lower.lastIndexOf(`</${tag.toLowerCase()}>`);
  if (start !== -1 && end !== -1 && end > start) {
    return { answer: pyStrip(text.slice(start + open.length, end)), via: 'tag' };
  }
  return lastLine(text);
}

/**
 * OfficeQA's reading: a reply without `<tag>` has no final answer (empty); otherwise the first
 * `<tag>…</tag>` pair, else the last non-empty line.
 */
export function extractFirstTagged(text: string, tag = 'answer'): ExtractedAnswer {
  if (!text.toLowerCase().includes(`<${tag.toLowerCase()}>`)) return { answer: '', via: 'empty' };
  const name = tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const first = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'i').exec(text);
  if (first) return { answer: pyStrip(first[1] ?? ''), via: 'tag' };
  return lastLine(text);
}
