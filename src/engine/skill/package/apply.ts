/**
 * Applying a run's best skill folder to the user's skill folder: which files differ, and which the
 * user's folder holds that the best lacks. Both the extension's Apply Best and tests use it; the
 * writing itself is the caller's (a WorkspaceEdit there). A path that would lead through a symbolic
 * link is refused, so nothing is ever written outside the skill folder.
 */
import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../errors';
import { isLeftOut, SKILL_RESOURCE_DIRS } from './folder';
import { SKILL_FILE } from './text';

export interface FileToApply {
  /** Relative to the skill folder, `/`-separated. */
  path: string;
  status: 'added' | 'changed';
  bytes: Buffer;
  /** The best copy's execute bits (a script): a WorkspaceEdit writes bytes only, so they are set after. */
  execBits?: number;
}

/** Regular files under `root`, relative and `/`-separated; symbolic links are not followed. */
function regularFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((rel) => lstatSync(join(root, rel)).isFile())
    .map((rel) => rel.replace(/\\/g, '/'));
}

/** Refuses a target whose path (below the skill folder) is or passes through a symbolic link. */
export function checkNoLink(skillDir: string, path: string, writer = 'Apply Best'): void {
  const parts = path.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const at = join(skillDir, ...parts.slice(0, i));
    if (!lstatExists(at)) return;
    if (lstatSync(at).isSymbolicLink()) {
      throw new SkillOptError('skill', `${writer} would write ${path} through the symbolic link ${at}`, {
        file: skillDir,
        fix: 'replace the link by the file or folder itself, or apply the best skill to another folder',
      });
    }
  }
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The files of `bestDir` that `skillDir` lacks or holds with other bytes (SKILL.md first). */
export function filesToApply(bestDir: string, skillDir: string): FileToApply[] {
  const out: FileToApply[] = [];
  for (const path of regularFiles(bestDir)) {
    checkNoLink(skillDir, path);
    const to = join(skillDir, ...path.split('/'));
    const from = join(bestDir, ...path.split('/'));
    const bytes = readFileSync(from);
    const exec = statSync(from).mode & 0o111;
    const bits = exec ? { execBits: exec } : {};
    if (!existsSync(to)) out.push({ path, status: 'added', bytes, ...bits });
    else if (!readFileSync(to).equals(bytes)) out.push({ path, status: 'changed', bytes, ...bits });
  }
  return out.sort((a, b) =>
    a.path === SKILL_FILE ? -1 : b.path === SKILL_FILE ? 1 : a.path.localeCompare(b.path),
  );
}

/**
 * After the files are written: a script the best skill holds as executable stays executable in the
 * skill folder (a new `scripts/check.sh` would otherwise be written plain and `./scripts/check.sh` fail).
 */
export function keepExecBits(skillDir: string, files: readonly FileToApply[]): void {
  for (const f of files) {
    if (!f.execBits) continue;
    const to = join(skillDir, ...f.path.split('/'));
    const mode = statSync(to, { throwIfNoEntry: false })?.mode;
    if (mode !== undefined && (mode & f.execBits) !== f.execBits) chmodSync(to, (mode | f.execBits) & 0o7777);
  }
}

/**
 * The skill files (under references/, scripts/, assets/) of `skillDir` that `bestDir` lacks. The loop
 * never deletes a file (an edit changes or adds one), so such a file is one added or left out after
 * the run read the folder: Apply Best keeps it and says so.
 */
export function filesOnlyInSkill(bestDir: string, skillDir: string): string[] {
  const out: string[] = [];
  for (const dir of SKILL_RESOURCE_DIRS) {
    const root = join(skillDir, dir);
    if (!existsSync(root) || !lstatSync(root).isDirectory()) continue;
    for (const rel of regularFiles(root)) {
      const path = `${dir}/${rel}`;
      // Not part of the skill (hidden, a tool's folder): training never read it, so it is not news.
      if (path.split('/').some(isLeftOut)) continue;
      if (!existsSync(join(bestDir, ...path.split('/')))) out.push(path);
    }
  }
  return out.sort();
}
