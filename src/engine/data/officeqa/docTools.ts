/**
 * OfficeQA's local document tools (reference `envs/officeqa/tool_runtime.py`): `glob`, `read` and
 * `grep` over the folders of `env.data_dirs`, sandboxed to them. Observations keep the reference's
 * data shapes (absolute paths, `N: line` grep rows) and bounds (50 glob matches, 20 grep rows, 4,000
 * characters per read); a bad call is an observation the model reads, never a crash of the item.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SkillOptError } from '../../errors';
import type { ReplyToolCall, ToolSpec } from '../../llm/types';

const MAX_READ_CHARS = 4000;
const MAX_GREP_MATCHES = 20;
const MAX_GLOB_MATCHES = 50;
/** Ours: a document larger than this is not read (the reference reads any size into memory). */
export const MAX_DOC_BYTES = 32 * 1024 * 1024;
/** Ours: one grep row is cut here, so a single huge line cannot flood the context. */
const MAX_GREP_LINE_CHARS = 2000;
/** Ours: a corpus walk stops here, naming the folder (the reference walks without a bound). */
const MAX_CORPUS_FILES = 200_000;

/** The three functions as the target sees them (JSON Schema arguments, as the reference declares them). */
export const DOC_TOOL_SPECS: readonly ToolSpec[] = [
  {
    name: 'glob',
    description:
      'List local document files whose file name or path relative to its document folder matches a glob pattern (*, ?, [abc]).',
    parameters: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
  },
  {
    name: 'read',
    description:
      'Read lines of a local text document: `path` as listed, `start` the first line (1-based, default 1), `limit` the line count (default 80).',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, start: { type: 'integer' }, limit: { type: 'integer' } },
      required: ['path'],
    },
  },
  {
    name: 'grep',
    description:
      'Find the lines of one local text document that contain a literal text (case-insensitive), with their line numbers.',
    parameters: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string' } },
      required: ['pattern', 'path'],
    },
  },
];

/**
 * Each folder of env.data_dirs as the reference reads it: its `transformed/` subfolder when there is
 * one, real paths, each once. A folder that does not exist is refused (the reference skips it).
 */
export function docsRoots(dirs: readonly string[]): string[] {
  const roots: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new SkillOptError('config', `env.data_dirs names ${dir}, which is not a folder`, {
        key: 'env.data_dirs',
        fix: "point env.data_dirs at the folder of OfficeQA's parsed Treasury bulletins (its transformed/ text files and jsons/ pages)",
      });
    }
    const transformed = join(dir, 'transformed');
    const root = realpathSync(
      existsSync(transformed) && statSync(transformed).isDirectory() ? transformed : dir,
    );
    if (!roots.includes(root)) roots.push(root);
  }
  return roots;
}

interface DocFile {
  /** Real path (what tools show and take). */
  path: string;
  /** Path relative to its root, `/`-separated, for glob patterns. */
  rel: string;
  name: string;
}

/** The document folders of one run: listed once, then searched by every item's tools. */
export class DocCorpus {
  private listing?: DocFile[];

  constructor(readonly roots: readonly string[]) {}

  /** Every file under the roots, in root order then sorted walk order (os.walk, not following folder links). */
  files(): readonly DocFile[] {
    if (this.listing) return this.listing;
    const out: DocFile[] = [];
    const walk = (root: string, dir: string): void => {
      const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
      const subdirs: string[] = [];
      for (const e of entries) {
        const full = join(dir, e.name);
        if (e.isDirectory() || (e.isSymbolicLink() && isDir(full))) {
          if (e.isDirectory()) subdirs.push(full);
          continue;
        }
        if (out.length >= MAX_CORPUS_FILES) {
          throw new SkillOptError(
            'config',
            `the document folder ${root} holds more than ${MAX_CORPUS_FILES} files`,
            {
              key: 'env.data_dirs',
              fix: 'point env.data_dirs at the OfficeQA documents only',
            },
          );
        }
        out.push({ path: full, rel: relative(root, full).split(sep).join('/'), name: e.name });
      }
      for (const d of subdirs) walk(root, d);
    };
    for (const root of this.roots) walk(root, root);
    this.listing = out;
    return out;
  }

  /** The item's `source_files` found in the corpus (every file when it names none), as real paths. */
  candidates(sourceFiles: readonly string[]): string[] {
    const wanted = new Set(sourceFiles);
    const out: string[] = [];
    for (const f of this.files()) {
      if (wanted.size && !wanted.has(f.name)) continue;
      const real = realOrSelf(f.path);
      if (!out.includes(real)) out.push(real);
    }
    return out;
  }

