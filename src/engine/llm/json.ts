/**
 * Tolerant extraction of one JSON value from a model reply (reference §10.6, hardened):
 *
 * 1. Candidates are the top-level `{…}` (or `[…]`) spans found by a single string- and escape-aware
 *    scan. A brace only opens a candidate when the next non-space character could start JSON
 *    content, so prose such as "use {task_file}" is not mistaken for an object.
 * 2. A candidate that directly follows a ```json fence wins; several such fences are ambiguous.
 *    Otherwise exactly one top-level candidate must exist: zero or several are refused rather than
 *    guessed at.
 * 3. The candidate is parsed with JSON.parse; if that fails, two cheap repairs that cannot change
 *    the meaning of valid JSON are tried (trailing commas, typographic quotes around keys). If it
 *    still fails, the error names the line and column in the reply, so a re-ask can quote it.
 *
 * Everything here is linear in the length of the reply.
 */
import { messageOf } from '../errors';

export type JsonObject = Record<string, unknown>;

export type JsonExtraction<T> =
  | { ok: true; value: T; /** True when a repair was needed to parse it. */ repaired: boolean }
  | { ok: false; error: string };

interface Span {
  start: number;
  /** Exclusive. */
  end: number;
}

interface Scan {
  spans: Span[];
  /** Start of a candidate that never closed (a cut-off reply), if any. */
  unterminated: number | null;
}

const SMART_OPEN = '\u201c';
const SMART_CLOSE = '\u201d';
/** Longest key the smart-quote repair looks at; bounds the look-ahead so the repair stays linear. */
const MAX_KEY = 200;

function isSpace(ch: string | undefined): boolean {
  return ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t';
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text[i])) i++;
  return i;
}

/** Could the character after an opening bracket begin JSON content? */
function opensJson(open: '{' | '[', next: string | undefined): boolean {
  if (next === undefined) return false;
  if (open === '{') return next === '"' || next === '}' || next === SMART_OPEN;
  return (
    next === '"' ||
    next === '{' ||
    next === '[' ||
    next === ']' ||
    next === '-' ||
    (next >= '0' && next <= '9')
  );
}

/** Index just past the bracket that closes the one at `start`, or -1 if it never closes. */
function closeOf(text: string, start: number): number {
  const open = text[start];
  const close = open === '{' ? '}' : ']';
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === open) depth++;
    else if (ch === close && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * Top-level candidates opening with `open`. When looking for arrays, JSON-looking objects are
 * stepped over whole, so an array inside an object is not top-level. (Objects inside a top-level
 * array do count, as they did in the reference, which took the outermost braces.)
 */
function scanTopLevel(text: string, open: '{' | '['): Scan {
  const spans: Span[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const wanted = ch === open;
    const kind = wanted ? open : open === '[' && ch === '{' ? '{' : null;
    if (kind === null || !opensJson(kind, text[skipSpace(text, i + 1)])) {
      i++;
      continue;
    }
    const end = closeOf(text, i);
    if (end < 0) return { spans, unterminated: wanted ? i : null };
    if (wanted) spans.push({ start: i, end });
    i = end;
  }
  return { spans, unterminated: null };
}

/** True when the text before `start` (ignoring whitespace) ends with a ```json fence opener. */
function isFenced(text: string, start: number): boolean {
  let i = start - 1;
  while (i >= 0 && isSpace(text[i])) i--;
  const from = i - 6;
  return from >= 0 && text.slice(from, i + 1).toLowerCase() === '```json';
}

export function lineCol(text: string, pos: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < pos && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: pos - lineStart + 1 };
}

/**
 * Drops commas that directly precede `}` or `]` and turns “key”: into "key":, both outside
 * strings only. Neither can alter a document that was already valid JSON.
 */
export function repairJson(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === '\\' && i + 1 < text.length) out += text[++i];
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      continue;
    }
    if (ch === ',') {
      const next = text[skipSpace(text, i + 1)];
      if (next === '}' || next === ']') continue;
    }
    if (ch === SMART_OPEN || ch === SMART_CLOSE) {
      let j = i + 1;
      const limit = Math.min(text.length, i + 1 + MAX_KEY);
      while (
        j < limit &&
        text[j] !== SMART_CLOSE &&
        text[j] !== SMART_OPEN &&
        text[j] !== '"' &&
        text[j] !== '\n'
      )
        j++;
      if (
        j < limit &&
        (text[j] === SMART_CLOSE || text[j] === SMART_OPEN) &&
        text[skipSpace(text, j + 1)] === ':'
      ) {
        out += JSON.stringify(text.slice(i + 1, j));
        i = j;
        continue;
      }
    }
    out += ch;
  }
  return out;
}

class SyntaxAt extends Error {
  constructor(
    readonly pos: number,
    readonly problem: string,
  ) {
    super(problem);
  }
}

const MAX_DEPTH = 512;

/**
 * A strict JSON syntax checker used only to explain why JSON.parse failed: it reports the first
 * problem with a position (V8's messages often carry none).
 */
