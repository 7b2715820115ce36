/**
 * One live process per run folder. The lock file appears whole: it is written under a temp name and
 * hard-linked into place, which fails when a lock exists, so two processes starting at once cannot
 * both win and none can read a half-written lock. A lock whose process is gone (same host, dead pid)
 * is stale and taken over, and one held by a live process is refused with its holder named.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import type { z } from 'zod';
import { SkillOptError } from '../errors';
import { writeError } from './ioErrors';
import { RUN_FILE, RunLayout } from './layout';
import { lockSchema } from './runSchemas';

/**
 * A lock file that cannot be read is being written by a process that creates it in two steps (an
 * older SkillOpt) for this long; older than this, it is what a killed process left.
 */
export const UNREADABLE_LOCK_GRACE_MS = 30_000;

type LockInfo = Pick<z.infer<typeof lockSchema>, 'pid' | 'host' | 'started'>;

/** The lock's holder; undefined when the file is missing, half-written or not a lock. */
function readLock(path: string): LockInfo | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = lockSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a live process (on this host) holds the run folder's lock. */
export function runLockHeld(dir: string): boolean {
  const info = readLock(new RunLayout(dir).file(RUN_FILE.lock));
  return !!info && (!info.host || info.host === hostname()) && alive(info.pid);
}

/** Milliseconds since `path` was last written; undefined when it is gone. */
function age(path: string): number | undefined {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Creates the lock file with its whole content, or returns false when a lock file exists. The
 * temp name is one removeStaleTemps (store/atomic.ts) cleans up after a kill.
 */
function createLock(path: string, me: LockInfo): boolean {
  try {
    return linkLock(path, me);
  } catch (err) {
    // A full disk or a read-only folder: a user error naming the file, not a stack trace.
    throw writeError(err, path);
  }
}

function linkLock(path: string, me: LockInfo): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  // Left behind when this write fails (a full disk): removeStaleTemps cleans it at the next start.
  writeFileSync(tmp, JSON.stringify(me), { flag: 'wx' });
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A disk without hard links: create it exclusively and write it (the grace above covers the gap).
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS') {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, JSON.stringify(me));
        closeSync(fd);
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw e;
      }
    }
    // ENOENT: the lock holder's start-up removed our temp file as stale; the caller tries again.
    if (code === 'ENOENT') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** A takeover guard older than this was left by a process killed mid-takeover (which takes ms). */
const TAKEOVER_GUARD_STALE_MS = 10_000;

function sameHolder(a: LockInfo | undefined, b: LockInfo | undefined): boolean {
  return a?.pid === b?.pid && a?.host === b?.host && a?.started === b?.started;
}

/**
 * Removes the stale lock judged by `seen`, under a guard file of its own: processes that all found
 * the same stale lock would otherwise each remove it, and a late one would remove the lock the first
 * had just created, so both would run. Under the guard the lock is read again and removed only when
 * it is still the stale one. A process that does not get the guard waits briefly and tries again.
 */
function takeOverStale(path: string, me: LockInfo, seen: LockInfo | undefined): void {
  const guard = `${path}.takeover`;
  if (!createLock(guard, me)) {
    const since = age(guard);
    if (since !== undefined && since > TAKEOVER_GUARD_STALE_MS) rmSync(guard, { force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    return;
  }
  try {
    if (sameHolder(readLock(path), seen)) rmSync(path, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

/** Take the run folder's lock; returns the release function. */
export function acquireRunLock(dir: string): () => void {
  const path = new RunLayout(dir).file(RUN_FILE.lock);
  const me: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  for (let attempt = 0; attempt < 20; attempt++) {
    if (createLock(path, me)) {
      return () => {
        // Only our own lock is removed (a takeover after a long pause must not be undone).
        if (readLock(path)?.pid === me.pid) rmSync(path, { force: true });
      };
    }
    const holder = readLock(path);
    const since = age(path);
    if (!holder && since !== undefined && since < UNREADABLE_LOCK_GRACE_MS) {
      // Another process is between creating the lock and writing it: it is held, not stale.
      throw new SkillOptError('io', 'this run folder is being taken by another SkillOpt process', {
        file: dir,
        fix: `stop that run first, or use another --out folder; if no other run is starting, delete ${path}`,
      });
    }
    const otherHost = holder?.host && holder.host !== me.host;
    if (holder && (otherHost || alive(holder.pid))) {
      throw new SkillOptError(
        'io',
        `this run folder is in use by another SkillOpt process (pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}, since ${holder.started || 'an unknown time'})`,
        {
          file: dir,
          fix: otherHost
            ? `stop that run, or use another --out folder; if it is no longer running, delete ${path}`
            : 'stop that run first (Ctrl-C in its terminal, or Stop Run in VS Code), or use another --out folder',
        },
      );
    }
    // A stale lock (its process is gone, or the file has stayed unreadable): take it over.
    takeOverStale(path, me, holder);
  }
  throw new SkillOptError('io', 'could not take the run folder lock', { file: path, fix: 'try again' });
}
