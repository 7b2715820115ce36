import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { SkillOptError } from '../errors';
import { writeError } from './ioErrors';

/**
 * Write a file so that readers (and a resumed run after a crash) see either the old content or
 * the new one, never a torn write: temp file in the same directory, then rename.
 */
export function writeFileAtomic(path: string, data: string): void {
  const tmp = tempNameOf(path);
  try {
    // `wx`: never through a link planted at the temp name; the rename replaces a link at `path` itself.
    withParentDir(path, () => writeFileSync(tmp, data, { encoding: 'utf8', flag: 'wx' }));
    // The rename would replace a link at `path` itself: one leading out of the run folder is refused.
    if (containedRoots.size && lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
      checkInsideRun(path);
    }
    renameSync(tmp, path);
  } catch (err) {
    // A path through a file (ENOTDIR) cannot hold the temp file either: nothing to remove then.
    try {
      rmSync(tmp, { force: true });
    } catch {
      // The write's own error is the one to report.
    }
    throw writeError(err, path);
  }
}

/** The temp names writeFileAtomic uses: `<file>.<pid>.<8 hex>.tmp`. */
const TEMP_NAME = /\.\d+\.[0-9a-f]{8}\.tmp$/;

/** Whether a file name is one of writeFileAtomic's temp names. */
export const isTempName = (name: string): boolean => TEMP_NAME.test(name);

/** Starts anywhere: a killed process with a reused pid may have left its temp names behind. */
let tempCount = Math.floor(Math.random() * 0x1_0000_0000);

/**
 * A temp name no other write uses: the pid tells processes apart and a counter the writes of one
 * (random bytes per write cost a syscall's worth per reply on a step's busiest path).
 */
export function tempNameOf(path: string): string {
  tempCount = (tempCount + 1) % 0x1_0000_0000;
  return `${path}.${process.pid}.${tempCount.toString(16).padStart(8, '0')}.tmp`;
}

/**
 * Removes the temp files a killed process left in `root` (only our own temp names; symbolic links
 * are neither followed nor removed). Returns how many were removed. Call it holding the run lock.
 */
export function removeStaleTemps(root: string): number {
  let removed = 0;
  const visit = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isFile() && TEMP_NAME.test(e.name)) {
        rmSync(p, { force: true });
        removed++;
      }
    }
  };
  if (existsSync(root)) visit(root);
  return removed;
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + '\n');
}

/**
 * `mkdirSync(dir, { recursive: true })` one level at a time: Node's recursive mkdir loops forever
 * where a folder exists but refuses new entries with ENOENT (`/proc/x`), so an `--out` there hung.
 */
export function mkdirs(dir: string): void {
  const missing: string[] = [];
  let at = resolve(dir);
  while (!present(at) && dirname(at) !== at) {
    missing.push(at);
    at = dirname(at);
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      // Made meanwhile by another writer (a parallel reply's write): fine if it is a folder.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(d).isDirectory()) throw err;
    }
  }
  if (!statSync(dir).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR' });
  }
}

/** Makes a folder (and its parents), with a file-system refusal as a user error naming it. */
export function makeDir(dir: string): void {
  try {
    mkdirs(dir);
  } catch (err) {
    throw writeError(err, dir);
  }
}

/** Folders this process has made or seen made; bounded, since the engine process lives long. */
const knownDirs = new Set<string>();

/**
 * A path with every link resolved, by the system's realpath(3): one call where Node's own walks each
 * component with lstat (half the time per check here), and every run-folder write and append checks
 * one (checkInsideRun). Roots and the paths checked against them resolve the same way.
 */
const realOf = (path: string): string => realpathSync.native(path);

/** Run folders being written (resolved path → real path): writes under one must stay inside it. */
const containedRoots = new Map<string, string>();

/**
 * From now until the returned function is called, a write under `root` whose folder leads out of
 * `root` through a symbolic link (one planted in a run folder, say) is refused instead of made.
 */
export function containWrites(root: string): () => void {
  const key = resolve(root);
  containedRoots.set(key, realOf(key));
  // Folders seen before may have been replaced by links since.
  knownDirs.clear();
  return () => {
    containedRoots.delete(key);
  };
}

/** Whether `path` is `root` or under it (both resolved; no links followed). */
export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Whether `path` exists, a symbolic link (even a dangling one) included. */
const present = (path: string): boolean => lstatSync(path, { throwIfNoEntry: false }) !== undefined;

/**
 * Refuses `path` (a file or folder) when it is under a contained root but its existing part
 * resolves outside it: a run-folder file is never read, written or replaced through a symbolic link
 * that leads out of the run folder. Nothing to check outside a contained run folder.
 */
export function checkInsideRun(path: string): void {
  const abs = resolve(path);
  for (const [root, real] of containedRoots) {
    if (!isInside(abs, root)) continue;
    let existing = abs;
    while (!present(existing) && existing !== root) existing = dirname(existing);
    let target: string;
    try {
      target = realOf(existing);
    } catch {
      target = '';
    }
    if (!isInside(target, real)) {
      throw new SkillOptError('io', `${existing} leads out of the run folder (a symbolic link)`, {
        file: root,
        // Not "delete the link": the ledger behind it is the run's record of what it paid.
        fix: `move what the link ${existing} points to into its place (a run keeps its files inside its folder), or train into another --out folder`,
      });
    }
  }
}

function ensureDir(dir: string): void {
  if (knownDirs.has(dir)) return;
  checkInsideRun(dir);
  mkdirs(dir);
  if (knownDirs.size > 10_000) knownDirs.clear();
  knownDirs.add(dir);
}

/**
 * Makes folders that writes are about to need, while nothing waits (a stage's prediction folders
 * while its requests are in flight), so that a reply's write does not make its folder on the step's
 * critical path. Best effort: a folder that cannot be made is reported by the write that needs it.
 */
export function prepareDirs(dirs: Iterable<string>): void {
  for (const dir of dirs) {
    try {
      ensureDir(dir);
    } catch {
      return;
    }
  }
}

/**
 * Runs a write into `path`'s folder, making the folder once per process rather than before every
 * write (a step writes hundreds of files). A folder deleted behind our back is made again.
 */
export function withParentDir<T>(path: string, write: () => T): T {
  const dir = dirname(path);
  ensureDir(dir);
  try {
    return write();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    knownDirs.delete(dir);
    ensureDir(dir);
    return write();
  }
}
