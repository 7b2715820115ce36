import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/protocol/events';
import { started } from './events';
import { cutOffWords } from '../../../src/protocol/words';
import { inconclusiveGateTest } from '../../support/gateTest';
import { describeGateTest } from '../../../src/protocol/gateText';
import { readRunFolder, stepArtifacts } from '../../../src/engine/store/runReader';
import type { StepRecord } from '../../../src/protocol/records';
import {
  applyEvent,
  effectiveStatus,
  markInterrupted,
  mergeLive,
  statusText,
  type LiveState,
  type RunView,
} from '../../../src/extension/runs/liveState';
import {
  artifactNodes,
  epochNodes,
  formatDelta,
  formatPromptCache,
  runFileNodes,
  spendLine,
  runNode,
  sortRuns,
  stepNode,
  stepNodes,
  trajectoryNodes,
  verdictOf,
} from '../../../src/extension/runs/treeNodes';

const pythonRun = join(__dirname, '..', '..', 'fixtures', 'skillopt-python-run');

function fold(events: EngineEvent[], start?: LiveState): LiveState {
  let s = start;
  events.forEach((e, i) => {
    s = applyEvent(s, i, e);
  });
  return s!;
}

function record(
  step: number,
  epoch: number,
  action: StepRecord['action'],
  score: number,
  best: number,
): StepRecord {
  return {
    step,
    epoch,
    step_in_epoch: step,
    timing: {},
    tokens: {},
    rollout_hard: 0.5,
    rollout_soft: 0.5,
    rollout_n: 8,
    accumulation_batches: [],
    n_patches: 4,
    n_failure_patches: 3,
    n_success_patches: 1,
    edit_apply_summary: { total: 3, applied: 2, skipped: 1, errors: 0 },
    candidate_gate_score: score,
    action,
    current_score: action === 'reject' ? best : score,
    best_score: best,
    best_step: step,
    skill_len: 100,
    wall_time_s: 1,
  };
}

