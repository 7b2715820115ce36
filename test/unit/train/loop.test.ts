import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/protocol/events';
import { extractSlowUpdate } from '../../../src/engine/skill/document';
import type { RuntimeState, StepBufferEntry, StepRecord } from '../../../src/protocol/records';
import { CallLog, prepareSim, read, readJson, recordRequests, runSim, tempDir } from './helpers';

describe('training loop (sim backend)', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-loop-');
  });
  afterEach(() => dir.cleanup());

  it('runs every stage in order, writes the reference artifacts and improves the skill', async () => {
    const prepared = prepareSim(dir.path, ['train.num_epochs=3']);
    const { outcome, events } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');
    assert.ok(
      outcome.bestScore > outcome.baselineScore,
      `best ${outcome.bestScore} vs baseline ${outcome.baselineScore}`,
    );

    const step1 = events
      .filter(
        (e): e is Extract<EngineEvent, { type: 'stage/started' }> =>
          e.type === 'stage/started' && e.step === 1,
      )
      .map((e) => e.stage);
    assert.deepEqual(step1, ['rollout', 'reflect', 'aggregate', 'select', 'update', 'evaluate']);

    const s1 = join(dir.path, 'steps', 'step_0001');
    for (const f of [
      'rollout/results.jsonl',
      'patches/minibatch_fail_000.json',
      'merged_patch.json',
      'ranked_edits.json',
      'candidate_skill.md',
      'edit_apply_report.json',
      'selection_eval/results.jsonl',
      'trajectory_digest.json',
      'step_record.json',
    ]) {
      assert.ok(existsSync(join(s1, f)), `missing steps/step_0001/${f}`);
    }
    for (const f of [
      'config.json',
      'history.json',
      'runtime_state.json',
      'best_skill.md',
      'summary.json',
      'skills/skill_v0000.md',
    ]) {
      assert.ok(existsSync(join(dir.path, f)), `missing ${f}`);
    }
    for (const f of [
      'test_eval_baseline/summary.json',
      'test_eval/summary.json',
      'test_eval_final/summary.json',
    ]) {
      assert.ok(existsSync(join(dir.path, f)), `missing ${f}`);
    }
    const summary = readJson<Record<string, unknown>>(dir.path, 'summary.json');
    assert.equal(summary.total_steps, 12); // 25 train items, batch 8: 4 steps × 3 epochs
    assert.ok((summary.test_hard as number) > (summary.baseline_test_hard as number));
    const cfg = readJson<Record<string, unknown>>(dir.path, 'config.json');
    assert.equal(cfg.optimizer_backend, 'sim');
    assert.equal(cfg.steps_per_epoch, 4);
  });

  it('scores the test split once for a final skill that is the best skill', async () => {
    const prepared = prepareSim(dir.path, ['train.num_epochs=1', 'optimizer.use_slow_update=false']);
    const calls = new CallLog(prepared);
    await runSim(prepared, undefined, calls);
    assert.equal(read(dir.path, 'best_skill.md'), read(dir.path, 'skills', 'skill_v0004.md'));
    const testCalls = calls.calls.filter((c) => c.phase === 'test').length;
    // The final skill is the best one: scored once. The target alone (no skill) is scored on the
    // test and the selection split in the same stage.
    const noSkill = 18 + prepared.splits.val.length;
    assert.equal(testCalls, 2 * 18 + noSkill, 'initial, best and no skill only');
    assert.deepEqual(
      readJson<unknown>(dir.path, 'test_eval_final', 'summary.json'),
      readJson<unknown>(dir.path, 'test_eval', 'summary.json'),
    );
    assert.ok(existsSync(join(dir.path, 'test_eval_final', 'results.jsonl')));
  });

  it('rejects ties, records the rejected edits in the step buffer, and never touches the protected block', async () => {
    const prepared = prepareSim(dir.path, ['train.num_epochs=3']);
    await runSim(prepared);
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    const ties = history.filter(
      (r) =>
        r.candidate_gate_score !== undefined &&
        r.candidate_gate_score === r.current_score &&
        r.action === 'reject',
    );
    const tieAccepted = history.filter(
      (r, i) =>
        r.action.startsWith('accept') &&
        r.candidate_gate_score === (i > 0 ? history[i - 1].current_score : -1),
    );
    assert.ok(ties.length >= 1, 'expected at least one tied candidate, rejected');
    assert.equal(tieAccepted.length, 0);

    const rejected = history.find((r) => r.action === 'reject')!;
    const digest = readJson<StepBufferEntry>(
      dir.path,
      'steps',
      `step_${String(rejected.step).padStart(4, '0')}`,
      'trajectory_digest.json',
    );
    assert.equal(digest.action, 'reject');
    assert.ok(digest.rejected_edits && digest.rejected_edits.length > 0);
    assert.equal(typeof digest.score_before, 'number');

    // Steps after epoch 1 run on a skill that holds the slow-update block; step edits must leave it alone.
    for (const r of history.filter((h) => h.epoch >= 2 && h.candidate_hash)) {
      const before = read(dir.path, 'skills', `skill_v${String(r.step - 1).padStart(4, '0')}.md`);
      const cand = read(dir.path, 'steps', `step_${String(r.step).padStart(4, '0')}`, 'candidate_skill.md');
      assert.equal(
        extractSlowUpdate(cand),
        extractSlowUpdate(before),
        `step ${r.step} changed the protected block`,
      );
      assert.equal((cand.match(/<!-- SLOW_UPDATE_START -->/g) ?? []).length, 1);
    }
  });

  it('runs the slow update and writes the meta skill at the end of epoch 2', async () => {
    const prepared = prepareSim(dir.path, ['train.num_epochs=3']);
    const seen = recordRequests(prepared);
    await runSim(prepared);
    const slow1 = readJson<{ action: string }>(dir.path, 'slow_update', 'epoch_01', 'slow_result.json');
    assert.equal(slow1.action, 'inject_placeholder');
    const slow2 = readJson<{ action: string; slow_update_content: string; selection_hard: number }>(
      dir.path,
      'slow_update',
      'epoch_02',
      'slow_result.json',
    );
    assert.ok(['accept', 'accept_new_best', 'reject'].includes(slow2.action));
    assert.match(slow2.slow_update_content, /format rule/);
    assert.equal(typeof slow2.selection_hard, 'number');
    assert.ok(existsSync(join(dir.path, 'slow_update', 'epoch_02', 'comparison_pairs.json')));
    const meta1 = readJson<{ action: string }>(dir.path, 'meta_skill', 'epoch_01', 'meta_skill_result.json');
    assert.equal(meta1.action, 'skip_first_epoch');
    const meta2 = readJson<{ action: string; meta_skill_content: string }>(
      dir.path,
      'meta_skill',
      'epoch_02',
      'meta_skill_result.json',
    );
    assert.equal(meta2.action, 'write_meta_skill');
    assert.ok(meta2.meta_skill_content.length > 0);
    const state = readJson<RuntimeState>(dir.path, 'runtime_state.json');
    assert.equal(state.active_meta_skill, meta2.meta_skill_content);
    // The meta skill reaches analysts (and merges) only after it was written.
    const withMeta = seen.filter((r) =>
      r.messages.some((m) => m.content.includes('## Optimizer Meta Skill')),
    );
    assert.ok(withMeta.length > 0, 'no optimizer request carried the meta skill');
    assert.ok(withMeta.every((r) => ['analyst', 'merge', 'ranking', 'lr_autonomous'].includes(r.stage)));
    const firstMeta = seen.indexOf(withMeta[0]);
    assert.ok(
      seen.slice(0, firstMeta).some((r) => r.stage === 'meta_skill'),
      'meta skill used before it was written',
    );
    assert.ok(withMeta[0].messages.some((m) => m.content.includes(meta2.meta_skill_content)));
  });

  for (const mode of ['rewrite_from_suggestions', 'full_rewrite_minibatch'] as const) {
    it(`trains in ${mode} mode`, async () => {
      const prepared = prepareSim(dir.path, [`optimizer.skill_update_mode=${mode}`]);
      const { outcome } = await runSim(prepared);
      assert.equal(outcome.status, 'finished');
      assert.ok(outcome.bestScore > outcome.baselineScore);
      const history = readJson<StepRecord[]>(dir.path, 'history.json');
      const file = mode === 'rewrite_from_suggestions' ? 'rewrite_result.json' : 'full_rewrite_result.json';
      assert.ok(existsSync(join(dir.path, 'steps', 'step_0001', file)));
      if (mode === 'full_rewrite_minibatch') assert.equal(history[0].lr_control_mode, 'none');
      else assert.equal(history[0].lr_control_mode, 'fixed');
      for (const r of history.filter((h) => h.epoch === 2 && h.candidate_hash)) {
        const cand = read(dir.path, 'steps', `step_${String(r.step).padStart(4, '0')}`, 'candidate_skill.md');
        assert.equal(
          (cand.match(/<!-- SLOW_UPDATE_START -->/g) ?? []).length,
          1,
          'rewrite lost or duplicated the block',
        );
      }
    });
  }

  it('stops cleanly at a step boundary when the token budget is reached', async () => {
    const prepared = prepareSim(dir.path, ['limits.max_tokens=15000']);
    const { outcome, events } = await runSim(prepared);
    assert.equal(outcome.status, 'stopped');
    assert.match(outcome.reason ?? '', /token budget/);
    const stopped = events.find((e) => e.type === 'run/stopped');
    assert.ok(stopped);
    const state = readJson<RuntimeState>(dir.path, 'runtime_state.json');
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.equal(state.last_completed_step, history.length);
  });
});
