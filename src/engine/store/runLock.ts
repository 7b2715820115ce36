/**
 * One live process per run folder. The lock file is created exclusively (O_EXCL), so two processes
 * starting at once cannot both win; a lock whose process is gone (same host, dead pid) is stale and
 * taken over, and one held by a live process is refused with its holder named.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { SkillOptError } from '../errors';
import { RUN_FILE, RunLayout } from './layout';

interface LockInfo {
  pid: number;
  host: string;
  started: string;
}

function readLock(path: string): LockInfo | undefined {
  try {
    const raw = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    return typeof raw.pid === 'number'
      ? { pid: raw.pid, host: raw.host ?? '', started: raw.started ?? '' }
      : undefined;
  } catch {
    return undefined;
  }
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

/** Take the run folder's lock; returns the release function. */
export function acquireRunLock(dir: string): () => void {
  const path = new RunLayout(dir).file(RUN_FILE.lock);
  const me: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      return () => {
        // Only our own lock is removed (a takeover after a long pause must not be undone).
        if (readLock(path)?.pid === me.pid) rmSync(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLock(path);
    const otherHost = holder?.host && holder.host !== me.host;
    if (holder && (otherHost || alive(holder.pid))) {
      throw new SkillOptError(
        'io',
        `this run folder is in use by another SkillOpt process (pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}, since ${holder.started || 'an unknown time'})`,
        {
          file: dir,
          fix: otherHost
            ? `stop that run, or train into another --out folder; if it is no longer running, delete ${path}`
            : 'stop that run first (Ctrl-C in its terminal, or Stop Run in VS Code), or train into another --out folder',
        },
      );
    }
    // A stale lock (its process is gone, or the file is unreadable): take it over.
    rmSync(path, { force: true });
  }
  throw new SkillOptError('io', 'could not take the run folder lock', { file: path, fix: 'try again' });
}
