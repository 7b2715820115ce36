import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RunLayout, STEP_DIR } from '../../../src/engine/store/layout';
import type { RolloutResult, StepRecord } from '../../../src/protocol/records';
import { earlyStopWatch } from '../../../src/engine/train/earlyStop';
import { comparableHistory, prepareSim, prepareSimCached, readJson, runSim, tempDir } from './helpers';

/** What the gate decided at each step: the fields later steps and the final skill depend on. */
function decisions(outDir: string): Array<Partial<StepRecord>> {
  return comparableHistory(outDir).map((r) => ({
    step: r.step,
    action: r.action,
    current_score: r.current_score,
    best_score: r.best_score,
    best_step: r.best_step,
    candidate_hash: r.candidate_hash,
  }));
}

interface Summary {
  best_selection_hard: number;
  best_step: number;
  speed?: {
    selection_calls_saved?: number;
    speculative_calls?: number;
    speculative_calls_discarded?: number;
  };
}

/** The speed options change when calls are made, never what the run decides (issue 15). */
describe('speed options keep every decision', function () {
  this.timeout(120_000);
  // Three steps per epoch so a rejected step is followed by one in the same epoch.
  const shape = ['train.batch_size=4', 'train.num_epochs=2'];
  let plain: ReturnType<typeof tempDir>;
  before(async () => {
    plain = tempDir('skillopt-speed-plain-');
    const run = await runSim(prepareSim(plain.path, shape));
    assert.equal(run.outcome.status, 'finished');
  });
  after(() => plain.cleanup());

  it('speed.speculate: the same history, speculative calls counted and the discarded ones reported', async () => {
    const dir = tempDir('skillopt-speed-spec-');
    try {
      const run = await runSim(prepareSim(dir.path, [...shape, 'speed.speculate=true']));
      assert.equal(run.outcome.status, 'finished');
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(plain.path));
      const s = readJson<Summary>(dir.path, 'summary.json');
      const actions = comparableHistory(plain.path).map((r) => r.action);
      assert.ok(actions.includes('reject'), `the workload needs a rejected step: ${actions.join(', ')}`);
      assert.ok((s.speed?.speculative_calls ?? 0) > 0, JSON.stringify(s.speed));
      // Adopted rollouts are not extra: fewer discarded than made when some step was rejected.
      assert.ok((s.speed?.speculative_calls_discarded ?? 0) < s.speed!.speculative_calls!);
      assert.equal(readJson<Summary>(plain.path, 'summary.json').speed, undefined);
    } finally {
      dir.cleanup();
    }
  });

  it('speed.speculate with the response cache: a run stopped while a speculative rollout is out resumes to the same history', async () => {
    const dir = tempDir('skillopt-speed-spec-stop-');
    const cache = tempDir('skillopt-speed-spec-cache-');
    try {
      const options = [...shape, 'speed.speculate=true'];
      // The gate of step 2 starts beside step 3's speculative rollout: stop right there.
      const first = await runSim(
        prepareSimCached(dir.path, cache.path, options),
        (e) => e.type === 'stage/started' && e.stage === 'evaluate' && e.step === 2,
      );
      assert.equal(first.outcome.status, 'stopped');
      const out = new RunLayout(dir.path);
      assert.ok(
        existsSync(join(out.stepDir(2), STEP_DIR.speculativeRollout)),
        'no speculative rollout was out',
      );
      const second = await runSim(prepareSimCached(dir.path, cache.path, options));
      assert.equal(second.outcome.status, 'finished');
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(plain.path));
    } finally {
      dir.cleanup();
      cache.cleanup();
    }
  });

  it('evaluation.early_stop: the same decisions and best skill, selection calls saved reported', async () => {
    const dir = tempDir('skillopt-speed-early-');
    try {
      // One item at a time, so a verdict settled early leaves items unsent.
      const run = await runSim(
        prepareSim(dir.path, [...shape, 'evaluation.early_stop=true', 'limits.target_concurrency=1']),
      );
      assert.equal(run.outcome.status, 'finished');
      assert.deepEqual(decisions(dir.path), decisions(plain.path));
      const s = readJson<Summary>(dir.path, 'summary.json');
      const p = readJson<Summary>(plain.path, 'summary.json');
      assert.deepEqual([s.best_selection_hard, s.best_step], [p.best_selection_hard, p.best_step]);
      // This workload's rejects are ties, settled only by the last item: nothing to save, and reported.
      assert.equal(s.speed?.selection_calls_saved, 0);
    } finally {
      dir.cleanup();
    }
  });
});

describe('evaluation.early_stop: when the verdict is certain', () => {
  const row = (id: string, hard: number, errored = false): RolloutResult =>
    ({
      id,
      task_description: id,
      expected: [],
      n_turns: 1,
      hard,
      soft: hard,
      predicted_answer: '',
      response: '',
      ...(errored ? { outcome: 'errored' as const } : {}),
    }) as RolloutResult;
  const watch = (current: number, maxErroredShare = 0.5) =>
    earlyStopWatch({ total: 10, project: (s) => s.hard, current, best: current, maxErroredShare });

  it('stops once even perfect answers on every item left cannot beat the current score', () => {
    // limits.max_errored_share 1: any number of errored items leaves the run going.
    const w = watch(0.7, 1);
    // 3 failures of 10: at best 7/10 = 0.7, a tie, which rejects, but only just: not yet certain.
    for (const id of ['a', 'b', 'c']) w.observe(row(id, 0));
    assert.equal(w.certainReject(), false);
    w.observe(row('d', 0));
    // At best 6/10 < 0.7.
    assert.equal(w.certainReject(), true);
  });

  it('counts errored items out of the mean, and never stops where the errored share could stop the run', () => {
    const w = watch(0.5, 0.5);
    for (const id of ['a', 'b', 'c']) w.observe(row(id, 0));
    w.observe(row('e1', 0, true));
    w.observe(row('e2', 0, true));
    // 5 left: all errored would make 7 of 10 errored, over the share; the full run could have stopped.
    assert.equal(w.certainReject(), false);
    const lenient = watch(0.5, 1);
    for (const id of ['a', 'b', 'c']) lenient.observe(row(id, 0));
    lenient.observe(row('e1', 0, true));
    lenient.observe(row('e2', 0, true));
    // At best (0 + 5) / (3 + 5) = 0.625 > 0.5: the candidate could still win.
    assert.equal(lenient.certainReject(), false);
    lenient.observe(row('f', 0));
    lenient.observe(row('g', 0));
    // At best 3 / 8 = 0.375.
    assert.equal(lenient.certainReject(), true);
  });

  it('never stops with nothing answered or nothing left', () => {
    const w = watch(1);
    assert.equal(w.certainReject(), false);
    for (let i = 0; i < 10; i++) w.observe(row(`x${i}`, 0));
    assert.equal(w.certainReject(), false);
  });
});
