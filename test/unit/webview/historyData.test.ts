import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/protocol/events';
import { readRunFolder } from '../../../src/engine/store/runReader';
import { DecisionStore, type MementoLike } from '../../../src/extension/review/decisionStore';
import {
  candidatePathOf,
  epochEndsOf,
  metaReflectEdits,
  overrulesOf,
  stepEdits,
} from '../../../src/extension/review/runFiles';
import { buildGateHistory, LiveRun, type HistoryInput } from '../../../src/extension/webview/historyData';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { writeJsonAtomic } from '../../../src/engine/store/atomic';
import { RunLayout, STEP_FILE } from '../../../src/engine/store/layout';
import { verdictKind, verdictLabel } from '../../../src/webview/charts/viewModel';
import { prepareSim, runSim, tempDir } from '../train/helpers';
import { aaCheckOf } from '../../support/gateTest';
import { askBeforeGate } from '../../support/reviewEvents';

const aaCheck = aaCheckOf(4, 5);

class Memory implements MementoLike {
  private readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, JSON.parse(JSON.stringify(value)));
    return Promise.resolve();
  }
}

function folderInput(dir: string, extra: Partial<HistoryInput> = {}): HistoryInput {
  return {
    runId: dir,
    run: readRunFolder(dir),
    live: undefined,
    decisions: {},
    stepEdits: (step) => stepEdits(dir, step),
    stepHasCandidate: (step) => existsSync(candidatePathOf(dir, step, 'step')),
    epochEnds: () =>
      epochEndsOf(dir).map((e) =>
        e.origin === 'meta_reflect' ? { ...e, edits: metaReflectEdits(dir, e.epoch) } : e,
      ),
    overrules: () => overrulesOf(dir),
    ...extra,
  };
}

