import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/engine/events';
import type { RuntimeState, StepRecord } from '../../../src/engine/train/types';
import { prepareRun } from '../../../src/engine/run';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
} from '../../support/loopback/scriptedModels';
import { comparableHistory, exampleConfig, prepareSim, read, readJson, runSim, tempDir } from './helpers';

type Crash = { name: string; when: (e: EngineEvent, all: EngineEvent[]) => boolean };

const progressIn = (step: number, stage: string, n: number) => (e: EngineEvent, all: EngineEvent[]) =>
  e.type === 'rollout/progress' &&
  e.step === step &&
  e.stage === stage &&
  all.filter((x) => x.type === 'rollout/progress' && x.step === step && x.stage === stage).length >= n;

const crashes: Crash[] = [
  { name: 'mid-rollout', when: progressIn(2, 'rollout', 3) },
  {
    name: 'mid-reflection',
    when: (e) => e.type === 'stage/started' && e.step === 2 && e.stage === 'reflect',
  },
  { name: 'mid-gate', when: progressIn(2, 'evaluate', 5) },
  { name: 'after the gate', when: (e) => e.type === 'gate/verdict' && e.step === 2 },
  {
    name: 'mid-slow-update',
    when: (e) => e.type === 'stage/started' && e.stage === 'slow_update' && e.epoch === 2,
  },
];

describe('kill and resume', function () {
  this.timeout(120_000);
  let reference: ReturnType<typeof comparableHistory>;
  let referenceBest: string;
  let refDir: ReturnType<typeof tempDir>;

  before(async () => {
    refDir = tempDir('skillopt-ref-');
    await runSim(prepareSim(refDir.path));
    reference = comparableHistory(refDir.path);
    referenceBest = read(refDir.path, 'best_skill.md');
  });
  after(() => refDir.cleanup());

  for (const crash of crashes) {
    it(`resumes after a stop ${crash.name} with the same history as an uninterrupted run`, async () => {
      const dir = tempDir('skillopt-resume-');
      try {
        const first = await runSim(prepareSim(dir.path), crash.when);
        assert.equal(first.outcome.status, 'stopped', 'the crash point was never reached');
        const before = readJson<RuntimeState>(dir.path, 'runtime_state.json');
        const second = await runSim(prepareSim(dir.path));
        assert.equal(second.outcome.status, 'finished');
        const started = second.events.find((e) => e.type === 'run/started');
        assert.ok(
          started &&
            started.type === 'run/started' &&
            started.resumedFromStep === before.last_completed_step + 1,
        );
        assert.deepEqual(comparableHistory(dir.path), reference);
        assert.equal(read(dir.path, 'best_skill.md'), referenceBest);
        // Finished work is not paid for twice: the resumed run re-runs no completed step's rollout.
        const resumedRollouts = second.events.filter(
          (e) => e.type === 'stage/started' && e.stage === 'rollout',
        );
        assert.ok(
          resumedRollouts.every((e) => e.type === 'stage/started' && e.step > before.last_completed_step),
        );
      } finally {
        dir.cleanup();
      }
    });
  }

  it('keeps the step buffer and scheduler position across a resume', async () => {
    const dir = tempDir('skillopt-resume-');
    try {
      await runSim(prepareSim(dir.path), (e) => e.type === 'step/finished' && e.record.step === 2);
      const state = readJson<RuntimeState>(dir.path, 'runtime_state.json');
      assert.equal(state.last_completed_step, 2);
      assert.equal(state.step_buffer?.length, 2);
      assert.equal(state.scheduler_position, 2);
    } finally {
      dir.cleanup();
    }
  });

  it('resumes after the CLI process is killed with SIGKILL mid-step', async () => {
    // Real models over the wire with some latency, so the kill lands while the process is working.
    const probe = prepareRun({ configPath: exampleConfig, dryRun: true, outDir: '/nonexistent-probe' });
    const tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    const server = await startOpenAiServer(scriptedModels(tasks), { latencyMs: 25 });
    const wire = [
      'cache.enabled=false',
      'model.optimizer_backend=openai_compatible',
      'model.target_backend=openai',
      `model.optimizer=${scriptedOptimizerModel}`,
      `model.target=${scriptedTargetModel}`,
      `model.optimizer_base_url=${server.url}`,
      `model.target_base_url=${server.url}`,
    ];
    const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts');
    const dir = tempDir('skillopt-kill-');
    try {
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [
          '--import',
          'tsx',
          cli,
          'train',
          exampleConfig,
          '--out',
          dir.path,
          '--json',
          '--cfg-options',
          ...wire,
        ]);
        let buf = '';
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          const lines = buf.split('\n');
          buf = lines.pop() ?? '';
          for (const line of lines) {
            const e = JSON.parse(line) as EngineEvent;
            if (e.type === 'stage/started' && e.step === 2 && e.stage === 'select') child.kill('SIGKILL');
          }
        });
        child.on('exit', (_code, signal) =>
          signal === 'SIGKILL' ? resolve() : reject(new Error(`exited without the kill (${String(signal)})`)),
        );
      });
      const state = readJson<RuntimeState>(dir.path, 'runtime_state.json');
      assert.equal(state.last_completed_step, 1);
      const second = await runSim(prepareSim(dir.path, wire.slice(1)));
      assert.equal(second.outcome.status, 'finished');
      assert.deepEqual(comparableHistory(dir.path), reference);
      const history = readJson<StepRecord[]>(dir.path, 'history.json');
      assert.equal(history.length, reference.length);
    } finally {
      await server.close();
      dir.cleanup();
    }
  });
});
