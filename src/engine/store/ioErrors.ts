/**
 * File-system failures as user errors: a full disk, a read-only or foreign folder is the person's to
 * fix, so it becomes one message naming the path and what to do, never a stack trace.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { SkillOptError } from '../errors';

/** What each errno means for a write, and what to do about it. */
const WRITE_ERRORS: Record<string, { problem: string; fix: string }> = {
  ENOSPC: {
    problem: 'the disk is full',
    fix: 'free some space on that disk (or write the run to another one with --out), then resume',
  },
  EDQUOT: {
    problem: 'the disk quota is used up',
    fix: 'free some space (or write the run elsewhere with --out), then resume',
  },
  EROFS: {
    problem: 'the folder is on a read-only file system',
    fix: 'choose a writable folder with --out (or env.out_root)',
  },
  EACCES: {
    problem: 'permission denied',
    fix: 'choose a folder you can write to with --out (or env.out_root), or change its permissions',
  },
  EPERM: {
    problem: 'the operation is not permitted',
    fix: 'choose a folder you can write to with --out (or env.out_root)',
  },
  ENOTDIR: {
    problem: 'a part of the path is a file, not a folder',
    fix: 'choose another --out folder, or move that file away',
  },
  EISDIR: {
    problem: 'a folder is in the way of a file',
    fix: 'remove that folder, or choose another --out folder',
  },
  ENAMETOOLONG: { problem: 'the path is too long for the file system', fix: 'choose a shorter --out folder' },
  EMFILE: { problem: 'too many files are open', fix: 'raise the open-file limit (ulimit -n), then resume' },
};

/** The errno of a write that failed on a missing parent: recursive mkdir says ENOENT on a read-only disk. */
function probeMissing(path: string): string | undefined {
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

/** `err` from writing `path` as a SkillOptError when it is a file-system failure; otherwise `err` itself. */
export function writeError(err: unknown, path: string): unknown {
  if (SkillOptError.is(err)) return err;
  let code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return err;
  if (code === 'ENOENT') code = probeMissing(path) ?? code;
  const known = WRITE_ERRORS[code];
  const { problem, fix } = known ?? {
    problem: `the file system refused (${code})`,
    fix: 'check that the folder exists and is writable, or choose another --out folder',
  };
  return new SkillOptError('io', `cannot write here: ${problem}`, { file: path, fix }, { cause: err });
}