describe('gate history data', function () {
  this.timeout(60_000);
  const tmp = tempDir('skillopt-history-');
  let events: EngineEvent[] = [];

  before(async () => {
    events = (await runSim(prepareSim(tmp.path))).events;
  });
  after(() => tmp.cleanup());

  it('reads a finished run folder: one row per step and slow update, scores chained from the baseline', () => {
    const data = buildGateHistory(folderInput(tmp.path));
    const history = readRunFolder(tmp.path).history;
    const steps = data.steps.filter((r) => r.origin === 'step');
    assert.deepEqual(
      steps.map((r) => [r.step, r.action, r.candidateScore, r.currentScore]),
      history.map((h) => [h.step, h.action, h.candidate_gate_score, h.current_score]),
    );
    assert.equal(data.status, 'finished');
    assert.equal(data.simulated, true);
    assert.equal(steps[0]!.previousScore, data.baselineScore);
    for (let i = 1; i < steps.length; i++) assert.equal(steps[i]!.previousScore, steps[i - 1]!.currentScore);
    const first = steps[0]!;
    assert.ok(first.edits.length > 0, 'edits come from the step folder');
    assert.ok(
      first.edits.every((e) => e.fate === (first.action.startsWith('accept') ? 'kept' : 'rejected-by-gate')),
    );
    const ends = data.steps.filter((r) => r.origin !== 'step').map((r) => `${r.step}:${r.origin}`);
    const liveEnds = events.flatMap((e) =>
      e.type === 'candidate/ready' && e.origin !== 'step' ? [`${e.step}:${e.origin}`] : [],
    );
    assert.deepEqual(ends, liveEnds);
    assert.ok(data.spend.tokens > 0);
  });

  it('carries the power check, the target alone and the newest A/A check from the run folder, and the power live', () => {
    const summary = readRunFolder(tmp.path).summary!;
    const data = buildGateHistory(folderInput(tmp.path, { aa: () => aaCheck }));
    assert.deepEqual(data.gatePower, { test: 'strict', items: 19, repeats: 1, alpha: 0.05 });
    assert.deepEqual(data.noSkill, {
      selection: summary.no_skill_selection_hard,
      test: summary.no_skill_test_hard,
    });
    assert.equal(data.noSkillOff, undefined);
    assert.equal(data.aa, aaCheck);
    const live = new LiveRun();
    for (const e of events) live.apply(e);
    const fromEvents = buildGateHistory({ ...folderInput(tmp.path), run: undefined, live });
    assert.deepEqual(fromEvents.gatePower, data.gatePower, 'run/started carries it before summary.json');
  });

  it('shows the same steps from live events alone, while the run folder is not read yet', () => {
    const live = new LiveRun();
    for (const e of events) live.apply(e);
    const fromLive = buildGateHistory({ ...folderInput(tmp.path), run: undefined, live });
    const fromFolder = buildGateHistory(folderInput(tmp.path));
    const strip = (d: typeof fromLive): unknown[] =>
      d.steps.map((r) => [r.step, r.origin, r.action, r.candidateScore, r.edits.map((e) => [e.id, e.fate])]);
    assert.deepEqual(strip(fromLive), strip(fromFolder));
    assert.equal(fromLive.baselineScore, fromFolder.baselineScore);
    assert.equal(fromLive.status, 'finished');
  });

  it("gives a skipped edit the apply report's reason", () => {
    const reason = 'it links to references/missing.md, which the skill does not have';
    const data = buildGateHistory({
      ...folderInput(tmp.path),
      stepEdits: () => [{ id: 'e-x', op: 'append', status: 'skipped_outside_policy', status_reason: reason }],
    });
    const edit = data.steps.find((r) => r.origin === 'step')?.edits[0];
    assert.deepEqual([edit?.fate, edit?.reason], ['skipped', reason]);
    // Read back from a step folder, as a finished run's history is.
    const run = new RunLayout(mkdtempSync(join(tmpdir(), 'skillopt-reason-')));
    writeJsonAtomic(run.stepFile(1, STEP_FILE.ranked), {
      edits: [{ id: 'e-x', op: 'append', content: 'c' }],
    });
    writeJsonAtomic(run.stepFile(1, STEP_FILE.applyReport), [
      { index: 1, id: 'e-x', op: 'append', status: 'skipped_outside_policy', error: reason },
    ]);
    assert.equal(stepEdits(run.root, 1)[0]?.status_reason, reason);
  });

  it('marks a step still under the gate as pending', () => {
    const live = new LiveRun();
    const cut = events.findIndex((e) => e.type === 'candidate/ready');
    for (const e of events.slice(0, cut + 1)) live.apply(e);
    const data = buildGateHistory({ ...folderInput(tmp.path), run: undefined, live, stepEdits: () => [] });
    const row = data.steps.find((r) => r.origin === 'step');
    assert.equal(row?.action, 'pending');
    assert.equal(data.status, 'running');
    assert.ok(row?.edits.every((e) => e.fate === 'pending' || e.fate === 'skipped'));
  });

  it('reads a step the person was asked about as not decided once the run stopped, as the header does', () => {
    const live = new LiveRun();
    const cut = events.findIndex((e) => e.type === 'candidate/ready' && e.origin === 'step');
    for (const e of events.slice(0, cut + 1)) live.apply(e);
    const ready = events[cut] as Extract<EngineEvent, { type: 'candidate/ready' }>;
    live.apply(askBeforeGate(ready));
    const input = { ...folderInput(tmp.path), run: undefined, live, stepEdits: () => [] };
    assert.equal(buildGateHistory(input).steps.find((r) => r.origin === 'step')?.action, 'waiting');
    live.apply({ type: 'run/stopped', outDir: tmp.path, reason: 'stopped by request', resumeCommand: 'r' });
    const data = buildGateHistory(input);
    const row = data.steps.find((r) => r.origin === 'step');
    assert.equal(data.status, 'stopped');
    assert.equal(row?.action, 'interrupted');
    assert.equal(verdictLabel(row.action), 'not decided: the run ended first');
    assert.equal(verdictKind(row.action), 'skip');
    assert.ok(
      row.edits.every((e) => e.fate === 'skipped'),
      'no edit still waits for the gate',
    );
  });

  it("shows the person's decisions as human markers with reasons on the edits", async () => {
    const store = new DecisionStore(new Memory());
    const first = buildGateHistory(folderInput(tmp.path)).steps[0]!;
    const rejected = first.edits[0]!.id;
    await store.record(tmp.path, 'step', {
      runId: tmp.path,
      step: first.step,
      decisions: [{ editId: rejected, accept: false, reason: 'too long' }],
      candidate: 'reject',
    });
    const data = buildGateHistory(folderInput(tmp.path, { decisions: store.forRun(tmp.path) }));
    const row = data.steps[0]!;
    assert.equal(row.human, 'reject');
    assert.deepEqual(
      row.edits.filter((e) => e.id === rejected).map((e) => [e.fate, e.reason]),
      [['rejected-by-you', 'too long']],
    );
  });
});

