import assert from 'node:assert/strict';
import {
  buildPhases,
  mergeNodeOf,
  phaseNameOf,
  type CallRecord,
  type StageWindow,
} from '../../../bench/phases';
import { boundRun } from '../../../bench/runBounds';

const caps = { optimizer: 2, target: 2 };

function calls(
  n: number,
  c: Omit<CallRecord, 'startMs' | 'endMs' | 'cached'> & { cached?: boolean },
): CallRecord[] {
  return Array.from({ length: n }, () => ({ cached: false, startMs: 0, endMs: 0, ...c }));
}

/** A baseline and one step, each stage 10 ms slower than its calls allow. */
function oneStep(): { windows: StageWindow[]; calls: CallRecord[] } {
  const w = (stage: string, step: number, startMs: number, endMs: number): StageWindow => ({
    stage,
    step,
    epoch: step === 0 ? 0 : 1,
    startMs,
    endMs,
  });
  return {
    windows: [
      w('baseline', 0, 0, 210),
      w('rollout', 1, 210, 420),
      w('reflect', 1, 420, 480),
      w('aggregate', 1, 480, 590),
      w('select', 1, 590, 650),
      w('update', 1, 650, 651),
      w('evaluate', 1, 651, 861),
    ],
    calls: [
      ...calls(4, { role: 'target', kind: 'selection', stage: 'baseline', step: 0, serviceMs: 100 }),
      ...calls(4, { role: 'target', kind: 'rollout', stage: 'rollout', step: 1, serviceMs: 100 }),
      // An analyst call dispatched while the rollout was still running belongs to reflection.
      ...calls(1, { role: 'optimizer', kind: 'analyst', stage: 'rollout', step: 1, serviceMs: 50 }),
      ...calls(1, {
        role: 'optimizer',
        kind: 'merge',
        stage: 'aggregate',
        step: 1,
        serviceMs: 50,
        mergeNode: 'failure.1',
      }),
      ...calls(1, {
        role: 'optimizer',
        kind: 'merge',
        stage: 'aggregate',
        step: 1,
        serviceMs: 50,
        mergeNode: 'success.1',
      }),
      ...calls(1, {
        role: 'optimizer',
        kind: 'merge',
        stage: 'aggregate',
        step: 1,
        serviceMs: 50,
        mergeNode: 'final',
      }),
      ...calls(1, { role: 'optimizer', kind: 'ranking', stage: 'select', step: 1, serviceMs: 50 }),
      ...calls(4, { role: 'target', kind: 'selection', stage: 'evaluate', step: 1, serviceMs: 100 }),
      // A cache hit costs no server time and is not bounded.
      ...calls(1, {
        role: 'target',
        kind: 'selection',
        stage: 'evaluate',
        step: 1,
        serviceMs: 100,
        cached: true,
      }),
    ],
  };
}

describe('bench phases: labelling calls', () => {
  it('reads the merge-tree position from the merge prompt', () => {
    assert.equal(mergeNodeOf('## Patches to Merge\ngroup: failure; level: 2; count: 3\n'), 'failure.2');
    assert.equal(mergeNodeOf('## Patches to Merge\ngroup: success; level: 1; count: 8'), 'success.1');
    assert.equal(
      mergeNodeOf('## Two Pre-merged Groups\ngroup: final; failure items: 3 (high priority)'),
      'final',
    );
    assert.equal(mergeNodeOf('no group line here'), undefined);
  });

  it('maps request stage and open engine stage to a phase', () => {
    assert.equal(phaseNameOf({ kind: 'analyst', stage: 'rollout' }), 'reflect');
    assert.equal(phaseNameOf({ kind: 'rollout', stage: 'rollout' }), 'rollout');
    assert.equal(
      phaseNameOf({ kind: 'merge', stage: 'aggregate', mergeNode: 'success.1' }),
      'merge.success.1',
    );
    assert.equal(phaseNameOf({ kind: 'merge', stage: 'aggregate' }), 'merge.final');
    assert.equal(phaseNameOf({ kind: 'ranking', stage: 'select' }), 'rank');
    assert.equal(phaseNameOf({ kind: 'selection', stage: 'evaluate' }), 'evaluate');
    assert.equal(phaseNameOf({ kind: 'selection', stage: 'baseline' }), 'baseline');
    assert.equal(phaseNameOf({ kind: 'slow_rollout', stage: 'slow_update' }), 'slow_rollout');
    assert.equal(phaseNameOf({ kind: 'selection', stage: 'slow_update' }), 'slow_selection');
    assert.equal(phaseNameOf({ kind: 'slow_rollout', stage: 'meta_skill' }), 'meta_rollout');
    assert.equal(phaseNameOf({ kind: 'test', stage: 'test' }), 'test');
    assert.equal(phaseNameOf({ kind: 'rewrite', stage: 'update' }), 'rewrite');
    assert.equal(phaseNameOf({ kind: 'eval', stage: 'test' }), 'test.eval');
  });
});

