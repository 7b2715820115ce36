import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';
import type { ActivationRecord } from '../../../src/protocol/records';
import { prepareSim, runSim, tempDir } from '../train/helpers';

/**
 * The activation track in a whole training run with the SIMULATED models (sim backend): the sim
 * target opens the skill when a word of the request is in the description; the sim optimizer adds
 * the words of missed requests. A real agent CLI is exercised in realAgent.test.ts.
 */
const TRIGGERS = join(__dirname, '..', '..', '..', 'examples', 'house-style', 'triggers.json');

describe('activation track: a sim training run (simulated models)', function () {
  this.timeout(120_000);

  it('trains the description on the trigger queries, keeps it by the held-out rate, and the best skill carries it', async () => {
    const tmp = tempDir('skillopt-act-sim-');
    try {
      const out = join(tmp.path, 'run');
      const prepared = prepareSim(out, [
        'activation.enabled=true',
        `activation.trigger_file=${TRIGGERS}`,
        'activation.repeats=2',
      ]);
      assert.ok(prepared.activation, 'the plan is made');
      assert.ok(
        prepared.warnings.some((w) => /activation: \d+ train \/ \d+ held-out trigger queries/.test(w)),
      );
      const { events } = await runSim(prepared);
      const verdicts = events.flatMap((e) => (e.type === 'activation/verdict' ? [e.record] : []));
      assert.equal(verdicts.length, 2, 'one verdict per epoch');
      const [first, second] = verdicts as [ActivationRecord, ActivationRecord];
      assert.equal(first.simulated, true);
      assert.equal(first.action, 'accept_new_best');
      assert.ok(first.held_out_candidate!.rate! > first.held_out_before.rate!);
      assert.equal(second.description_before, first.description_after);
      const history = JSON.parse(
        readFileSync(join(out, 'activation_history.json'), 'utf8'),
      ) as ActivationRecord[];
      assert.deepEqual(
        history.map((r) => r.action),
        verdicts.map((r) => r.action),
      );
      const best = readFileSync(join(out, 'best_skill.md'), 'utf8');
      assert.equal(parseFrontMatter(best)?.description, first.description_after);
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
        activation?: { held_out_before: number; held_out_after: number };
      };
      assert.equal(summary.activation?.held_out_before, first.held_out_before.rate);
      assert.equal(summary.activation?.held_out_after, first.held_out_candidate!.rate);
      const report = readFileSync(join(out, 'report.md'), 'utf8');
      assert.match(report, /## Activation track/);
      assert.match(report, /held-out trigger rate/i);
    } finally {
      tmp.cleanup();
    }
  });

  it('resumes a run stopped inside the activation stage to the records and best skill of an uninterrupted run', async () => {
    const tmp = tempDir('skillopt-act-resume-');
    try {
      const opts = ['activation.enabled=true', `activation.trigger_file=${TRIGGERS}`];
      const ref = join(tmp.path, 'ref');
      await runSim(prepareSim(ref, opts));
      const out = join(tmp.path, 'run');
      const first = await runSim(
        prepareSim(out, opts),
        (e) => e.type === 'stage/started' && e.stage === 'activation' && e.epoch === 2,
      );
      assert.equal(first.outcome.status, 'stopped');
      const second = await runSim(prepareSim(out, opts));
      assert.equal(second.outcome.status, 'finished');
      const records = (dir: string): unknown =>
        (JSON.parse(readFileSync(join(dir, 'activation_history.json'), 'utf8')) as ActivationRecord[]).map(
          (r) => r,
        );
      assert.deepEqual(records(out), records(ref));
      assert.equal(
        readFileSync(join(out, 'best_skill.md'), 'utf8'),
        readFileSync(join(ref, 'best_skill.md'), 'utf8'),
      );
      assert.equal(
        second.events.filter((e) => e.type === 'activation/verdict').length,
        1,
        'epoch 1 is not run again',
      );
    } finally {
      tmp.cleanup();
    }
  });
});
