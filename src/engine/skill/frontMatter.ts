/**
 * The YAML front matter of a SKILL.md (`---` … `---` at the very top), as the agent hosts read it:
 * `name` and `description` decide whether a skill loads and when it is used. One parser for the
 * engine (rollouts, lint, activation) and the extension (diagnostics, the Skills view).
 */
import { LineCounter, parseDocument } from 'yaml';
import { ALIAS_BOMB, yamlValue } from '../yamlValue';

export interface FrontMatter {
  /** The parsed mapping; empty when the block is missing or not a mapping. */
  data: Record<string, unknown>;
  /** `data.name` when it is a string. */
  name?: string;
  /** `data.description` when it is a string. */
  description?: string;
  /** 0-based line of the opening `---` (always 0) and of the closing `---`. */
  startLine: number;
  endLine: number;
  /** 0-based line where each top-level key is written, for diagnostics that point at it. */
  keyLines: Record<string, number>;
  /** YAML errors in the block, with their 0-based line. */
  errors: { message: string; line: number }[];
  /** Text after the closing `---` line. */
  body: string;
}

const OPEN = /^\uFEFF?---[ \t]*\r?\n/;

/** The front matter of `text`, or undefined when the file does not start with a `---` block. */
export function parseFrontMatter(text: string): FrontMatter | undefined {
  const open = OPEN.exec(text);
  if (!open) return undefined;
  const lines = text.split('\n');
  let endLine = -1;
  for (let i = 1; i < lines.length; i++) {
    if (/^---[ \t]*\r?$/.test(lines[i] ?? '')) {
      endLine = i;
      break;
    }
  }
  if (endLine < 0) return undefined;
  const source = lines
    .slice(1, endLine)
    .map((l) => l.replace(/\r$/, ''))
    .join('\n');
  const counter = new LineCounter();
  const doc = parseDocument(source, { lineCounter: counter, prettyErrors: false });
  const errors = doc.errors.map((e) => ({
    message: e.message.split('\n')[0] ?? e.message,
    // Source line 1 is file line 1 (0-based) because the block starts after the opening `---`.
    line: counter.linePos(e.pos[0]).line,
  }));
  const parsed = errors.length ? undefined : yamlValue(doc);
  if (!errors.length && !parsed) errors.push({ message: ALIAS_BOMB.problem, line: 1 });
  const value = parsed?.value;
  const data =
    value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const keyLines: Record<string, number> = {};
  const contents = doc.contents as { items?: { key?: { value?: unknown; range?: number[] } }[] } | null;
  for (const item of contents?.items ?? []) {
    const key = item.key?.value;
    const at = item.key?.range?.[0];
    if (typeof key === 'string' && typeof at === 'number') keyLines[key] = counter.linePos(at).line;
  }
  return {
    data,
    ...(typeof data.name === 'string' ? { name: data.name } : {}),
    ...(typeof data.description === 'string' ? { description: data.description } : {}),
    startLine: 0,
    endLine,
    keyLines,
    errors,
    body: lines.slice(endLine + 1).join('\n'),
  };
}
