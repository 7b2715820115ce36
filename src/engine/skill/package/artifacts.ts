/**
 * Skill files of a run folder (snapshots, best skill, candidates) for package runs: the `.md` file
 * keeps SKILL.md, as for a single-file run, and the folder beside it (store/layout.ts
 * `packageDirOf`) holds the whole package. A single-file skill writes and reads the `.md` alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SkillOptError } from '../../errors';
import { packageDirOf } from '../../store/layout';
import { checkInsideRun, writeFileAtomic } from '../../store/atomic';
import { readSkillInit } from '../skillFile';
import { isSkillFolder, packageFolderOnDisk, readRunPackage, writePackageFolder } from './folder';
import { isPackageText, skillBody, withFilesOf } from './text';

export function writeSkillArtifact(file: string, text: string): void {
  if (isPackageText(text)) writePackageFolder(packageDirOf(file), text);
  writeFileAtomic(file, skillBody(text));
}

/** The text written by writeSkillArtifact; the `.md` file's text is SKILL.md (a person may have edited it). */
export function readSkillArtifact(file: string): string {
  checkInsideRun(file);
  return withPackageBeside(file, readRunSkillFile(file));
}

/** A skill the run saved and needs back: gone or unreadable is one message naming it, not a trace. */
function readRunSkillFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!code) throw err;
    const what = code === 'ENOENT' ? 'is missing' : `cannot be read (${code})`;
    throw new SkillOptError(
      'io',
      `${what}: the run saved this skill and reads it back to go on`,
      {
        file,
        fix: 'restore the file (from a backup, or a copy of the same run), or start the run afresh with --fresh',
      },
      { cause: err },
    );
  }
}

/** `body` (the text of `file`) with the other files of the package folder beside it, if there is one. */
export function withPackageBeside(file: string, body: string): string {
  // Only a `.md` file has a folder beside it: `skill.txt` would be taken for its own folder.
  const beside = packageDirOf(file);
  const dir = beside === file ? undefined : packageFolderOnDisk(beside);
  return dir ? withFilesOf(readRunPackage(dir), body) : body;
}

/** `readSkillArtifact`, or undefined when the file is not there. */
export function readSkillArtifactIfAny(file: string): string | undefined {
  return existsSync(file) ? readSkillArtifact(file) : undefined;
}

/**
 * The skill `skillopt eval` and the extension's Evaluate score: a skill folder, or a skill file with
 * the package folder of a run beside it (`best_skill.md` and `best_skill/`), whole; else the file.
 */
export function readSkillToScore(path: string, readFile: (path: string) => string): string {
  if (isSkillFolder(path)) return readSkillInit(path, Number.MAX_SAFE_INTEGER).text;
  return withPackageBeside(path, readFile(path));
}
