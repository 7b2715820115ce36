/**
 * A skill package (a folder: SKILL.md plus references/, scripts/, assets/) travels through the
 * training loop as one text, so everything that already follows the skill text (hashes, caches, the
 * gate, snapshots, resume) follows every file of the package. The text is SKILL.md, then a trailer:
 *
 *   <!-- skillopt:file references/guide.md -->
 *   …the file's text…
 *   <!-- skillopt:end references/guide.md -->
 *   <!-- skillopt:file scripts/check.sh +x -->
 *   …
 *   <!-- skillopt:end scripts/check.sh -->
 *   <!-- skillopt:readonly assets/logo.png 2048 3fa2c1d09b7e4455 -->
 *
 * `+x` marks a file that was executable in the folder: its copies (snapshots, best_skill/, the
 * agents' workspaces) are made executable too, so `./scripts/check.sh` runs where the skill is used.
 *
 * Text files are trained; read-only entries (binary files, files over the size limit) are named by
 * path, size and digest only and their bytes come from the folder they were read from. A skill
 * without other files has no trailer: its text is SKILL.md exactly, the single-file case.
 * Nothing here is shown raw to a model: prompts render the package through views.ts.
 */

import { withLfLineEndings } from '../lineEndings';

export const SKILL_FILE = 'SKILL.md';

export interface PackageTextFile {
  path: string;
  text: string;
  /** Executable in the folder it was read from (a script run as `./scripts/x.sh`). */
  executable?: boolean;
}

export interface PackageReadOnlyFile {
  path: string;
  bytes: number;
  /** First 16 hex characters of the SHA-256 of the file's bytes. */
  sha: string;
}

export interface SkillPackage {
  /** SKILL.md's text. */
  skill: string;
  /** Trained text files by relative path (`/`-separated), sorted. */
  files: PackageTextFile[];
  /** Files carried unchanged and never shown to the optimizer. */
  readOnly: PackageReadOnlyFile[];
}

const FILE_START = /^<!-- skillopt:file (\S+)( \+x)? -->$/;
const READ_ONLY = /^<!-- skillopt:readonly (\S+) (\d+) ([0-9a-f]{16}) -->$/;
const TRAILER_START = /\n<!-- skillopt:(?:file|readonly) \S+/;

const endLine = (path: string): string => `<!-- skillopt:end ${path} -->`;

/** Where the trailer starts (its leading newline), or -1 for a single-file skill. */
function trailerStart(text: string): number {
  for (let from = 0; ;) {
    const m = TRAILER_START.exec(text.slice(from));
    if (!m) return -1;
    const at = from + m.index;
    if (parseTrailer(text.slice(at))) return at;
    from = at + 1;
  }
}

function parseTrailer(trailer: string): Omit<SkillPackage, 'skill'> | undefined {
  const files: PackageTextFile[] = [];
  const readOnly: PackageReadOnlyFile[] = [];
  let rest = trailer;
  while (rest.length) {
    if (!rest.startsWith('\n')) return undefined;
    const nl = rest.indexOf('\n', 1);
    const line = nl < 0 ? rest.slice(1) : rest.slice(1, nl);
    const ro = READ_ONLY.exec(line);
    if (ro) {
      readOnly.push({ path: ro[1], bytes: Number(ro[2]), sha: ro[3] });
      rest = nl < 0 ? '' : rest.slice(nl);
      continue;
    }
    const start = FILE_START.exec(line);
    if (!start || nl < 0) return undefined;
    const close = `\n${endLine(start[1])}`;
    const body = rest.slice(nl + 1);
    const end = body.indexOf(close);
    if (end < 0) return undefined;
    files.push({ path: start[1], text: body.slice(0, end), ...(start[2] ? { executable: true } : {}) });
    rest = body.slice(end + close.length);
  }
  return { files, readOnly };
}

/** The files of a package as its folder holds them: SKILL.md, the text and the read-only files. */
export function packageFileCount(pkg: SkillPackage): number {
  return 1 + pkg.files.length + pkg.readOnly.length;
}

/** True when the text carries other files beside SKILL.md. */
export function isPackageText(text: string): boolean {
  return trailerStart(text) >= 0;
}

/** The package a loop text stands for; a single-file skill is a package without other files. */
export function splitPackage(text: string): SkillPackage {
  const at = trailerStart(text);
  if (at < 0) return { skill: text, files: [], readOnly: [] };
  const rest = parseTrailer(text.slice(at))!;
  return { skill: text.slice(0, at), ...rest };
}

/** The loop text of a package: SKILL.md alone when there is nothing else. */
export function joinPackage(pkg: SkillPackage): string {
  const files = [...pkg.files].sort((a, b) => a.path.localeCompare(b.path));
  const readOnly = [...pkg.readOnly].sort((a, b) => a.path.localeCompare(b.path));
  let out = pkg.skill;
  for (const f of files)
    out += `\n<!-- skillopt:file ${f.path}${f.executable ? ' +x' : ''} -->\n${f.text}\n${endLine(f.path)}`;
  for (const f of readOnly) out += `\n<!-- skillopt:readonly ${f.path} ${f.bytes} ${f.sha} -->`;
  return out;
}

/** SKILL.md's text of a loop text. */
export function skillBody(text: string): string {
  const at = trailerStart(text);
  return at < 0 ? text : text.slice(0, at);
}

/**
 * Applies a change meant for SKILL.md (appendix, slow-update block, a rewrite) to the body only,
 * so blocks appended "at the end" land at the end of SKILL.md, not after the other files.
 */
export function mapSkillBody(text: string, change: (body: string) => string): string {
  const at = trailerStart(text);
  // A CRLF SKILL.md stays CRLF: the blocks are written with `\n`.
  const inEol = (body: string): string => withLfLineEndings(body, (lf) => ({ text: change(lf) })).text;
  if (at < 0) return inEol(text);
  return inEol(text.slice(0, at)) + text.slice(at);
}

/** `next`'s SKILL.md with `previous`'s other files: a whole-document rewrite changes SKILL.md only. */
export function withFilesOf(previous: string, next: string): string {
  const at = trailerStart(previous);
  return at < 0 ? next : skillBody(next) + previous.slice(at);
}