describe('extension runs: live state from engine events', () => {
  it('follows a run through baseline, a step, spend and the end', () => {
    const s = fold([
      started,
      { type: 'stage/started', step: 0, epoch: 0, stage: 'baseline' },
      { type: 'baseline/scored', hard: 0.5, soft: 0.5, score: 0.5 },
      { type: 'stage/started', step: 1, epoch: 1, stage: 'rollout' },
      { type: 'rollout/progress', step: 1, stage: 'rollout', done: 3, total: 8, hard: 2 },
    ]);
    assert.equal(s.status, 'running');
    assert.equal(s.step, 1);
    assert.equal(s.epoch, 1);
    assert.equal(s.stage, 'rollout');
    assert.deepEqual(s.progress, { done: 3, total: 8 });
    assert.equal(s.baselineScore, 0.5);
    assert.equal(s.bestScore, 0.5);
    assert.equal(s.simulated, true);
    assert.equal(s.totalSteps, 6);

    const t = fold(
      [
        {
          type: 'gate/verdict',
          step: 1,
          epoch: 1,
          origin: 'step',
          action: 'accept_new_best',
          candidateScore: 0.61,
          currentScore: 0.5,
          bestScore: 0.61,
          cacheHit: false,
        },
        { type: 'step/finished', record: record(1, 1, 'accept_new_best', 0.61, 0.61) },
        {
          type: 'accounting',
          totals: {
            calls: 40,
            promptTokens: 900,
            completionTokens: 100,
            cacheHits: 4,
            dollars: 0.25,
            fallbacks: 0,
            cachedTokens: 600,
            cacheSavedDollars: 0.05,
          },
        },
        {
          type: 'run/finished',
          outDir: '/runs/a',
          bestStep: 1,
          bestScore: 0.61,
          baselineScore: 0.5,
          bestSkillPath: '/runs/a/best_skill.md',
        },
      ].map((e) => e as EngineEvent),
      { ...s, seq: -1 },
    );
    assert.equal(t.status, 'finished');
    assert.equal(t.finishedStep, 1);
    assert.equal(t.bestScore, 0.61);
    assert.deepEqual(t.spend, {
      calls: 40,
      tokens: 1000,
      cacheHits: 4,
      dollars: 0.25,
      promptTokens: 900,
      cachedTokens: 600,
      cacheSavedDollars: 0.05,
    });
    assert.equal(formatPromptCache(t.spend), ' · prompt cache 67% of input, saved $0.05');
    assert.equal(t.stage, undefined);
    assert.equal(t.progress, undefined);
  });

  it('says nothing about the prompt cache until it served input, and never a made-up saving', () => {
    const base = { calls: 1, tokens: 10, cacheHits: 0, dollars: 0.1, promptTokens: 8 };
    assert.equal(formatPromptCache({ ...base, cachedTokens: 0, cacheSavedDollars: 0 }), '');
    assert.equal(formatPromptCache({ calls: 1, tokens: 10, cacheHits: 0, dollars: 0.1 }), '');
    assert.equal(
      formatPromptCache({ ...base, cachedTokens: 4, cacheSavedDollars: null }),
      ' · prompt cache 50% of input, saving unknown',
    );
  });

  it('drops stale events but restarts numbering when a run is resumed', () => {
    let s = applyEvent(undefined, 0, started);
    s = applyEvent(s, 5, { type: 'stage/started', step: 2, epoch: 1, stage: 'reflect' });
    const stale = applyEvent(s, 3, { type: 'stage/started', step: 1, epoch: 1, stage: 'rollout' });
    assert.equal(stale, s, 'an older event leaves the state alone');
    s = applyEvent(s, 6, {
      type: 'run/stopped',
      outDir: '/runs/a',
      reason: 'stopped by request',
      resumeCommand: 'x',
    });
    assert.equal(s.status, 'stopped');
    assert.equal(s.message, 'stopped by request');
    const resumed = applyEvent(s, 0, { ...started, resumedFromStep: 3 } as EngineEvent);
    assert.equal(resumed.status, 'running');
    assert.equal(resumed.seq, 0);
    assert.equal(resumed.step, 3);
    assert.equal(resumed.finishedStep, 2);
    assert.equal(resumed.resumedFromStep, 3);
  });

  it('shows steps reported by events before the folder is read again', () => {
    const folder = readRunFolder(pythonRun);
    const live = fold([
      started,
      { type: 'step/finished', record: record(3, 2, 'accept', 0.6, 0.6) },
      { type: 'step/finished', record: record(4, 3, 'reject', 0.5, 0.6) },
      // Already on disk: the folder's record wins.
      { type: 'step/finished', record: record(2, 2, 'accept', 0.9, 0.9) },
    ]);
    const run = mergeLive(folder, live);
    assert.deepEqual(
      run.history.map((r) => [r.step, r.action]),
      [
        [1, 'accept_new_best'],
        [2, 'reject'],
        [3, 'accept'],
        [4, 'reject'],
      ],
    );
    assert.deepEqual(
      run.epochs.map((e) => [e.epoch, e.steps.map((r) => r.step), e.slowUpdate?.action]),
      [
        [1, [1], 'inject_placeholder'],
        [2, [2, 3], 'force_accept'],
        [3, [4], undefined],
      ],
    );
    assert.equal(mergeLive(folder, undefined).history.length, 2);
  });

  it('marks only running runs as interrupted when the engine dies', () => {
    const running = applyEvent(undefined, 0, started);
    const hit = markInterrupted(running, 'the engine process stopped unexpectedly (killed by SIGKILL)');
    assert.equal(hit.status, 'interrupted');
    assert.match(hit.message ?? '', /SIGKILL/);
    const done = applyEvent(running, 1, { type: 'run/failed', message: 'boom', reason: 'llm' });
    assert.equal(markInterrupted(done, 'x'), done);
    // A message the dead engine sent before it died, delivered late, does not revive the run...
    const late = applyEvent(hit, 5, { type: 'stage/started', step: 2, epoch: 1, stage: 'rollout' });
    assert.equal(late.status, 'interrupted');
    // ...a resume does.
    assert.equal(applyEvent(late, 0, started).status, 'running');
  });
});