export function locateJsonError(text: string): { pos: number; problem: string } | null {
  let i = 0;
  const fail = (problem: string, at = i): never => {
    throw new SyntaxAt(at, problem);
  };
  const describe = (ch: string | undefined): string =>
    ch === undefined ? 'end of input (the reply may have been cut off)' : `character ${JSON.stringify(ch)}`;
  const ws = (): void => {
    i = skipSpace(text, i);
  };
  const string = (): void => {
    const start = i;
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string (the reply may have been cut off)', start);
      const ch = text[i];
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === '\\') {
        const esc = text[i + 1];
        if (esc === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape in string');
          i += 6;
        } else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) i += 2;
        else fail(`invalid escape \\${esc ?? ''} in string`);
        continue;
      }
      if (ch < ' ') fail('raw control character (such as a line break) inside a string; escape it as \\n');
      i++;
    }
  };
  const number = (): void => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail(`unexpected ${describe(text[i])}`);
    i += m![0].length;
  };
  const value = (depth: number): void => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    ws();
    const ch = text[i];
    if (ch === '{') return object(depth);
    if (ch === '[') return array(depth);
    if (ch === '"') return string();
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) return number();
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    fail(`expected a value but found ${describe(ch)}`);
  };
  const object = (depth: number): void => {
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') {
        fail(
          text[i] === '}'
            ? 'trailing comma before "}"'
            : `expected a property name in double quotes but found ${describe(text[i])}`,
        );
      }
      string();
      ws();
      if (text[i] !== ':') fail(`expected ":" after a property name but found ${describe(text[i])}`);
      i++;
      value(depth + 1);
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      fail(`expected "," or "}" after a property value but found ${describe(text[i])}`);
    }
  };
  const array = (depth: number): void => {
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] === ']') fail('trailing comma before "]"');
      value(depth + 1);
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      fail(`expected "," or "]" after an array element but found ${describe(text[i])}`);
    }
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail(`unexpected ${describe(text[i])} after the JSON value`);
    return null;
  } catch (err) {
    if (err instanceof SyntaxAt) return { pos: err.pos, problem: err.problem };
    throw err;
  }
}

function parseCandidate<T>(text: string, span: Span, check: (v: unknown) => v is T): JsonExtraction<T> {
  const candidate = text.slice(span.start, span.end);
  const tryParse = (s: string): { ok: true; value: unknown } | { ok: false; message: string } => {
    try {
      return { ok: true, value: JSON.parse(s) as unknown };
    } catch (err) {
      return { ok: false, message: messageOf(err) };
    }
  };
  let parsed = tryParse(candidate);
  let repaired = false;
  if (!parsed.ok) {
    const fixed = repairJson(candidate);
    if (fixed !== candidate) {
      const second = tryParse(fixed);
      if (second.ok) {
        parsed = second;
        repaired = true;
      }
    }
  }
  if (!parsed.ok) {
    const located = locateJsonError(candidate);
    if (!located) return { ok: false, error: `invalid JSON: ${parsed.message}` };
    const { line, col } = lineCol(text, span.start + located.pos);
    return { ok: false, error: `invalid JSON: ${located.problem} at line ${line} col ${col}` };
  }
  if (!check(parsed.value)) return { ok: false, error: 'the JSON value has the wrong type' };
  return { ok: true, value: parsed.value, repaired };
}

function extract<T>(
  text: string,
  open: '{' | '[',
  noun: string,
  check: (v: unknown) => v is T,
): JsonExtraction<T> {
  const { spans, unterminated } = scanTopLevel(text, open);
  const fenced = spans.filter((s) => isFenced(text, s.start));
  if (fenced.length > 1)
    return { ok: false, error: `${fenced.length} fenced JSON blocks; expected exactly one` };
  if (fenced.length === 1) return parseCandidate(text, fenced[0], check);
  const total = spans.length + (unterminated === null ? 0 : 1);
  if (total === 0) return { ok: false, error: `no JSON ${noun} found` };
  if (spans.length === 0 && unterminated !== null) {
    const { line, col } = lineCol(text, unterminated);
    return {
      ok: false,
      error: `unterminated JSON ${noun} starting at line ${line} col ${col} (the reply may have been cut off)`,
    };
  }
  if (total > 1) {
    const extra = unterminated === null ? '' : ', one of them unterminated';
    return { ok: false, error: `${total} top-level JSON ${noun}s${extra}; expected exactly one` };
  }
  return parseCandidate(text, spans[0], check);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isArray(v: unknown): v is unknown[] {
  return Array.isArray(v);
}

/** The one JSON object in a model reply (see the module comment for the rules). */
export function extractJson(text: string): JsonExtraction<JsonObject> {
  return extract(text, '{', 'object', isObject);
}

/** The one top-level JSON array in a model reply; same rules as extractJson. */
export function extractJsonArray(text: string): JsonExtraction<unknown[]> {
  return extract(text, '[', 'array', isArray);
}
