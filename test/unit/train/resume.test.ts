import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/protocol/events';
import type { RuntimeState, StepRecord } from '../../../src/protocol/records';
import { prepareRun, trainPrepared } from '../../../src/engine/run';
import { matches, midStageStops, slowGateStop, type MidStageStop } from './midStageStops';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedWireOverrides } from '../../support/loopback/scriptedModels';
import {
  CallLog,
  comparableHistory,
  exampleConfig,
  paidKeys,
  spend,
  prepareSim,
  prepareSimCached,
  read,
  readJson,
  runSim,
  tempDir,
  trainUntilKilled,
  type CallRecord,
  type Spend,
} from './helpers';

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
  // In epoch 2 the analysts read the epoch's earlier steps (the step buffer), which resume keeps.
  { name: 'mid-rollout in epoch 2', when: progressIn(7, 'rollout', 3) },
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
  let referenceSpend: Spend;
  let refDir: ReturnType<typeof tempDir>;

  before(async () => {
    refDir = tempDir('skillopt-ref-');
    await runSim(prepareSim(refDir.path));
    reference = comparableHistory(refDir.path);
    referenceBest = read(refDir.path, 'best_skill.md');
    referenceSpend = spend(refDir.path);
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
        // Money is exact: both processes together paid what one uninterrupted run pays, per step too.
        assert.deepEqual(spend(dir.path), referenceSpend);
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
    const wire = ['cache.enabled=false', ...scriptedWireOverrides(server.url)];
    const dir = tempDir('skillopt-kill-');
    try {
      await trainUntilKilled(
        exampleConfig,
        dir.path,
        wire,
        (e) => e.type === 'stage/started' && e.step === 2 && e.stage === 'select',
      );
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

describe('kill and resume: killed before the first save', function () {
  this.timeout(120_000);

  it('--resume after a SIGKILL in step 1 (no runtime_state.json yet) goes on from the paid work', async () => {
    const refDir = tempDir('skillopt-ref-');
    const probe = prepareRun({ configPath: exampleConfig, dryRun: true, outDir: '/nonexistent-probe' });
    const tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    const server = await startOpenAiServer(scriptedModels(tasks), { latencyMs: 25 });
    const wire = ['cache.enabled=false', ...scriptedWireOverrides(server.url)];
    const dir = tempDir('skillopt-kill-');
    try {
      await runSim(prepareSim(refDir.path, wire.slice(1)));
      const seen: EngineEvent[] = [];
      await trainUntilKilled(exampleConfig, dir.path, wire, (e) => {
        seen.push(e);
        return progressIn(1, 'rollout', 3)(e, seen);
      });
      assert.equal(existsSync(join(dir.path, 'runtime_state.json')), false, 'the kill came after a save');
      const paidBefore = read(dir.path, 'ledger.jsonl');
      assert.match(paidBefore, /"kind":"usage"/, 'the killed process paid nothing');

      const events: EngineEvent[] = [];
      const outcome = await trainPrepared(prepareSim(dir.path, wire.slice(1)), {
        emit: (e) => events.push(e),
        signal: new AbortController().signal,
        resumeCommand: 'resume',
        requireResume: true,
      });
      assert.equal(outcome.status, 'finished');
      assert.ok(
        events.some((e) => e.type === 'warning' && /starts again at step 1/.test(e.message)),
        'no word that the run starts over',
      );
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(refDir.path));
      // What the killed process paid stays in the ledger, counted in the totals.
      assert.ok(read(dir.path, 'ledger.jsonl').startsWith(paidBefore));
      assert.ok(spend(dir.path).ledgerCalls >= spend(refDir.path).ledgerCalls);
    } finally {
      await server.close();
      dir.cleanup();
      refDir.cleanup();
    }
  });
});

/** Sorted entries, so a failing deepEqual shows which request or stage differs. */
function entries(m: Map<string, number> | Record<string, number>): Array<[string, number]> {
  return [...(m instanceof Map ? m.entries() : Object.entries(m))].sort(([a], [b]) => a.localeCompare(b));
}

describe('kill and resume: finished work is not paid for twice', function () {
  this.timeout(120_000);
  // The product default: target replies at temperature 0 go through the response cache (a repeat it
  // answers is free); optimizer replies are not cached, so only the run folder can save them.
  let ref: CallLog;
  let reference: ReturnType<typeof comparableHistory>;
  let refDir: ReturnType<typeof tempDir>;
  let refCache: ReturnType<typeof tempDir>;

  before(async () => {
    refDir = tempDir('skillopt-ref-');
    refCache = tempDir('skillopt-ref-cache-');
    const prepared = prepareSimCached(refDir.path, refCache.path);
    ref = new CallLog(prepared);
    const run = await runSim(prepared, undefined, ref);
    assert.equal(run.outcome.status, 'finished');
    reference = comparableHistory(refDir.path);
  });
  after(() => {
    refDir.cleanup();
    refCache.cleanup();
  });

  async function stopAndResume(stop: MidStageStop): Promise<void> {
    const dir = tempDir('skillopt-resume-');
    const cache = tempDir('skillopt-resume-cache-');
    try {
      const inStage = matches(stop);
      const total = ref.calls.filter(inStage).length;
      assert.ok(total > stop.after, `the reference makes only ${total} such calls`);

      const p1 = prepareSimCached(dir.path, cache.path);
      const first = new CallLog(p1, {
        serialize: inStage,
        stopAfterReply: (c, log) =>
          inStage(c) && log.calls.filter((x) => inStage(x) && x.answered).length >= stop.after,
      });
      const r1 = await runSim(p1, undefined, first);
      assert.equal(r1.outcome.status, 'stopped', 'the stop was never reached');
      // The stop is inside the stage: some of its results are kept, some are still to do.
      const kept = stop.kept(dir.path);
      assert.ok(kept > 0 && kept < total, `kept ${kept} of ${total}: the stop did not land mid-stage`);

      const p2 = prepareSimCached(dir.path, cache.path);
      const second = new CallLog(p2);
      const r2 = await runSim(p2, undefined, second);
      assert.equal(r2.outcome.status, 'finished');
      assert.deepEqual(comparableHistory(dir.path), reference);

      // Item / minibatch level: what was kept is not asked for again (not even from the cache).
      assert.equal(
        second.calls.filter(inStage).length,
        total - kept,
        `the resumed run asked again for ${stop.stage} calls the interrupted run had kept`,
      );
      // Stage level: together the two runs paid for exactly what one uninterrupted run pays for.
      const sum: Record<string, number> = { ...first.paidByStage() };
      for (const [k, n] of Object.entries(second.paidByStage())) sum[k] = (sum[k] ?? 0) + n;
      assert.deepEqual(entries(sum), entries(ref.paidByStage()), 'paid calls per stage, both runs vs one');
      // Request level: no reply was paid for twice, and the resumed run asked what a fresh run asks.
      assert.deepEqual(entries(paidKeys(first, second)), entries(paidKeys(ref)));
    } finally {
      dir.cleanup();
      cache.cleanup();
    }
  }

  for (const stop of midStageStops) {
    it(`after a stop ${stop.name}`, () => stopAndResume(stop));
  }

  // The guidance reply is saved on arrival (slow_guidance.json): the gate's stop must not re-ask it.
  it(`after a stop ${slowGateStop.name}`, () => stopAndResume(slowGateStop));

  // A reply already in when the run stops is scored and kept, so it is not paid for again.
  it('keeps a target reply that arrived just before the stop (response cache off)', async () => {
    const dir = tempDir('skillopt-resume-');
    try {
      const stop = midStageStops[0];
      const inStage = matches(stop);
      const p1 = prepareSim(dir.path);
      const first = new CallLog(p1, {
        serialize: inStage,
        stopAfterReply: (c, log) =>
          inStage(c) && log.calls.filter((x) => inStage(x) && x.answered).length >= stop.after,
      });
      assert.equal((await runSim(p1, undefined, first)).outcome.status, 'stopped');
      const received = new Set(first.paid({ step: stop.step }).map((c) => c.key));
      // Every reply the engine received for the stopped stage is on disk...
      assert.equal(stop.kept(dir.path), first.paid({ step: stop.step, stage: stop.stage }).length);
      const p2 = prepareSim(dir.path);
      const second = new CallLog(p2);
      assert.equal((await runSim(p2, undefined, second)).outcome.status, 'finished');
      // ...and none is paid for again.
      const again = second.paid().filter((c) => received.has(c.key) && c.step === stop.step);
      assert.deepEqual(
        again.map((c) => `${c.step}/${c.stage}`),
        [],
        'replies received before the stop were paid again',
      );
    } finally {
      dir.cleanup();
    }
  });
});

describe('kill and resume: meta skill after the slow update', function () {
  this.timeout(120_000);
  // Three epochs so epoch 2 writes a meta skill; the slow update force-accepted so it changes the skill.
  const overrides = ['train.num_epochs=3', 'optimizer.slow_update_gate_with_selection=false'];

  // The meta skill compares with the skill before the slow update, kept as pre_slow_skill.md.
  it('asks for the meta skill with the same skills as an uninterrupted run', async () => {
    const refDir = tempDir('skillopt-ref-');
    const dir = tempDir('skillopt-resume-');
    try {
      const pr = prepareSim(refDir.path, overrides);
      const ref = new CallLog(pr);
      assert.equal((await runSim(pr, undefined, ref)).outcome.status, 'finished');
      const slowDone = readJson<{ action: string }>(
        refDir.path,
        'slow_update',
        'epoch_02',
        'slow_result.json',
      );
      assert.equal(slowDone.action, 'force_accept', 'the slow update must change the skill for this test');
      const refMeta = ref.calls.filter((c) => c.stage === 'meta_skill');
      assert.equal(refMeta.length, 1);

      // Crash after the slow update is saved, before the meta skill (which runs beside it) has its
      // reply: its call is held until the slow update has finished, and the run stops right then.
      let slowFinished = (): void => undefined;
      const slowSaved = new Promise<void>((resolve) => (slowFinished = resolve));
      const p1 = prepareSim(dir.path, overrides);
      const held = new CallLog(p1, { hold: (c) => (c.stage === 'meta_skill' ? slowSaved : undefined) });
      const first = await runSim(
        p1,
        (e) => {
          const done = e.type === 'stage/finished' && e.stage === 'slow_update' && e.epoch === 2;
          if (done) queueMicrotask(slowFinished);
          return done;
        },
        held,
      );
      assert.equal(first.outcome.status, 'stopped');
      assert.equal(held.calls.filter((c) => c.stage === 'meta_skill' && c.answered).length, 0);
      const state = readJson<RuntimeState & { slow_done_epoch?: number }>(dir.path, 'runtime_state.json');
      assert.equal(state.slow_done_epoch, 2);
      assert.ok(!existsSync(join(dir.path, 'meta_skill', 'epoch_02', 'meta_skill_result.json')));

      const p2 = prepareSim(dir.path, overrides);
      const second = new CallLog(p2);
      assert.equal((await runSim(p2, undefined, second)).outcome.status, 'finished');
      const meta = second.calls.filter((c) => c.stage === 'meta_skill');
      assert.equal(meta.length, 1);
      const currentSkill = (c: CallRecord): string => {
        const user = c.request.messages.find((m) => m.role === 'user')?.content ?? '';
        return (
          /## Skill at the End of This Epoch\n<current_skill>\n([\s\S]*?)\n<\/current_skill>/.exec(
            user,
          )?.[1] ?? ''
        );
      };
      assert.ok(currentSkill(refMeta[0]), 'the meta-skill prompt has no current skill block');
      assert.equal(
        currentSkill(meta[0]),
        currentSkill(refMeta[0]),
        'the meta skill sees another "current" skill',
      );
      assert.equal(meta[0].key, refMeta[0].key);
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(refDir.path));
    } finally {
      refDir.cleanup();
      dir.cleanup();
    }
  });
});
