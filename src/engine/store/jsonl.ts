import { closeSync, constants, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { SkillOptError } from '../errors';
import { checkInsideRun, withParentDir, writeFileAtomic } from './atomic';
import { writeError } from './ioErrors';

/**
 * Read a JSONL file written line by line. A crash can leave a torn last line; it is dropped (and
 * the file rewritten without it) so a resumed run appends to a clean file.
 */
export function readJsonlTolerant<T>(path: string): T[] {
  checkInsideRun(path);
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  const rows: T[] = [];
  let torn = false;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      rows.push(JSON.parse(line) as T);
    } catch {
      torn = true;
    }
  }
  if (torn) writeFileAtomic(path, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  return rows;
}

/** Append, create, and never through a symbolic link at `path` (0 where the platform has no such flag). */
const APPEND_NO_FOLLOW =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0);

export function appendJsonl(path: string, row: unknown): void {
  const line = JSON.stringify(row) + '\n';
  checkInsideRun(path);
  try {
    withParentDir(path, () => {
      const fd = openSync(path, APPEND_NO_FOLLOW, 0o666);
      try {
        writeSync(fd, line);
      } finally {
        closeSync(fd);
      }
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOOP') throw writeError(err, path);
    throw new SkillOptError('io', 'is a symbolic link; SkillOpt does not append through links', {
      file: path,
      fix: 'move the file it points to into its place (mv), or train into another --out folder',
    });
  }
}
