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
      const prepared = prepareSim(join(dir.path, 'run'), ['evaluation.no_skill_baseline=true']);
      const sel = prepared.splits.val.length;
      const test = prepared.splits.test.size;
      assert.equal(
        prepared.estimate.total - plain.estimate.total,
        sel + test,
        'one more selection and test evaluation',
      );
      await runSim(prepared);
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
      assert.match(read(out, 'report.md'), /\| no skill \(the target alone\) \| \d\.\d+ \| \d\.\d+ \|/);
      assert.ok(existsSync(join(out, RUN_DIR.noSkillSelection)));
      // The target was asked with no skill at all: none of the skill's text reached it.
      const results = readFileSync(join(out, RUN_DIR.testNoSkill, 'results.jsonl'), 'utf8');
      assert.ok(results.length > 0);
      assert.doesNotMatch(read(out, join(RUN_DIR.testNoSkill, 'results.jsonl')), /House Style Answers/);
    } finally {
      dir.cleanup();
    }
  });
});
