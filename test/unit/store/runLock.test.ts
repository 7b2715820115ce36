import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_FILE } from '../../../src/engine/store/layout';
import { acquireRunLock, UNREADABLE_LOCK_GRACE_MS } from '../../../src/engine/store/runLock';
import { tempDir } from '../train/helpers';

describe('run folder lock', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-lock-');
  });
  afterEach(() => dir.cleanup());

  const lock = (): string => join(dir.path, RUN_FILE.lock);

  it('appears whole: the lock file names its holder the moment it exists, and no temp file stays', () => {
    const release = acquireRunLock(dir.path);
    try {
      const info = JSON.parse(readFileSync(lock(), 'utf8')) as { pid: number };
      assert.equal(info.pid, process.pid);
      assert.deepEqual(readdirSync(dir.path), [RUN_FILE.lock]);
      assert.throws(() => acquireRunLock(dir.path), /in use by another SkillOpt process \(pid \d+/);
    } finally {
      release();
    }
    assert.ok(!existsSync(lock()));
  });

  it('treats a lock file still being written (empty, just made) as held, not stale', () => {
    // What a process that creates the file and writes it afterwards leaves for a moment.
    writeFileSync(lock(), '');
    assert.throws(() => acquireRunLock(dir.path), /being taken by another SkillOpt process/);
    assert.equal(readFileSync(lock(), 'utf8'), '', 'the other process’s lock was taken over');
  });

  it('takes over an unreadable lock once it is older than a start-up takes', () => {
    writeFileSync(lock(), '');
    const old = (Date.now() - UNREADABLE_LOCK_GRACE_MS - 5_000) / 1000;
    utimesSync(lock(), old, old);
    const release = acquireRunLock(dir.path);
    assert.equal((JSON.parse(readFileSync(lock(), 'utf8')) as { pid: number }).pid, process.pid);
    release();
  });

  it('takes over a lock whose process is gone', () => {
    writeFileSync(lock(), JSON.stringify({ pid: 2 ** 22 + 12345, host: '', started: '' }));
    const release = acquireRunLock(dir.path);
    assert.equal((JSON.parse(readFileSync(lock(), 'utf8')) as { pid: number }).pid, process.pid);
    release();
  });
});