  /**
   * One function call's observation and the line the trajectory records for it. `allowed` holds the
   * file names the item may open (its candidate files, as the reference limits them); empty = any.
   */
  run(call: ReplyToolCall, allowed: ReadonlySet<string>): { cmd: string; obs: string } {
    const args = call.arguments;
    if (call.name === 'glob') {
      const pattern = str(args.pattern) || '*';
      return { cmd: `glob(pattern=${JSON.stringify(pattern)})`, obs: this.glob(pattern, allowed) };
    }
    if (call.name === 'read') {
      const path = str(args.path);
      const start = lineArg(args.start, 1);
      const limit = lineArg(args.limit, 80);
      const cmd = `read(path=${JSON.stringify(path)}, start=${String(start)}, limit=${String(limit)})`;
      if (!path) return { cmd, obs: '[read error: no path given]' };
      if (typeof start === 'string' || typeof limit === 'string')
        return { cmd, obs: '[read error: start and limit must be whole numbers]' };
      const text = this.open(path, allowed);
      if ('error' in text) return { cmd, obs: `[read error: ${text.error}]` };
      const lines = splitLines(text.body);
      const excerpt = lines.slice(start - 1, start - 1 + limit).join('');
      return { cmd, obs: cpSlice(excerpt, MAX_READ_CHARS) || '[empty file]' };
    }
    if (call.name === 'grep') {
      const pattern = str(args.pattern).toLowerCase();
      const path = str(args.path);
      const cmd = `grep(pattern=${JSON.stringify(pattern)}, path=${JSON.stringify(path)})`;
      if (!pattern || !path) return { cmd, obs: '[grep error: both pattern and path are needed]' };
      const text = this.open(path, allowed);
      if ('error' in text) return { cmd, obs: `[grep error: ${text.error}]` };
      const rows: string[] = [];
      for (const [i, line] of splitLines(text.body).entries()) {
        if (!line.toLowerCase().includes(pattern)) continue;
        rows.push(`${i + 1}: ${cpSlice(line.trimEnd(), MAX_GREP_LINE_CHARS)}`);
        if (rows.length >= MAX_GREP_MATCHES) break;
      }
      return { cmd, obs: rows.length ? rows.join('\n') : '[no matches]' };
    }
    return {
      cmd: call.name,
      obs: `[tool error: there is no tool named ${JSON.stringify(call.name)}; use glob, read or grep]`,
    };
  }

  private glob(pattern: string, allowed: ReadonlySet<string>): string {
    const re = fnmatchRegExp(pattern);
    const matches: string[] = [];
    for (const f of this.files()) {
      if (allowed.size && !allowed.has(f.name)) continue;
      if (re.test(f.rel) || re.test(f.name)) matches.push(f.path);
      if (matches.length >= MAX_GLOB_MATCHES) break;
    }
    return matches.length ? matches.join('\n') : '[no matches]';
  }

  /**
   * A document's text, only when its real path (links followed) is inside a root and, when the item
   * limits them, its name is one of the allowed files. A relative path is looked up in each root.
   */
  private open(path: string, allowed: ReadonlySet<string>): { body: string } | { error: string } {
    const tried = isAbsolute(path) ? [path] : this.roots.map((r) => resolve(r, path));
    const found = tried.find((p) => existsSync(p));
    const real = found ? realOrSelf(found) : resolve(tried[0] ?? path);
    const inside = this.roots.some((root) => real === root || real.startsWith(root + sep));
    if (!inside || (allowed.size && !allowed.has(basename(real))))
      return { error: 'this path is not one you may open' };
    if (!found) return { error: 'no such file' };
    const st = statSync(real);
    if (!st.isFile()) return { error: 'not a file' };
    if (st.size > MAX_DOC_BYTES)
      return { error: `the file is larger than ${MAX_DOC_BYTES / 1024 / 1024} MiB` };
    return { body: readFileSync(real, 'utf8') };
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** A line argument as the reference reads it (`max(int(v or default), 1)`); text that is no whole number stays text. */
function lineArg(v: unknown, fallback: number): number | string {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return fallback;
  const text = str(v);
  const n = typeof v === 'number' ? Math.trunc(v) : /^\s*[+-]?\d+\s*$/.test(text) ? Number(text.trim()) : NaN;
  return Number.isFinite(n) ? Math.max(n, 1) : text;
}

/** An argument as text: strings as given, other values as JSON (a model may send anything). */
function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}

/** Lines with their terminators, after universal-newline translation (Python's text-mode `readlines`). */
export function splitLines(text: string): string[] {
  const unified = text.replace(/\r\n?/g, '\n');
  const lines = unified.split(/(?<=\n)/);
  return lines.length === 1 && lines[0] === '' ? [] : lines;
}

/** The first `max` characters, counted in code points as Python counts them. */
export function cpSlice(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/** Python's `fnmatch.fnmatch` on POSIX (case-sensitive; `*` also crosses `/`) as one regular expression. */
export function fnmatchRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '!') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j++;
      if (j >= pattern.length) out += '\\[';
      else {
        let body = pattern.slice(i + 1, j).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = '^' + body.slice(1);
        else if (body.startsWith('^')) body = '\\' + body;
        out += `[${body}]`;
        i = j;
      }
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^(?:${out})$`, 's');
}
