import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_DIR } from '../../../src/engine/store/layout';
import type { RunReport } from '../../../src/engine/train/report';
import { prepareSim, read, runSim, tempDir } from './helpers';

interface Summary {
  baseline_selection_hard: number;
  no_skill_selection_hard?: number;
  no_skill_test_hard?: number | null;
  report: RunReport;
}

/** evaluation.no_skill_baseline: the target alone, beside the initial, best and final skills (sim, labelled simulated). */
describe('the no-skill baseline (evaluation.no_skill_baseline)', function () {
  this.timeout(120_000);

  it('scores the target with no skill on selection and test, in summary.json and the report, and counts it in the estimate', async () => {
    const dir = tempDir('skillopt-noskill-');
    try {
      const plain = prepareSim(dir.path, ['evaluation.no_skill_baseline=false'], undefined);
      // On by default: the report always says whether the skill helps at all.
      const prepared = prepareSim(join(dir.path, 'run'));
      assert.equal(prepared.settings.noSkillBaseline, true);
      const sel = prepared.splits.val.length;
      const test = prepared.splits.test.size;
      assert.equal(
        prepared.estimate.total - plain.estimate.total,
        sel + test,
        'one more selection and test evaluation',
      );
      const { events } = await runSim(prepared);
      const out = join(dir.path, 'run');
      const summary = JSON.parse(read(out, 'summary.json')) as Summary;
      assert.equal(typeof summary.no_skill_selection_hard, 'number');
      assert.equal(typeof summary.no_skill_test_hard, 'number');
      assert.ok(
        summary.no_skill_selection_hard! <= summary.baseline_selection_hard,
        'the simulated target does no better without the skill’s rules',
      );
      assert.deepEqual(summary.report.no_skill, {
        selection: summary.no_skill_selection_hard,
        test: summary.no_skill_test_hard,
      });
      const report = read(out, 'report.md');
      assert.match(report, /\| no skill \(the target alone\) \| \d\.\d+ \| \d\.\d+ \|/);
      assert.match(
        report,
        /The best skill (beats no skill at all by \+|scores the same as no skill|scores below no skill)/,
      );
      assert.doesNotMatch(report, /no_skill_baseline: false/);
      // The CLI's last lines read it from run/finished.
      const finished = events.find((e) => e.type === 'run/finished');
      assert.deepEqual(finished?.type === 'run/finished' ? finished.noSkill : undefined, {
        selection: summary.no_skill_selection_hard,
        test: summary.no_skill_test_hard,
      });
      assert.ok(existsSync(join(out, RUN_DIR.noSkillSelection)));
      // The target was asked with no skill at all: none of the skill's text reached it.
      const results = readFileSync(join(out, RUN_DIR.testNoSkill, 'results.jsonl'), 'utf8');
      assert.ok(results.length > 0);
      assert.doesNotMatch(read(out, join(RUN_DIR.testNoSkill, 'results.jsonl')), /House Style Answers/);
    } finally {
      dir.cleanup();
    }
  });

  it('says where the row would be, naming the key, when it is switched off; the decisions do not change', async () => {
    const dir = tempDir('skillopt-noskill-off-');
    try {
      const on = await runSim(prepareSim(join(dir.path, 'on')));
      const off = await runSim(prepareSim(join(dir.path, 'off'), ['evaluation.no_skill_baseline=false']));
      const summary = JSON.parse(read(join(dir.path, 'off'), 'summary.json')) as Summary & {
        gate_power?: unknown;
      };
      assert.equal(summary.no_skill_selection_hard, undefined);
      assert.equal(summary.report.no_skill_off, true);
      assert.deepEqual(summary.gate_power, { test: 'strict', items: 19, repeats: 1, alpha: 0.05 });
      const report = read(join(dir.path, 'off'), 'report.md');
      assert.doesNotMatch(report, /\| no skill/);
      assert.match(report, /not scored \(evaluation\.no_skill_baseline: false\); set it to true/);
      assert.match(report, /Gate: strict; 19 items × 1 repeat: only Δ ≥ 0\.263 can be told from noise/);
      assert.ok(!existsSync(join(dir.path, 'off', RUN_DIR.testNoSkill)));
      const finished = off.events.find((e) => e.type === 'run/finished');
      assert.equal(finished?.type === 'run/finished' && finished.noSkillOff, true);
      // Scored at the end only: every gate decision is the same with the baseline on or off.
      const actions = (dir: string): string[] =>
        (JSON.parse(read(dir, 'history.json')) as Array<{ action: string }>).map((r) => r.action);
      assert.deepEqual(actions(join(dir.path, 'on')), actions(join(dir.path, 'off')));
      assert.equal(on.outcome.status, off.outcome.status);
    } finally {
      dir.cleanup();
    }
  });
});
