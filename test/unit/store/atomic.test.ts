import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { makeDir, withParentDir, writeFileAtomic, writeJsonAtomic } from '../../../src/engine/store/atomic';
import { appendJsonl, readJsonl } from '../../../src/engine/store/jsonl';
import { JOURNAL_ROWS } from '../../../src/engine/store/runRows';

describe('run folder writes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-atomic-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates missing folders on the first write and leaves no temp file behind', () => {
    const file = join(dir, 'steps', 'step_0001', 'merged_patch.json');
    writeJsonAtomic(file, { edits: [] });
    writeFileAtomic(file, 'second\n');
    assert.equal(readFileSync(file, 'utf8'), 'second\n');
    assert.deepEqual(readdirSync(join(dir, 'steps', 'step_0001')), ['merged_patch.json']);
  });

  it('makes a folder again when it was deleted after a write', () => {
    const file = join(dir, 'rollout', 'predictions', 'a', 'conversation.json');
    writeJsonAtomic(file, []);
    rmSync(join(dir, 'rollout'), { recursive: true });
    writeJsonAtomic(file, [{ role: 'user' }]);
    assert.equal(readFileSync(file, 'utf8'), '[\n  {\n    "role": "user"\n  }\n]\n');
  });

  it('makes nested folders, accepts one that exists, and refuses a file in the way as a user error', () => {
    const deep = join(dir, 'a', 'b', 'c');
    makeDir(deep);
    makeDir(deep);
    assert.ok(statSync(deep).isDirectory());
    writeFileSync(join(dir, 'file'), 'x');
    for (const path of [join(dir, 'file'), join(dir, 'file', 'under')]) {
      assert.throws(
        () => makeDir(path),
        (err: unknown) =>
          SkillOptError.is(err, 'io') && err.place.file === path && /not a folder/.test(err.message),
      );
    }
  });

  it('refuses a folder where the file system takes none (/proc) instead of hanging', function () {
    // Node's own recursive mkdir loops forever there, so the try runs in a child that is killed
    // if it does not answer: a hang fails the test instead of stopping the suite.
    if (!existsSync('/proc/self')) this.skip();
    this.timeout(60_000);
    const root = join(__dirname, '..', '..', '..');
    const atomic = JSON.stringify(join(root, 'src', 'engine', 'store', 'atomic.ts'));
    const code = `try { require(${atomic}).makeDir('/proc/skillopt-no/run'); } catch (e) { console.log(e.message); }`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    });
    assert.equal(r.signal, null, 'makeDir did not return');
    assert.match(r.stdout, /^\/proc\/skillopt-no(\/run)?: cannot write here: /, r.stderr);
  });

  it('appends JSONL rows into a folder that does not exist yet', () => {
    const file = join(dir, 'optimizer', 'meta_skill_replies.jsonl');
    const row = (key: string) => ({ key, text: key, usage: { promptTokens: 1, completionTokens: 1 } });
    appendJsonl(file, row('a'));
    appendJsonl(file, row('b'));
    assert.deepEqual(readJsonl(file, JOURNAL_ROWS), [row('a'), row('b')]);
  });

  it('passes on errors other than a missing folder, without retrying', () => {
    const target = join(dir, 'a-folder');
    mkdirSync(target);
    let calls = 0;
    assert.throws(
      () =>
        withParentDir(target, () => {
          calls++;
          writeFileSync(target, '');
        }),
      (err: NodeJS.ErrnoException) => err.code === 'EISDIR',
    );
    assert.equal(calls, 1);
  });
});