describe('bench phases: the two dependency models', () => {
  it('chains every stage in engine order but lets step 1 run beside the baseline in the algorithm', () => {
    const { windows, calls: c } = oneStep();
    const plan = buildPhases(windows, c);
    const dep = (model: 'algorithm' | 'engine', id: string): readonly string[] =>
      plan.phases[model].find((p) => p.id === id)!.after;
    assert.deepEqual(dep('engine', 's1.rollout'), ['baseline']);
    assert.deepEqual(dep('algorithm', 's1.rollout'), []);
    assert.deepEqual(dep('algorithm', 's1.gate'), ['s1.evaluate', 'baseline']);
    assert.deepEqual(dep('engine', 's1.merge.final'), ['s1.merge.failure.1', 's1.merge.success.1']);
    assert.equal(plan.phases.engine.find((p) => p.id === 's1.reflect')!.streamsFrom, 's1.rollout');
    assert.deepEqual(plan.phases.engine.find((p) => p.id === 's1.evaluate')!.durations, [100, 100, 100, 100]);
    assert.equal(plan.unplaced, 0);
  });

  it('models the baseline the same when it starts after step 1 (its requests leave after step 1 sent its)', () => {
    const { windows, calls: c } = oneStep();
    const later = windows.map((w) => (w.stage === 'baseline' ? { ...w, startMs: 215, endMs: 425 } : w));
    const sorted = [...later].sort((a, b) => a.startMs - b.startMs);
    assert.deepEqual(buildPhases(sorted, c).phases, buildPhases(windows, c).phases);
  });

  it('bounds the run both ways and splits the engine-order bound over the stages', () => {
    const { windows, calls: c } = oneStep();
    const r = boundRun(windows, c, caps);
    // Engine order: baseline 200, rollout 200, reflect +50 after the last result, two merge levels
    // 100, ranking 50, gate 200.
    assert.equal(r.engine.totalMs, 800);
    // Algorithm: the baseline hides behind step 1 (its calls fit while the optimizer works).
    assert.equal(r.algorithm.totalMs, 600);
    assert.deepEqual(
      r.stages.map((s) => [s.stage, s.calls, s.cached, s.boundMs, s.wallMs, s.overheadMs]),
      [
        ['baseline', 4, 0, 200, 210, 10],
        ['rollout', 4, 0, 200, 210, 10],
        ['reflect', 1, 0, 50, 60, 10],
        ['aggregate', 3, 0, 100, 110, 10],
        ['select', 1, 0, 50, 60, 10],
        ['update', 0, 0, 0, 1, 1],
        ['evaluate', 4, 1, 200, 210, 10],
      ],
    );
    assert.equal(
      r.stages.reduce((n, s) => n + s.boundMs, 0),
      r.engine.totalMs,
    );
    assert.deepEqual(r.steps, [{ step: 1, wallMs: 651, calls: 13, cached: 1, boundMs: 600, overheadMs: 51 }]);
  });

  it('runs the meta skill beside the slow update, once the slow update’s rollouts are in, in both models', () => {
    const windows: StageWindow[] = [
      { stage: 'rollout', step: 1, epoch: 1, startMs: 0, endMs: 100 },
      { stage: 'evaluate', step: 1, epoch: 1, startMs: 100, endMs: 200 },
      { stage: 'slow_update', step: 1, epoch: 2, startMs: 200, endMs: 500 },
      { stage: 'meta_skill', step: 1, epoch: 2, startMs: 201, endMs: 400 },
    ];
    const c = [
      ...calls(2, { role: 'target', kind: 'rollout', stage: 'rollout', step: 1, serviceMs: 100 }),
      ...calls(2, { role: 'target', kind: 'slow_rollout', stage: 'slow_update', step: 1, serviceMs: 100 }),
      ...calls(1, { role: 'optimizer', kind: 'slow_update', stage: 'slow_update', step: 1, serviceMs: 100 }),
      ...calls(2, { role: 'target', kind: 'selection', stage: 'slow_update', step: 1, serviceMs: 100 }),
      ...calls(1, { role: 'optimizer', kind: 'meta_skill', stage: 'meta_skill', step: 1, serviceMs: 100 }),
    ];
    const r = boundRun(windows, c, caps);
    // Before the engine ran them side by side its order cost one more wave (500 ms).
    assert.equal(r.engine.totalMs, 400);
    assert.equal(r.algorithm.totalMs, 400);
    assert.deepEqual(r.algorithm.criticalPath, [
      's1.rollout',
      's1.reflect',
      's1.gate',
      'e1.slow_rollout',
      'e1.slow_update',
      'e1.slow_selection',
    ]);
    const meta = r.algorithm.phases.find((p) => p.id === 'e1.meta_skill')!;
    assert.deepEqual([meta.earliestStartMs, meta.earliestFinishMs], [200, 300]);
    const engineMeta = r.engine.phases.find((p) => p.id === 'e1.meta_skill')!;
    assert.deepEqual([engineMeta.earliestStartMs, engineMeta.earliestFinishMs], [200, 300]);
  });

  it('holds every test call in one phase when the test split is scored twice (best skill, no skill)', () => {
    const windows: StageWindow[] = [
      { stage: 'rollout', step: 1, epoch: 1, startMs: 0, endMs: 100 },
      { stage: 'evaluate', step: 1, epoch: 1, startMs: 100, endMs: 200 },
      { stage: 'test', step: 1, epoch: 1, startMs: 200, endMs: 300 },
      { stage: 'test', step: 1, epoch: 1, startMs: 300, endMs: 400 },
    ];
    const c = [
      ...calls(2, { role: 'target', kind: 'rollout', stage: 'rollout', step: 1, serviceMs: 100 }),
      ...calls(4, { role: 'target', kind: 'test', stage: 'test', step: 1, serviceMs: 100 }),
    ];
    const r = boundRun(windows, c, caps);
    assert.equal(r.engine.phases.filter((p) => p.id === 'end.test').length, 1);
    assert.equal(r.engine.phases.find((p) => p.id === 'end.test')!.calls, 4);
  });

  it('counts calls outside every window as unplaced', () => {
    const r = boundRun(
      [{ stage: 'rollout', step: 1, epoch: 1, startMs: 0, endMs: 10 }],
      calls(3, { role: 'target', kind: 'rollout', stage: 'start', step: 0, serviceMs: 5 }),
      caps,
    );
    assert.equal(r.unplaced, 3);
    assert.equal(r.engine.totalMs, 0);
  });
});
