import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunFolder } from '../../../src/engine/store/runReader';
import type { ProvenanceRecord } from '../../../src/engine/train/provenance';
import {
  describeOrigin,
  originOfLine,
  ProvenanceFiles,
  runTrains,
} from '../../../src/extension/runs/provenance';
import { prepareSim, runSim, tempDir } from '../train/helpers';

describe('extension: where a line of a trained skill came from', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  before(async () => {
    dir = tempDir('skillopt-provenance-');
    await runSim(prepareSim(dir.path, ['train.num_epochs=1']));
  });
  after(() => dir.cleanup());

  it('finds the step that added each kept line of best_skill.md, and nothing for the initial lines', () => {
    const records = new ProvenanceFiles().records(dir.path);
    assert.ok(records.length > 0);
    const best = readFileSync(join(dir.path, 'best_skill.md'), 'utf8').split('\n');
    const initial = readFileSync(join(dir.path, 'skills', 'skill_v0000.md'), 'utf8').split('\n');
    const added = best.filter((l) => l.trim() && !initial.includes(l) && !l.startsWith('<!--'));
    assert.ok(added.length > 0);
    for (const line of added) {
      const o = originOfLine(line, records);
      assert.ok(o, `no origin for ${line}`);
      assert.ok(o.score_after > o.score_before, 'kept by a strict improvement');
    }
    for (const line of initial.filter((l) => l.trim().length >= 4))
      assert.equal(originOfLine(line, records), undefined, line);
  });

  it('describes the origin as text: step, source, scores and evidence', () => {
    const r: ProvenanceRecord = {
      step: 3,
      epoch: 1,
      edit_id: 'e-1',
      op: 'append',
      content: '- Prefix money amounts with the currency symbol.',
      source_type: 'failure',
      support_count: 4,
      action: 'accept_new_best',
      score_before: 0.842,
      score_after: 0.947,
      minibatches: ['minibatch_fail_000'],
      trajectory_ids: ['money-1', 'money-2', 'money-3', 'money-4', 'money-5', 'money-6'],
    };
    assert.deepEqual(describeOrigin('demo', r), [
      'Added by step 3 (epoch 1) of demo: append from failed tasks, support 4.',
      'Selection score 0.842 → 0.947 (+0.105) when the gate kept it (accept new best).',
      'Evidence: 6 trajectories (money-1, money-2, money-3, money-4, money-5 and 1 more), 1 analyst minibatch.',
    ]);
  });

  it('knows which run trains a skill, and re-reads provenance.json only when it changes', () => {
    const run = readRunFolder(dir.path);
    assert.ok(runTrains(run, join(dir.path, 'best_skill.md')));
    assert.ok(runTrains(run, String(run.config.skill_init)));
    assert.ok(!runTrains(run, join(dir.path, 'other.md')));
    assert.ok(
      runTrains(run, join(dir.path, 'x', 'SKILL.md'), {
        configPath: 'c',
        skillPath: join(dir.path, 'x', 'SKILL.md'),
      }),
    );
    const files = new ProvenanceFiles();
    const first = files.records(dir.path);
    assert.equal(files.records(dir.path), first, 'cached while unchanged');
    // An edit that restates a line of the initial skill does not make that line the step's.
    const heading = '## Rules';
    assert.ok(readFileSync(join(dir.path, 'skills', 'skill_v0000.md'), 'utf8').includes(heading));
    writeFileSync(
      join(dir.path, 'provenance.json'),
      JSON.stringify([{ ...first[0]!, content: `${heading}\n- A new rule from step 1.` }]),
    );
    assert.equal(files.originOf(dir.path, heading), undefined);
    assert.equal(files.originOf(dir.path, '- A new rule from step 1.')?.step, first[0]!.step);
    writeFileSync(join(dir.path, 'provenance.json'), '[]\n');
    assert.deepEqual(files.records(dir.path), []);
  });
});
