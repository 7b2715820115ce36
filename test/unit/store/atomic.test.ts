import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withParentDir, writeFileAtomic, writeJsonAtomic } from '../../../src/engine/store/atomic';
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
