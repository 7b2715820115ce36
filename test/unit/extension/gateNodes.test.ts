import assert from 'node:assert/strict';
import type { RunFolder } from '../../../src/engine/store/runReader';
import { gateNodes } from '../../../src/extension/runs/gateNodes';
import { applyEvent } from '../../../src/extension/runs/liveState';
import { aaCheckOf } from '../../support/gateTest';
import { started } from './events';

function run(summary?: Record<string, unknown>): RunFolder {
  return {
    dir: '/runs/a',
    name: 'a',
    status: summary ? 'finished' : 'running',
    writer: 'skillopt-vscode',
    config: {},
    history: [],
    epochs: [],
    ...(summary ? { summary } : {}),
  } as RunFolder;
}

const finished = {
  baseline_selection_hard: 0.55,
  best_selection_hard: 0.7,
  final_selection_hard: 0.7,
  baseline_test_hard: 0.5,
  test_hard: 0.61,
  final_test_hard: 0.61,
  gate_power: { test: 'paired', items: 19, repeats: 2, alpha: 0.05 },
};

const aa = aaCheckOf(3, 2);

describe('Runs tree: the gate and the scores beside the steps', () => {
  it('shows the power check and the target alone beside the initial and best skills', () => {
    const rows = gateNodes(run({ ...finished, no_skill_selection_hard: 0.4, no_skill_test_hard: 0.39 }));
    assert.deepEqual(
      rows.map((r) => r.label),
      ['Gate: paired', 'Scores'],
    );
    assert.match(
      rows[0]!.description ?? '',
      /^only Δ ≥ 0\.132 detectable \(19 items × 2 repeats, alpha 0\.05\)$/,
    );
    assert.match(rows[0]!.tooltip ?? '', /No A\/A check yet: SkillOpt: Check Gate Noise \(A\/A\)/);
    assert.equal(rows[1]!.description, 'test: no skill 0.390 · initial 0.500 · best 0.610');
    assert.match(rows[1]!.tooltip ?? '', /No skill \(the target alone\): selection 0\.400, test 0\.390/);
    assert.match(rows[1]!.tooltip ?? '', /The best skill beats no skill at all by \+0\.220 on test\./);
  });

  it('says the target alone was not scored, naming the key, when the run turned it off', () => {
    const rows = gateNodes(run({ ...finished, report: { no_skill_off: true } }));
    const scores = rows.find((r) => r.label === 'Scores');
    assert.equal(scores?.description, 'test: no skill not scored · initial 0.500 · best 0.610');
    assert.match(scores?.tooltip ?? '', /evaluation\.no_skill_baseline: false/);
  });

  it('shows a running run its power check from run/started, and the newest A/A check of its skills', () => {
    const live = applyEvent(undefined, 0, {
      ...started,
      ...{ gatePower: { test: 'strict', items: 18, repeats: 1, alpha: 0.05 } },
    } as typeof started);
    const rows = gateNodes({ ...run(), live }, aa);
    assert.deepEqual(
      rows.map((r) => r.label),
      ['Gate: strict'],
      'no Scores row before the run has finished',
    );
    assert.match(
      rows[0]!.description ?? '',
      /^only Δ ≥ 0\.278 detectable \(18 items × 1 repeat, alpha 0\.05\) · A\/A ×3: strict gate accepts 2 of 6 \(33%\), paired 0$/,
    );
    assert.match(rows[0]!.tooltip ?? '', /Every one of those accepts is noise/);
  });

  it('shows nothing for a run from before these records (or the reference)', () => {
    assert.deepEqual(gateNodes(run({ baseline_selection_hard: 0.5 })), []);
  });
});
