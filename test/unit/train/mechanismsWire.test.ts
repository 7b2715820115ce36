import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun } from '../../../src/engine/run';
import type { StepRecord } from '../../../src/protocol/records';
import { startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedWireOverrides } from '../../support/loopback/scriptedModels';
import { exampleConfig, prepareSim, readJson, runSim, tempDir } from './helpers';

/**
 * Each mechanism beyond the reference code, run through the real `openai` SDK against a loopback
 * server that plays the sim models over the wire: it must make the same decisions as the offline
 * run with the same config, and a different run than with the mechanism off.
 */
describe('mechanisms over the OpenAI wire format (loopback)', function () {
  this.timeout(120_000);
  let server: LoopbackServer;
  const dirs: Array<{ cleanup: () => void }> = [];
  const dir = (prefix: string): string => {
    const d = tempDir(prefix);
    dirs.push(d);
    return d.path;
  };

  before(async () => {
    const probe = prepareRun({ configPath: exampleConfig, outDir: dir('skillopt-mw-probe-'), dryRun: true });
    const all = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    server = await startOpenAiServer(scriptedModels(all));
  });
  after(async () => {
    await server.close();
    for (const d of dirs) d.cleanup();
  });

  async function overWire(overrides: string[]): Promise<string> {
    const out = dir('skillopt-mw-');
    const prepared = prepareRun({
      configPath: exampleConfig,
      outDir: out,
      overrides: [...overrides, 'cache.enabled=false', ...scriptedWireOverrides(server.url)],
    });
    assert.equal((await runSim(prepared)).outcome.status, 'finished');
    return out;
  }

  async function offline(overrides: string[]): Promise<string> {
    const out = dir('skillopt-mw-sim-');
    await runSim(prepareSim(out, overrides));
    return out;
  }

  /** What the gate and the schedule decided, step by step. */
  const decisions = (out: string): string[] =>
    readJson<StepRecord[]>(out, 'history.json').map(
      (r) => `${r.step}:${r.action}:${r.edit_budget ?? '-'}:${r.candidate_gate_score?.toFixed(4) ?? '-'}`,
    );

  const cases: Array<{ name: string; on: string[]; off: string[]; check: (out: string) => void }> = [
    {
      name: 'gate patience stops early and says why in the run folder',
      on: ['train.num_epochs=3', 'evaluation.patience=2'],
      off: ['train.num_epochs=3'],
      check: (out) => {
        assert.ok(readJson<unknown[]>(out, 'history.json').length < 12);
        assert.match(
          readJson<{ stopped_early?: string }>(out, 'summary.json').stopped_early ?? '',
          /patience 2/,
        );
      },
    },
    {
      name: 'decay on reject shrinks the budget after a rejection',
      on: ['train.num_epochs=3', 'optimizer.decay_on_reject=true', 'optimizer.lr_scheduler=constant'],
      off: ['train.num_epochs=3', 'optimizer.lr_scheduler=constant'],
      check: (out) => {
        const h = readJson<StepRecord[]>(out, 'history.json');
        const i = h.findIndex((r) => r.action === 'reject');
        assert.ok(i >= 0 && i + 1 < h.length, 'a rejection with a step after it');
        assert.ok((h[i + 1]!.edit_budget ?? 0) < (h[i]!.edit_budget ?? 0));
      },
    },
    {
      name: 'gradient accumulation rolls out several micro-batches per step',
      on: ['train.num_epochs=1', 'train.batch_size=4', 'train.accumulation=2'],
      off: ['train.num_epochs=1', 'train.batch_size=4'],
      check: (out) => {
        assert.ok(existsSync(join(out, 'steps', 'step_0001', 'batch_1', 'rollout', 'results.jsonl')));
        assert.equal(readJson<StepRecord[]>(out, 'history.json')[0]!.rollout_n, 8);
      },
    },
    {
      name: 'deep reflection runs and keeps its transcript',
      on: ['train.num_epochs=1', 'gradient.use_deep_reflect=true', 'gradient.deep_reflect_every_step=true'],
      off: ['train.num_epochs=1'],
      check: (out) => assert.ok(existsSync(join(out, 'steps', 'step_0001', 'deep_reflect.json'))),
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const wire = await overWire(c.on);
      c.check(wire);
      assert.deepEqual(decisions(wire), decisions(await offline(c.on)), 'same decisions as the offline run');
      // Telemetry rides along on every run: the skill's length in tokens per step.
      assert.ok(
        readJson<StepRecord[]>(wire, 'history.json').every((r) => typeof r.skill_tokens === 'number'),
      );
      assert.notDeepEqual(decisions(wire), decisions(await offline(c.off)), 'the mechanism changes the run');
    });
  }
});
