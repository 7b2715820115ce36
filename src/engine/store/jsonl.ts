import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import type { z } from 'zod';
import { SkillOptError } from '../errors';
import { checkInsideRun, withParentDir, writeFileAtomic } from './atomic';
import { writeError } from './ioErrors';
import type { JsonlFile } from './runRows';
import { describeIssue } from './runSchemas';

/**
 * The rows of a JSONL run file (runRows.ts names each file's schema); none when it does not exist.
 * A row that does not fit the schema is an error naming the file and line. A line that is not JSON
 * (a crash cut the write short) is dropped or refused as `file.torn` says; with `repair` (only the
 * file's writer, before it appends) a dropped line is also removed from the file, so that the
 * appends go on in a clean file. Readers beside a running writer leave the file as it is.
 */
export function readJsonl<S extends z.ZodType>(
  path: string,
  file: JsonlFile<S>,
  opts: { repair?: boolean } = {},
): Array<z.infer<S>> {
  checkInsideRun(path);
  if (!existsSync(path)) return [];
  const rows: Array<z.infer<S>> = [];
  const kept: string[] = [];
  let torn = false;
  for (const [i, line] of readFileSync(path, 'utf8').split('\n').entries()) {
    if (!line.trim()) continue;
    const where = { file: path, line: i + 1, fix: file.fix };
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      if (file.torn === 'refuse') {
        throw new SkillOptError(
          'io',
          `is not a ${file.row}: not JSON (cut short by a crash, or edited)`,
          where,
        );
      }
      torn = true;
      continue;
    }
    const parsed = file.schema.safeParse(raw);
    if (!parsed.success) {
      throw new SkillOptError(
        'io',
        `is not a ${file.row} this version can read (${describeIssue(parsed.error)})`,
        where,
      );
    }
    rows.push(parsed.data);
    kept.push(line);
  }
  if (torn && opts.repair) writeFileAtomic(path, kept.map((l) => l + '\n').join(''));
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
      let before: number | undefined;
      try {
        before = fstatSync(fd).size;
        const bytes = Buffer.from(line);
        if (writeSync(fd, bytes) < bytes.length) {
          throw Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC' });
        }
      } catch (err) {
        // A row cut short (a full disk writes what fits) would leave a file its reader refuses: the
        // file goes back to its last whole row.
        if (before !== undefined) ftruncateSync(fd, before);
        throw err;
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