describe('gate history data: the paired gate at epoch ends', function () {
  this.timeout(60_000);
  const tmp = tempDir('skillopt-history-paired-');
  let events: EngineEvent[] = [];

  before(async () => {
    const overrides = ['evaluation.gate_test=paired', 'evaluation.max_item_regressions=2'];
    events = (await runSim(prepareSim(tmp.path, overrides))).events;
  });
  after(() => tmp.cleanup());

  it('keeps the slow update’s test and broken items in the run folder: a reopened Gate History shows them as the live one did', () => {
    const live = events.flatMap((e) =>
      e.type === 'gate/verdict' && e.origin === 'slow_update' && e.gateTest ? [e] : [],
    );
    assert.ok(live.length > 0, 'a slow update went through the paired gate');
    const rows = buildGateHistory(folderInput(tmp.path)).steps.filter((r) => r.origin === 'slow_update');
    for (const v of live) {
      const row = rows.find((r) => r.step === v.step);
      assert.deepEqual(row?.gateTest, v.gateTest, `slow update after step ${v.step}`);
      assert.deepEqual(row?.itemRegressions, v.itemRegressions);
    }
    // The live view (events only, the folder not read yet) shows the broken items too.
    const liveRun = new LiveRun();
    for (const e of events) liveRun.apply(e);
    const liveRows = buildGateHistory(folderInput(tmp.path, { run: undefined, live: liveRun })).steps;
    for (const v of live)
      assert.deepEqual(
        liveRows.find((r) => r.origin === 'slow_update' && r.step === v.step)?.itemRegressions,
        v.itemRegressions,
      );
  });
});

describe('gate history data: a Python reference run', () => {
  it('reads its history and edits', () => {
    const dir = join(__dirname, '../../fixtures/skillopt-python-run');
    const data = buildGateHistory(folderInput(dir));
    assert.deepEqual(
      data.steps
        .filter((r) => r.origin === 'step')
        .map((r) => [r.step, r.action, r.edits.length, r.editBudget]),
      [
        [1, 'accept_new_best', 3, 3],
        [2, 'reject', 2, 2],
      ],
    );
    assert.equal(data.steps[0]!.skillTokens, undefined, 'the reference writes no skill_tokens');
    assert.equal(data.steps[0]!.skillLen, 674);
  });
});

describe('review decisions remembered for the Gate History', () => {
  it('puts a step back as it was when the run refused the decision (it answered a question no longer asked)', async () => {
    const store = new DecisionStore(new Memory());
    const heard: string[] = [];
    store.onDidChange((run) => heard.push(run));
    await store.record('/runs/a', 'step', {
      runId: '/runs/a',
      step: 1,
      decisions: [{ editId: 'e-1', accept: true }],
      candidate: 'accept',
    });
    const prior = store.stepOf('/runs/a', 'step', 1);
    const untouched = store.stepOf('/runs/a', 'step', 2);
    assert.equal(untouched, undefined);
    await store.record('/runs/a', 'step', {
      runId: '/runs/a',
      step: 1,
      questionId: 'q-old',
      decisions: [{ editId: 'e-1', accept: false, reason: 'stale' }],
      candidate: 'reject',
    });
    await store.record('/runs/a', 'step', {
      runId: '/runs/a',
      step: 2,
      questionId: 'q-old-2',
      decisions: [{ editId: 'e-2', accept: false }],
    });
    await store.restore('/runs/a', 'step', 1, prior);
    await store.restore('/runs/a', 'step', 2, untouched);
    assert.deepEqual(store.forRun('/runs/a'), {
      'step:1': { edits: { 'e-1': { accept: true } }, candidate: 'accept' },
    });
    assert.deepEqual(heard, ['/runs/a', '/runs/a', '/runs/a', '/runs/a', '/runs/a'], 'every view redraws');
  });
});
