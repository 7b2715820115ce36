import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  eventsFromRunFolder,
  listRunFolders,
  readRunFolder,
  stepArtifacts,
} from '../../../src/engine/store/runReader';
import { fakeTarget } from '../train/helpers';
import type { Scorer } from '../../../src/engine/scoring/scorers';
import { rollout } from '../../../src/engine/train/rollout';

const fixture = join(__dirname, '..', '..', 'fixtures', 'skillopt-python-run');

describe('run folder reader', () => {
  it('reads the Python reference run folder, resolving files relative to the folder', () => {
    const run = readRunFolder(fixture);
    assert.equal(run.writer, 'skillopt-python');
    assert.equal(run.status, 'finished');
    assert.equal(run.history.length, 2);
    assert.deepEqual(
      run.epochs.map((e) => [
        e.epoch,
        e.steps.map((s) => s.action),
        e.slowUpdate?.action,
        e.metaSkill?.action,
      ]),
      [
        [1, ['accept_new_best'], 'inject_placeholder', 'skip_first_epoch'],
        [2, ['reject'], 'force_accept', 'write_meta_skill'],
      ],
    );
    assert.equal(run.baselineScore, 0.4);
    assert.equal(run.bestScore, 0.55);
    assert.equal(run.bestStep, 1);
    assert.match(run.epochs[1].slowUpdate!.content!, /similar entities/);
  });

  it('finds step artifacts for the diff view', () => {
    const a = stepArtifacts(fixture, 1);
    assert.ok(a.candidate?.endsWith(join('step_0001', 'candidate_skill.md')));
    assert.ok(a.previous?.endsWith(join('skills', 'skill_v0000.md')));
    assert.ok(a.applyReport);
    assert.deepEqual(a.failedTrajectories, []);
  });

  it('rebuilds the event sequence from the folder', () => {
    const types = eventsFromRunFolder(fixture).map((e) => e.type);
    assert.deepEqual(types, [
      'run/started',
      'baseline/scored',
      'gate/verdict',
      'step/finished',
      'epoch/finished',
      'gate/verdict',
      'step/finished',
      'epoch/finished',
      'run/finished',
    ]);
  });

  it('lists run folders below a workspace and marks a folder without summary as interrupted', () => {
    const root = mkdtempSync(join(tmpdir(), 'skillopt-runs-'));
    try {
      cpSync(fixture, join(root, '.skillopt', 'runs', 'a'), { recursive: true });
      cpSync(fixture, join(root, 'outputs', 'b'), { recursive: true });
      rmSync(join(root, 'outputs', 'b', 'summary.json'));
      writeFileSync(join(root, 'outputs', 'note.txt'), 'not a run');
      const found = listRunFolders(root);
      assert.deepEqual(
        found.map((f) => f.slice(root.length + 1)),
        [join('.skillopt', 'runs', 'a'), join('outputs', 'b')],
      );
      assert.equal(readRunFolder(found[1]).status, 'interrupted');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('marks a run killed before its first save (config and ledger, no state) as interrupted, so it can be resumed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-early-'));
    try {
      writeFileSync(join(dir, 'config.json'), '{}\n');
      assert.equal(readRunFolder(dir).status, 'empty');
      writeFileSync(join(dir, 'ledger.jsonl'), '{"kind":"usage","calls":1}\n');
      assert.equal(readRunFolder(dir).status, 'interrupted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('links the conversation the rollout wrote, for long task ids and ids with unsafe characters', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-reader-'));
    try {
      cpSync(fixture, dir, { recursive: true });
      const ids = [`suite/${'long-id-'.repeat(20)}end`, 'a b:c?d', 'x'.repeat(121), 'ümlaut/ø'];
      const client = fakeTarget('<answer>no</answer>');
      const scorer: Scorer = {
        name: 'never',
        score: () => Promise.resolve({ hard: 0, soft: 0, reason: 'wrong' }),
      };
      await rollout({
        items: ids.map((id) => ({ id, input: `task ${id}`, answers: ['yes'], fields: {} })),
        skill: '# skill',
        dir: join(dir, 'steps', 'step_0001', 'rollout'),
        client,
        scorer,
        stage: 'rollout',
        answerTag: 'answer',
        signal: new AbortController().signal,
      });
      const failed = stepArtifacts(dir, 1).failedTrajectories;
      assert.deepEqual(
        failed.map((t) => t.id),
        ids,
      );
      for (const t of failed) assert.ok(existsSync(t.path), `no conversation at ${t.path}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
