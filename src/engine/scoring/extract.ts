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
  if (last) return { answer: (last[1] ?? '').trim(), via: 'tag' };
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const line = lines[lines.length - 1];
  if (line === undefined) return { answer: '', via: 'empty' };
  return { answer: line.trim(), via: 'last-line' };
}
