import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVAL_FILE, RUN_FILE } from '../../../src/engine/store/layout';
import { acquireRunLock } from '../../../src/engine/store/runLock';
import { readRunFolder } from '../../../src/engine/store/runReader';
import {
  cancelOutcomeMessages,
  confirmCancelText,
  earlierEvaluationCancelled,
} from '../../../src/extension/commands/cancelBatchText';
import { Commands, TreeItemContext } from '../../../src/extension/constants';
import type { RunView } from '../../../src/extension/runs/liveState';
import { runNode } from '../../../src/extension/runs/treeNodes';
import type { CancelledBatchInfo } from '../../../src/protocol/engine';
import { menuOf } from './menus';

const root = join(__dirname, '..', '..', '..');
const pythonRun = join(root, 'test', 'fixtures', 'skillopt-python-run');

describe('extension: Cancel Provider Batch (tree rows, menus, words)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-cancel-row-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A copy of the fixture run, stopped (no summary), with `provider_batch.json` in `folders`. */
  function stoppedRun(folders: string[], finished = false): string {
    const run = join(dir, 'run');
    cpSync(pythonRun, run, { recursive: true });
    if (!finished) rmSync(join(run, RUN_FILE.summary));
    for (const f of folders) {
      mkdirSync(join(run, f), { recursive: true });
      writeFileSync(join(run, f, EVAL_FILE.batch), '{}');
    }
    return run;
  }

  it('marks a stopped run whose folder records a batch, and offers the command there only', () => {
    const plain = readRunFolder(stoppedRun([]));
    assert.equal(plain.batches, undefined);
    assert.equal(runNode(plain).contextValue, 'skillopt.run.resumable');
    rmSync(join(dir, 'run'), { recursive: true });

    // The run's eval_only/ evaluations are `skillopt eval --cancel-batch`'s, not counted here.
    const run: RunView = readRunFolder(
      stoppedRun(['test_eval', 'test_eval_no_skill', 'eval_only/best_test']),
    );
    assert.equal(run.batches, 2);
    const node = runNode(run);
    assert.equal(node.contextValue, 'skillopt.run.resumable.batch');
    assert.match(
      String(node.tooltip),
      /2 provider batches are recorded in this run: Resume collects them; Cancel Provider Batch cancels them/,
    );
    const withBatch = menuOf(node.contextValue);
    assert.ok(withBatch.includes(Commands.cancelProviderBatch), withBatch.join());
    // The other commands of a stopped run stay on the row.
    assert.deepEqual(
      withBatch.filter((c) => c !== Commands.cancelProviderBatch),
      menuOf('skillopt.run.resumable'),
    );
    assert.ok(!menuOf('skillopt.run.resumable').includes(Commands.cancelProviderBatch));
    assert.ok(menuOf('skillopt.run.finished.batch').includes(Commands.applyBestSkill));
    assert.ok(menuOf('skillopt.run.batch').includes(Commands.cancelProviderBatch));
    for (const live of [TreeItemContext.runLive, TreeItemContext.runWaiting, TreeItemContext.runOther])
      assert.ok(!menuOf(live).includes(Commands.cancelProviderBatch), live);
  });

  it('does not count a batch whose evaluation has a result for every item (collected, nothing left at the provider)', () => {
    // A finished run whose test evaluations went as batches keeps their provider_batch.json files.
    const run = stoppedRun([], true);
    const batch = (folder: string, ids: string[], answered: string[]): void => {
      mkdirSync(join(run, folder), { recursive: true });
      const items = Object.fromEntries(ids.map((id, n) => [`item-${n}-abc`, id]));
      const state = {
        provider: 'openai',
        model: 'm',
        stage: 'test',
        batch_id: `batch_${folder}`,
        submitted_at: '2026-11-25T00:00:00.000Z',
        items,
        item_sha256: {},
      };
      writeFileSync(join(run, folder, EVAL_FILE.batch), JSON.stringify(state));
      const rows = answered.map((id) => JSON.stringify({ id, hard: 1, soft: 1 }) + '\n').join('');
      writeFileSync(join(run, folder, EVAL_FILE.results), rows);
    };
    batch('test_eval', ['a', 'b'], ['b', 'a']);
    batch('test_eval_final', ['a', 'b'], ['a', 'b']);
    const finished = readRunFolder(run);
    assert.equal(finished.status, 'finished');
    assert.equal(finished.batches, undefined);
    assert.equal(runNode(finished).contextValue, 'skillopt.run.finished');
    assert.doesNotMatch(String(runNode(finished).tooltip), /provider batch/);
    // One item still unanswered: that batch is outstanding (running, cancelled or lost).
    batch('test_eval_baseline', ['a', 'b'], ['a']);
    assert.equal(readRunFolder(run).batches, 1);
  });

  it('does not mark a run another process holds (its batch is in use)', () => {
    const dirRun = stoppedRun(['test_eval']);
    const release = acquireRunLock(dirRun);
    try {
      const run = readRunFolder(dirRun);
      assert.equal(run.status, 'running');
      assert.equal(run.batches, undefined);
      assert.equal(runNode(run).contextValue, 'skillopt.run');
    } finally {
      release();
    }
  });

  it('says what the cancel costs, then one message per outcome in plain words', () => {
    const confirm = confirmCancelText('hs_1', 1);
    assert.equal(confirm.message, 'Cancel the provider batch of hs_1?');
    assert.match(confirm.detail, /answered before the cancel is billed by the provider/);
    assert.match(
      confirm.detail,
      /Resume Run then collects those answers.*asks the rest one by one at list price/,
    );

    const b = (
      outcome: CancelledBatchInfo['outcome'],
      extra: Partial<CancelledBatchInfo> = {},
    ): CancelledBatchInfo => ({
      outcome,
      provider: 'openai',
      stage: 'test',
      file: '/r/test_eval/provider_batch.json',
      batchId: 'batch_1',
      ...extra,
    });
    const status = (done: number, detail = 'cancelled') => ({ detail, total: 10, done, failed: 0 });
    const msgs = cancelOutcomeMessages('hs_1', {
      outDir: '/r',
      batches: [
        b('cancelled', { status: status(3) }),
        b('cancelled', {
          batchId: 'batch_2',
          stage: 'selection',
          file: '/r/steps/step_0003/selection_eval/provider_batch.json',
          status: status(4),
        }),
        b('ended', {
          batchId: 'batch_3',
          file: '/r/test_eval_baseline/provider_batch.json',
          status: status(10, 'completed'),
        }),
        b('no_id', {
          batchId: undefined,
          provider: 'anthropic',
          file: '/r/test_eval_no_skill/provider_batch.json',
        }),
        b('other_provider', {
          provider: 'anthropic',
          batchId: 'msgbatch_9',
          file: '/r/test_eval_final/provider_batch.json',
        }),
      ],
    });
    assert.deepEqual(
      msgs.map((m) => [m.severity, m.text]),
      [
        [
          'info',
          "SkillOpt: cancelled the openai batch batch_1 of the best skill's test evaluation (3 of 10 answered) and the openai batch batch_2 of a selection evaluation (4 of 10 answered) in hs_1. The provider bills what was answered; Resume Run collects it and asks the other 13 one by one at list price.",
        ],
        [
          'info',
          "SkillOpt: nothing to cancel: the openai batch batch_3 of the initial skill's test evaluation (completed, 10 of 10 answered) in hs_1 has already ended. Resume Run collects it.",
        ],
        [
          'warning',
          "SkillOpt: cannot cancel the anthropic batch of the no-skill test evaluation in hs_1: the run stopped before its id was written. Resume Run finds and collects it; to cancel now, use the provider's console.",
        ],
        [
          'warning',
          "SkillOpt: not cancelled: the anthropic batch msgbatch_9 of the final skill's test evaluation in hs_1 went through another provider than this config's target. Cancel it with the config that sent it, or in the provider's console.",
        ],
      ],
    );
    assert.deepEqual(cancelOutcomeMessages('hs_1', { outDir: '/r', batches: [] }), [
      { severity: 'info', text: 'SkillOpt: hs_1 records no provider batch: nothing to cancel.' },
    ]);
  });

  it("says what cancelling an earlier evaluation's batch did, and starts no new one while a batch may still answer", () => {
    const evalBatch = (outcome: CancelledBatchInfo['outcome'], extra: Partial<CancelledBatchInfo> = {}) => ({
      outcome,
      provider: 'openai',
      stage: 'eval',
      file: '/e/provider_batch.json',
      batchId: 'batch_7',
      status: { detail: 'cancelled', total: 12, done: 5, failed: 0 },
      ...extra,
    });
    const folder = '.skillopt/evals/SKILL_test_1';
    assert.deepEqual(
      earlierEvaluationCancelled({ outDir: '/e', batches: [evalBatch('cancelled')] }, folder),
      {
        severity: 'info',
        startNew: true,
        text: 'SkillOpt: cancelled the openai batch batch_7 of the evaluation (5 of 12 answered, billed by the provider); starting a new evaluation.',
      },
    );
    const ended = earlierEvaluationCancelled(
      {
        outDir: '/e',
        batches: [evalBatch('ended', { status: { detail: 'completed', total: 12, done: 12, failed: 0 } })],
      },
      folder,
    );
    assert.equal(ended.startNew, true);
    assert.match(
      ended.text,
      /had already ended \(12 of 12 answered; its answers stay in \.skillopt\/evals\/SKILL_test_1\)/,
    );
    const stuck = earlierEvaluationCancelled(
      { outDir: '/e', batches: [evalBatch('no_id', { batchId: undefined, status: undefined })] },
      folder,
    );
    assert.equal(stuck.severity, 'warning');
    assert.equal(stuck.startNew, false);
    assert.match(
      stuck.text,
      /could not cancel the openai batch of the evaluation .*before the batch id was written\. No new evaluation was started/,
    );
  });
});
