/** Editor ranges of the lint findings: a front-matter entry, a value, a line, a text offset. */
import type { FrontMatter } from './frontMatter';
import type { LintRange } from './lint';

/** The whole `key: value` entry, continuation lines of a block or folded value included. */
export function entryRange(fm: FrontMatter, lines: string[], keyLine: number): LintRange {
  const later = Object.values(fm.keyLines).filter((l) => l > keyLine);
  let end = (later.length ? Math.min(...later) : fm.endLine) - 1;
  while (end > keyLine && /^\s*(#.*)?$/.test(lines[end] ?? '')) end--;
  return { startLine: keyLine, startCol: 0, endLine: end, endCol: (lines[end] ?? '').length };
}

/** The value on a key's line (the key itself when the value starts on the next line). */
export function valueRange(lines: string[], line: number): LintRange {
  const text = lines[line] ?? '';
  const colon = text.indexOf(':');
  let start = colon < 0 ? 0 : colon + 1;
  while (start < text.length && /\s/.test(text[start] ?? '')) start++;
  if (start >= text.length || /^[|>][-+0-9]*\s*$/.test(text.slice(start))) start = text.search(/\S/);
  return { startLine: line, startCol: Math.max(0, start), endLine: line, endCol: text.length };
}

export function lineRange(lines: string[], line: number): LintRange {
  return { startLine: line, startCol: 0, endLine: line, endCol: (lines[line] ?? '').length };
}

export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 0-based line and column of a text offset. */
export function position(starts: number[], offset: number): [number, number] {
  let line = 0;
  while (line + 1 < starts.length && (starts[line + 1] ?? Infinity) <= offset) line++;
  return [line, offset - (starts[line] ?? 0)];
}
