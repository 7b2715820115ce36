import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { taskDataDigest } from '../../../src/engine/data/digest';
import {
  checkSameConfig,
  holdsRun,
  refuseOutFolder,
  refuseResumeWithoutRun,
} from '../../../src/engine/train/sameRun';

/** What train refuses about `dir` for a run of `now` over no task data. */
const checkOutFolderConfig = (dir: string, now: Record<string, unknown>): void =>
  refuseOutFolder(dir, now, taskDataDigest({ train: [], selection: [], test: [] }));

describe('train/sameRun: resuming under the config a run was started with', () => {
  it('takes a value stored masked by an older run (minimax_max_tokens "***") as unchanged', () => {
    const saved = { minimax_max_tokens: '***', qwen_chat_max_tokens: '4096', learning_rate: 4 };
    const now = { minimax_max_tokens: '8000', qwen_chat_max_tokens: '4096', learning_rate: 4 };
    assert.deepEqual(checkSameConfig('/run', saved, now), []);
  });

  it('takes a secret masked by an older rule (four and four characters, now "***") as unchanged', () => {
    assert.deepEqual(checkSameConfig('/run', { judge_token: 'abcd...wxyz' }, { judge_token: '***' }), []);
  });

  it('still refuses a change of a value stored in clear, naming it', () => {
    assert.throws(
      () => checkSameConfig('/run', { minimax_max_tokens: '8000' }, { minimax_max_tokens: '4000' }),
      /different config \(minimax_max_tokens: "8000" → "4000"\)/,
    );
  });
});

describe('train/sameRun: validate --out checks the run folder as train would', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'skillopt-samerun-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // A run killed during its baseline has its ledger and config.json, no runtime_state.json; train
  // resumes it and refuses another config there (trainer.ts), so validate must refuse it too.
  it('refuses another config for a run killed before its first save', () => {
    writeFileSync(join(dir, 'ledger.jsonl'), '');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ seed: 42 }));
    assert.throws(() => checkOutFolderConfig(dir, { seed: 7 }), /different config \(seed: 42 → 7\)/);
    assert.doesNotThrow(() => checkOutFolderConfig(dir, { seed: 42 }));
  });

  it("refuses a folder of the person's files with no run in it, as train does", () => {
    writeFileSync(join(dir, 'notes.md'), 'mine');
    assert.throws(
      () => checkOutFolderConfig(dir, { seed: 42 }),
      /the folder holds files but no run \(notes\.md\)/,
    );
  });

  // A run writes its ledger (the session's start) before config.json, so a config.json alone is the
  // person's (`--out .` in a project): not a run --fresh may clear, nor one train may start in.
  it("takes a folder with only the person's config.json for no run", () => {
    writeFileSync(join(dir, 'config.json'), '{}');
    assert.equal(holdsRun(dir), false);
    assert.throws(() => checkOutFolderConfig(dir, {}), /the folder holds files but no run \(config\.json\)/);
    assert.throws(() => refuseResumeWithoutRun(dir), /there is no run to resume in this folder/);
    writeFileSync(join(dir, 'ledger.jsonl'), '');
    assert.equal(holdsRun(dir), true);
  });

  // `train --out` an evaluation's folder: its ledger made it a run killed early, so the training
  // run's files went in beside the evaluation's (and --fresh would have deleted the evaluation).
  it("takes an evaluation's folder for no run, and refuses training into it, naming the evaluation", () => {
    writeFileSync(join(dir, 'ledger.jsonl'), '');
    writeFileSync(join(dir, 'eval_identity.json'), '{}');
    assert.equal(holdsRun(dir), false);
    assert.throws(
      () => checkOutFolderConfig(dir, {}),
      /holds an evaluation \(eval_identity\.json\), not a training run.*Fix: give --out a new or empty folder/,
    );
    assert.throws(() => refuseResumeWithoutRun(dir), /there is no run to resume in this folder/);
  });
});
