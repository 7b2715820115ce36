import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RUN_FILE } from '../../../src/engine/store/layout';
import { acquireRunLock, UNREADABLE_LOCK_GRACE_MS } from '../../../src/engine/store/runLock';
import { tempDir } from '../train/helpers';

const execFileAsync = promisify(execFile);

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

  it('lets exactly one of several processes racing for the same stale lock take it over', async function () {
    this.timeout(60_000);
    const stale = JSON.stringify({ pid: 2 ** 22 + 12345, host: '', started: '' });
    const lockModule = join(__dirname, '../../../src/engine/store/runLock.ts');
    // Each process waits for the same instant, then tries to take the lock and says it has tried;
    // the winner holds the lock until all have tried (a process that starts late on a loaded machine
    // must still meet it held, not find it released and win a second time).
    const script = `
      const { acquireRunLock } = require(${JSON.stringify(lockModule)});
      const { mkdirSync, readdirSync, writeFileSync } = require('node:fs');
      const { join } = require('node:path');
      const [, folder, atArg, tried, countArg] = process.argv;
      const at = Number(atArg);
      while (Date.now() < at) {}
      let release;
      try {
        release = acquireRunLock(folder);
        console.log('won');
      } catch (err) {
        console.log('refused: ' + err.message);
      }
      mkdirSync(tried, { recursive: true });
      writeFileSync(join(tried, String(process.pid)), '');
      if (release) {
        const until = Date.now() + 30000;
        const wait = () =>
          readdirSync(tried).length >= Number(countArg) || Date.now() > until ? release() : setTimeout(wait, 20);
        wait();
      }`;
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round++) {
      writeFileSync(lock(), stale);
      const at = Date.now() + 2500;
      const tried = join(dir.path, `tried-${round}`);
      const runs = Array.from({ length: 6 }, () =>
        execFileAsync(process.execPath, ['--import', 'tsx', '-e', script, dir.path, String(at), tried, '6']),
      );
      const lines = (await Promise.all(runs)).map((r) => r.stdout.trim());
      assert.equal(lines.filter((l) => l === 'won').length, 1, lines.join('\n'));
      outcomes.push(...lines);
      assert.ok(!existsSync(lock()), 'the winner released its lock');
    }
    const refusals = outcomes.filter((l) => l !== 'won');
    assert.equal(refusals.length, 20);
    for (const l of refusals) assert.match(l, /^refused: .*this run folder is (in use|being taken)/);
    assert.ok(!existsSync(`${lock()}.takeover`), 'no takeover guard is left behind');
  });
});