describe('extension runs: a waiting batch', () => {
  it('shows the evaluation waiting on a provider batch until it ends, and what Stop does', () => {
    const progress = (state: 'running' | 'ended', detail: string, done: number): EngineEvent => ({
      type: 'batch/progress',
      evaluation: 'test',
      provider: 'openai',
      batchId: 'batch_abc',
      state,
      detail,
      done,
      failed: 0,
      total: 10,
      resumed: false,
    });
    const waiting = fold([started, progress('running', 'in_progress', 3)]);
    assert.deepEqual(waiting.batch && [waiting.batch.batchId, waiting.batch.done], ['batch_abc', 3]);
    const run = mergeLive(readRunFolder(pythonRun), waiting);
    const node = runNode(run);
    assert.match(node.description ?? '', /waiting for the test batch 3\/10/);
    assert.match(
      String(node.tooltip),
      /test batch batch_abc \(openai\): in_progress, 3\/10 answered\. Stop leaves the batch running and Resume collects it; to cancel it instead, Stop Run, then Cancel Provider Batch\./,
    );
    const ended = applyEvent(waiting, 2, progress('ended', 'completed', 10));
    assert.equal(ended.batch, undefined);
  });

  it("says a stopped run's spend is a lower bound when a stop cut requests off, in the words the report uses", () => {
    const totals = {
      calls: 12,
      promptTokens: 9000,
      completionTokens: 800,
      cacheHits: 0,
      dollars: 0.076,
      fallbacks: 0,
    };
    const stopped = fold([
      { ...started, simulated: false } as EngineEvent,
      { type: 'accounting', totals: { ...totals, cutOff: 3 } },
      { type: 'run/stopped', outDir: '/runs/a', reason: 'stopped', resumeCommand: 'skillopt train --resume' },
    ]);
    assert.equal(stopped.spend.cutOff, 3);
    const tooltip = String(runNode(mergeLive(readRunFolder(pythonRun), stopped)).tooltip);
    assert.ok(tooltip.includes(`Model calls: 12 · spend ≥ $0.08, ${cutOffWords(3)}`), tooltip);
    assert.match(
      cutOffWords(3),
      /^a lower bound: 3 requests were cut off before their reply \(a stop, limits\.request_timeout_s or an agent target's env\.exec_timeout\), their tokens unknown, and the provider may bill them$/,
    );
    assert.equal(spendLine({ ...stopped.spend, cutOff: 0 }, false), 'Model calls: 12 · spend $0.08');
  });

  it("reads a stopped run's spend from its ledger when no process of this session ran it, cut-off requests included", () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-ledger-view-'));
    try {
      cpSync(pythonRun, dir, { recursive: true });
      const row = {
        session: 's',
        t: 1,
        step: 1,
        phase: 'step',
        kind: 'usage',
        role: 'target',
        model: 'gpt-4o',
      };
      writeFileSync(
        join(dir, 'ledger.jsonl'),
        [
          {
            ...row,
            stage: 'rollout',
            provider: 'openai',
            calls: 10,
            prompt_tokens: 5000,
            completion_tokens: 500,
            dollars: 0.05,
          },
          {
            ...row,
            stage: 'selection',
            provider: 'openai',
            calls: 2,
            prompt_tokens: 900,
            completion_tokens: 90,
            dollars: 0.026,
            cut_off: 2,
          },
        ]
          .map((r) => JSON.stringify(r))
          .join('\n') + '\n',
      );
      const tooltip = String(runNode(readRunFolder(dir)).tooltip);
      assert.ok(tooltip.includes(`Model calls: 12 · spend ≥ $0.08, ${cutOffWords(2)}`), tooltip);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('extension runs: tree nodes', () => {
  it('maps the Python reference run folder to runs, epochs, steps and artifacts', () => {
    const run: RunView = readRunFolder(pythonRun);
    const node = runNode(run);
    assert.equal(node.label, 'skillopt-python-run');
    assert.equal(node.description, 'finished · best 0.550 · Python run');
    assert.equal(node.contextValue, 'skillopt.run.finished');
    assert.deepEqual(node.icon, { id: 'pass', color: 'testing.iconPassed' });

    const epochs = epochNodes(run);
    assert.deepEqual(
      epochs.map((e) => [e.label, e.description]),
      [
        ['Epoch 1', '1 step · 1 accepted · best 0.550'],
        ['Epoch 2', '1 step · 0 accepted · best 0.550'],
      ],
    );
    const rows = epochs.flatMap((e) =>
      stepNodes(run, e.epoch!).map((s) => [s.label, s.description, s.icon?.id]),
    );
    assert.deepEqual(rows, [
      // Step 1 beat the baseline 0.400 by 0.150; step 2's candidate fell 0.050 short of 0.550.
      ['Step 1', '0.550 (+0.150) · 3 edits', 'star-full'],
      ['Slow update', 'empty block added, filled from the next epoch', 'history'],
      ['Meta skill', 'not run after the first epoch', 'lightbulb'],
      ['Step 2', '0.500 (−0.050) · 2 edits', 'close'],
      ['Slow update', 'accepted without the gate', 'history'],
      ['Meta skill', 'written', 'lightbulb'],
    ]);

    // After the epochs, the run's own files: the Python run has a best skill but no report.md.
    assert.deepEqual(
      runFileNodes(run, existsSync).map((f) => [f.label, f.command?.arguments]),
      [['Best skill', [join(run.dir, 'best_skill.md')]]],
    );
    assert.deepEqual(
      runFileNodes(run, () => true).map((f) => f.label),
      ['Report', 'Best skill'],
    );

    const artifacts = artifactNodes(run, 1, stepArtifacts(run.dir, 1));
    assert.deepEqual(
      artifacts.map((a) => [a.label, a.command?.command, a.command?.arguments]),
      [
        ['Candidate diff', 'skillopt.openStepDiff', [run.dir, 1]],
        [
          'Apply report',
          'skillopt.openArtifact',
          [join(run.dir, 'steps', 'step_0001', 'edit_apply_report.json')],
        ],
        ['Merged edits', 'skillopt.openArtifact', [join(run.dir, 'steps', 'step_0001', 'merged_patch.json')]],
      ],
    );
  });

  it('lists failed tasks of a step with their conversations', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-tree-'));
    try {
      cpSync(pythonRun, dir, { recursive: true });
      const rollout = join(dir, 'steps', 'step_0001', 'rollout');
      // The reference (and SkillOpt before prediction_names.json) named the folder of `q/2` `q_2`.
      mkdirSync(join(rollout, 'predictions', 'q_2'), { recursive: true });
      writeFileSync(join(rollout, 'predictions', 'q_2', 'conversation.json'), '[]');
      writeFileSync(
        join(rollout, 'results.jsonl'),
        [
          // Rows as the reference writes them: no `expected`, `response` or `task_description`.
          JSON.stringify({ id: 'q-1', hard: 1, soft: 1.0 }),
          JSON.stringify({ id: 'q/2', hard: 0, soft: 0.0, fail_reason: 'wrong date format' }),
          '',
        ].join('\n'),
      );
      const run: RunView = readRunFolder(dir);
      const a = stepArtifacts(dir, 1);
      const failed = artifactNodes(run, 1, a).find((n) => n.kind === 'trajectories');
      assert.equal(failed?.description, '1');
      const traj = trajectoryNodes(run, 1, a);
      assert.deepEqual(
        traj.map((t) => [t.label, t.description, t.path]),
        [['q/2', 'wrong date format', join(rollout, 'predictions', 'q_2', 'conversation.json')]],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says when a run file is damaged or from a newer SkillOpt, instead of showing a guess', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-tree-'));
    try {
      cpSync(pythonRun, dir, { recursive: true });
      const statePath = join(dir, 'runtime_state.json');
      const state = JSON.parse(readFileSync(statePath, 'utf8')) as Record<string, unknown>;
      writeFileSync(statePath, JSON.stringify({ ...state, schema_version: 99 }));
      const node = runNode(readRunFolder(dir));
      assert.match(node.description ?? '', /unreadable run files/);
      assert.match(node.tooltip ?? '', /newer SkillOpt \(state schema 99/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows the paired gate at an epoch end: the slow update’s and meta reflect’s p-value, interval and broken items', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-tree-epoch-gate-'));
    try {
      cpSync(pythonRun, dir, { recursive: true });
      const slow = join(dir, 'slow_update', 'epoch_02', 'slow_result.json');
      const result = JSON.parse(readFileSync(slow, 'utf8')) as Record<string, unknown>;
      writeFileSync(
        slow,
        JSON.stringify({
          ...result,
          action: 'inconclusive',
          selection_score: 0.6,
          gate_test: inconclusiveGateTest,
        }),
      );
      mkdirSync(join(dir, 'meta_reflect', 'epoch_02'), { recursive: true });
      writeFileSync(
        join(dir, 'meta_reflect', 'epoch_02', 'gate_result.json'),
        JSON.stringify({
          action: 'reject',
          score: 0.5,
          gate_test: { ...inconclusiveGateTest, verdict: 'reject', mean_delta: -0.05, p_value: 0.8 },
          item_regressions: { max: 0, items: ['q1', 'q2'], rejected: true },
        }),
      );
      const run: RunView = readRunFolder(dir);
      const rows = stepNodes(run, 2).filter((n) => n.kind === 'epochEnd');
      assert.deepEqual(
        rows.map((n) => [n.label, n.description]),
        [
          ['Meta reflect', 'rejected by the gate · p 0.800 · broke 2'],
          ['Slow update', 'inconclusive: within noise, not kept · p 0.313'],
          ['Meta skill', 'written'],
        ],
      );
      assert.ok(
        rows[0]!.tooltip?.includes(
          `Paired gate: ${describeGateTest({ ...inconclusiveGateTest, verdict: 'reject', mean_delta: -0.05, p_value: 0.8 })}`,
        ),
        rows[0]!.tooltip,
      );
      assert.ok(rows[0]!.tooltip?.includes('Per-item rule: '), rows[0]!.tooltip);
      assert.ok(
        rows[1]!.tooltip?.includes(`Paired gate: ${describeGateTest(inconclusiveGateTest)}`),
        rows[1]!.tooltip,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows a live run with its step in progress, and sorts it first', () => {
    const folder = readRunFolder(pythonRun);
    const live = fold([
      started,
      { type: 'baseline/scored', hard: 0.4, soft: 0.4, score: 0.4 },
      { type: 'stage/started', step: 3, epoch: 2, stage: 'reflect' },
      {
        type: 'accounting',
        totals: { calls: 12, promptTokens: 1, completionTokens: 1, cacheHits: 0, dollars: 0, fallbacks: 0 },
      },
    ]);
    const run: RunView = { ...folder, dir: '/runs/live', name: 'b-live', status: 'running', live };
    assert.equal(effectiveStatus(run), 'running');
    const node = runNode(run);
    assert.equal(node.description, 'running · step 3/6 · best 0.550 · Python run');
    assert.equal(node.contextValue, 'skillopt.run.live');
    assert.equal(node.collapsible, 'expanded');
    const epoch2 = stepNodes(run, 2);
    assert.deepEqual(
      epoch2.map((s) => [s.label, s.description, s.icon?.id]),
      [
        ['Step 2', '0.500 (−0.050) · 2 edits', 'close'],
        ['Step 3', 'reflect…', 'loading~spin'],
        ['Slow update', 'accepted without the gate', 'history'],
        ['Meta skill', 'written', 'lightbulb'],
      ],
    );
    assert.deepEqual(
      sortRuns([folder, run]).map((r) => r.name),
      ['b-live', 'skillopt-python-run'],
    );
    const stopped: RunView = { ...run, status: 'interrupted', live: { ...live, status: 'stopped' } };
    assert.equal(statusText(stopped), 'stopped');
    assert.equal(runNode(stopped).contextValue, 'skillopt.run.resumable');
  });

  it('names every gate verdict and formats deltas', () => {
    assert.equal(verdictOf('reject').text, 'rejected by the gate');
    assert.equal(verdictOf('accept').icon.id, 'check');
    assert.equal(verdictOf('skip_no_patches').icon.id, 'circle-slash');
    assert.equal(formatDelta(0.1234), '+0.123');
    assert.equal(formatDelta(-0.05), '−0.050');
    assert.equal(formatDelta(0.0001), '±0');
  });

  it('says why a step was skipped instead of counting edits it never applied', () => {
    const run: RunView = readRunFolder(pythonRun);
    const skipped = { ...run.history[0]!, action: 'skip_no_patches', n_patches: 1 } as StepRecord;
    delete skipped.candidate_gate_score;
    delete skipped.edit_apply_summary;
    delete (skipped as { selection_hard?: number }).selection_hard;
    assert.equal(stepNode(run, skipped).description, 'skipped: no edits proposed');
  });

  it('counts the items the target could not answer apart from the scores, in the row and the hover', () => {
    const run: RunView = readRunFolder(pythonRun);
    const r: StepRecord = { ...record(2, 1, 'reject', 0.5, 0.6), rollout_errored: 3, selection_errored: 1 };
    const node = stepNode(run, r);
    assert.match(node.description ?? '', /· 4 not answered/);
    assert.match(
      String(node.tooltip),
      /Not answered by the target \(kept out of the scores\): 3 train, 1 selection/,
    );
    assert.doesNotMatch(stepNode(run, record(2, 1, 'reject', 0.5, 0.6)).description ?? '', /not answered/);
  });

  it('shows an inconclusive step with its p-value, broken items and the whole test in the hover', () => {
    const run: RunView = readRunFolder(pythonRun);
    const r: StepRecord = {
      ...record(3, 1, 'inconclusive', 0.6, 0.7),
      gate_test: {
        test: 'sign',
        n: 20,
        repeats: 2,
        improved: 4,
        regressed: 2,
        mean_delta: 0.05,
        p_value: 0.34375,
        exact: true,
        alpha: 0.05,
        ci_low: -0.05,
        ci_high: 0.15,
        verdict: 'inconclusive',
      },
      item_regressions: { max: 3, items: ['q1', 'q9'], rejected: false },
    };
    const node = stepNode(run, r);
    assert.equal(node.icon?.id, 'question');
    assert.match(node.description ?? '', /p 0\.344 · broke 2/);
    assert.match(String(node.tooltip), /inconclusive: within noise, not kept/);
    assert.match(
      String(node.tooltip),
      /Paired gate: p 0\.344 \(sign test, 20 items × 2\): Δ \+0\.050, 95% interval \[−0\.050, \+0\.150\]/,
    );
    assert.match(
      String(node.tooltip),
      /broke 2 item\(s\) the current skill passes \(at most 3 allowed\): q1, q9/,
    );
  });
});
