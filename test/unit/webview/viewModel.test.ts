import assert from 'node:assert/strict';
import { aaCheckOf, inconclusiveGateTest } from '../../support/gateTest';
import type { GateHistoryData, GateStepRow } from '../../../src/protocol/webview';
import { opaque, scoreConfig, type Palette } from '../../../src/webview/charts/render';
import { gateLines, summaryLine, tableRows } from '../../../src/webview/charts/tableModel';
import {
  budgetChart,
  formatDelta,
  scoreChart,
  skillTokensOf,
  spendChart,
  verdictKind,
} from '../../../src/webview/charts/viewModel';

const step = (over: Partial<GateStepRow> & Pick<GateStepRow, 'step' | 'action'>): GateStepRow => ({
  epoch: 1,
  origin: 'step',
  edits: [],
  hasCandidate: true,
  ...over,
});

const data: GateHistoryData = {
  runId: '/runs/a',
  runName: 'a',
  status: 'finished',
  simulated: true,
  baselineScore: 0.25,
  totalSteps: 4,
  spend: { dollars: null, tokens: 900 },
  steps: [
    step({
      step: 1,
      action: 'accept_new_best',
      candidateScore: 0.5,
      currentScore: 0.5,
      bestScore: 0.5,
      previousScore: 0.25,
      rolloutScore: 0.375,
      editBudget: 3,
      skillTokens: 120,
      tokens: 400,
      edits: [
        {
          id: 'e-1',
          op: 'append',
          content: '<script>alert(1)</script>',
          supportCount: 4,
          sourceType: 'failure',
          fate: 'kept',
        },
        {
          id: 'e-2',
          op: 'replace',
          target: 'x',
          content: 'y',
          fate: 'skipped',
          status: 'skipped_replace_target_not_found',
        },
        {
          id: 'e-3',
          op: 'append',
          content: 'See references/missing.md.',
          fate: 'skipped',
          status: 'skipped_outside_policy',
          reason: 'it links to references/missing.md, which the skill does not have',
        },
      ],
    }),
    step({
      step: 2,
      action: 'reject',
      candidateScore: 0.5,
      currentScore: 0.5,
      bestScore: 0.5,
      previousScore: 0.5,
      rolloutScore: 0.5,
      editBudget: 2,
      skillLen: 1000,
      tokens: 500,
      human: 'accept',
    }),
    step({
      step: 2,
      origin: 'slow_update',
      epoch: 1,
      action: 'reject',
      candidateScore: 0.4,
      previousScore: 0.5,
    }),
    step({ step: 3, action: 'pending', previousScore: 0.5 }),
  ],
};

describe('gate history view model', () => {
  it('draws current and best from the baseline, candidates split by verdict', () => {
    const m = scoreChart(data);
    assert.deepEqual(m.best, [
      { x: 0, y: 0.25 },
      { x: 1, y: 0.5 },
      { x: 2, y: 0.5 },
    ]);
    assert.deepEqual(m.current, m.best);
    assert.deepEqual(
      m.accepted.map((p) => [p.x, p.y, p.key]),
      [[1, 0.5, '1:step']],
    );
    assert.deepEqual(
      m.rejected.map((p) => [p.x, p.y]),
      [[2, 0.5]],
    );
    assert.deepEqual(
      m.epochEnd.map((p) => [p.x, p.y, p.label]),
      [[2.66, 0.4, 'epoch 1 slow update: rejected by the gate']],
    );
    assert.deepEqual(
      m.human.map((p) => [p.x, p.label]),
      [[2, 'step 2: rejected by the gate; you accepted']],
    );
    assert.deepEqual(
      m.pending.map((p) => [p.x, p.y]),
      [[3, 0.5]],
    );
    assert.deepEqual(m.rollout, [
      { x: 1, y: 0.375 },
      { x: 2, y: 0.5 },
    ]);
    assert.equal(m.maxStep, 4);
  });

  it('uses skill_tokens when present and length / 4 otherwise, and says so', () => {
    assert.equal(skillTokensOf({ skillTokens: 120, skillLen: 9999 }), 120);
    assert.equal(skillTokensOf({ skillLen: 1000 }), 250);
    assert.equal(skillTokensOf({}), undefined);
    const b = budgetChart(data);
    assert.deepEqual(b.skillTokens, [
      { x: 1, y: 120 },
      { x: 2, y: 250 },
    ]);
    assert.equal(b.estimatedTokens, true);
    assert.deepEqual(b.editBudget, [
      { x: 1, y: 3 },
      { x: 2, y: 2 },
    ]);
  });

  it('adds up spend in tokens when a price is unknown, in dollars when every step has one', () => {
    assert.deepEqual(spendChart(data), {
      spend: [
        { x: 1, y: 400 },
        { x: 2, y: 900 },
      ],
      unit: 'tokens',
      maxStep: 4,
    });
    const priced = {
      ...data,
      steps: data.steps.map((s) => (s.origin === 'step' ? { ...s, costUsd: 0.25 } : s)),
    };
    assert.deepEqual(spendChart(priced).spend, [
      { x: 1, y: 0.25 },
      { x: 2, y: 0.5 },
    ]);
    assert.equal(spendChart(priced).unit, 'usd');
  });

  it('lists the steps with verdict, delta and each edit with its fate, the edit text as given', () => {
    const rows = tableRows(data);
    assert.deepEqual(
      rows.map((r) => [r.title, r.verdict, r.verdictKind, r.score, r.delta, r.human ?? '']),
      [
        ['Step 1', 'accepted, new best', 'accept', '0.500', '+0.250', ''],
        ['Step 2', 'rejected by the gate', 'reject', '0.500', '±0.000', 'you accepted'],
        ['Epoch 1 slow update', 'rejected by the gate', 'reject', '0.400', '−0.100', ''],
        ['Step 3', 'gate running…', 'pending', '–', '', ''],
      ],
    );
    assert.equal(rows[0]!.editsSummary, '3 edits: 1 kept, 2 not applied');
    assert.deepEqual(rows[0]!.edits[0], {
      id: 'e-1',
      title: 'Add at the end · proposed by 4 analyses · from failed tasks',
      terms: 'append · support_count 4 · source_type failure',
      content: '<script>alert(1)</script>',
      fate: 'kept',
      fateLabel: 'kept',
    });
    assert.equal(rows[0]!.edits[1]!.fateLabel, 'not applied (skipped replace target not found)');
    assert.equal(
      rows[0]!.edits[2]!.fateLabel,
      'not applied (skipped outside policy): it links to references/missing.md, which the skill does not have',
    );
  });

  it('classifies verdicts and formats deltas', () => {
    assert.equal(verdictKind('force_accept'), 'accept');
    assert.equal(verdictKind('skip_no_patches'), 'skip');
    assert.equal(verdictKind('waiting'), 'pending');
    assert.equal(formatDelta(0.0004), '±0.000');
    assert.equal(formatDelta(-0.25), '−0.250');
    assert.equal(formatDelta(undefined), '');
  });

  it('sums up the run in one line', () => {
    assert.equal(
      summaryLine(data),
      '2 of 4 steps · 1 accepted · best 0.500 · baseline 0.250 · 900 tokens (simulated models)',
    );
  });
});

describe('gate history colours', () => {
  it('drops the transparency some themes give chart colours', () => {
    assert.equal(opaque('rgba(234, 92, 0, 0.33)'), 'rgb(234, 92, 0)');
    assert.equal(opaque('#d1861680'), '#d18616');
    assert.equal(opaque('#59a4f9'), '#59a4f9');
    assert.equal(opaque('CanvasText'), 'CanvasText');
  });

  it('draws the interval bars apart from the step grid lines they stand on, in high contrast too', () => {
    // A high-contrast theme: grid lines and muted text both take the foreground.
    const white = '#ffffff';
    const p: Palette = {
      ...{ foreground: white, muted: white, grid: white, background: '#000000', font: 'sans-serif' },
      ...{ blue: '#3794ff', green: '#89d185', red: '#f48771', orange: '#d18616', purple: '#b180d7' },
      ...{ yellow: '#cca700', interval: '#00cdcd', highContrast: true },
    };
    const hooks = { onToggle: () => undefined, onPick: () => undefined };
    const bars = scoreConfig(scoreChart(data), p, new Set(), hooks).datasets.find(
      (d) => d.label === 'gate interval (paired)',
    );
    assert.equal(bars?.borderColor, '#00cdcd');
    assert.notEqual(bars?.borderColor, p.grid);
  });

  it('draws the paired gate’s interval of the delta as an error bar through the candidate, and names it', () => {
    const gateTest = inconclusiveGateTest;
    const m = scoreChart({
      ...data,
      steps: [step({ step: 1, action: 'inconclusive', candidateScore: 0.6, previousScore: 0.5, gateTest })],
    });
    assert.equal(m.errorBars.length, 3);
    assert.ok(Math.abs(m.errorBars[0].y - 0.45) < 1e-12 && Math.abs(m.errorBars[1].y - 0.7) < 1e-12);
    assert.ok(Number.isNaN(m.errorBars[2].y), 'a gap ends each bar');
    assert.deepEqual(
      m.inconclusive.map((p) => p.label),
      [
        'step 1: inconclusive: within noise, not kept; p 0.313 (sign test, 20 items × 1): Δ +0.100, 95% interval [−0.050, +0.200]',
      ],
    );
    assert.equal(verdictKind('inconclusive'), 'inconclusive');
    assert.equal(scoreChart(data).errorBars.length, 0);
  });

  it('draws an interval reaching past a score of 1 whole, and sizes the score axis to show both its ends', () => {
    const gateTest = { ...inconclusiveGateTest, mean_delta: 0.1, ci_low: -0.05, ci_high: 0.3 };
    const m = scoreChart({
      ...data,
      steps: [step({ step: 1, action: 'inconclusive', candidateScore: 0.95, previousScore: 0.85, gateTest })],
    });
    // The bar runs from current + ci_low to current + ci_high: 0.80 to 1.15, not cut at 1.
    assert.ok(Math.abs(m.errorBars[0].y - 0.8) < 1e-12 && Math.abs(m.errorBars[1].y - 1.15) < 1e-12);
    assert.ok(m.yRange.min <= 0 && m.yRange.max >= 1.15, JSON.stringify(m.yRange));
    // Without intervals the axis is the score's own range.
    assert.deepEqual(scoreChart(data).yRange, { min: 0, max: 1 });
  });

  it('shows the paired test’s Δ beside the means’ Δ when they differ, and says which is which', () => {
    const row = (mean_delta: number): ReturnType<typeof tableRows>[number] =>
      tableRows({
        ...data,
        steps: [
          step({
            step: 1,
            action: 'inconclusive',
            candidateScore: 0.6,
            previousScore: 0.5,
            gateTest: { ...inconclusiveGateTest, mean_delta },
          }),
        ],
      })[0]!;
    assert.equal(row(0.1).delta, '+0.100');
    assert.equal(row(0.08).delta, '+0.100 (paired +0.080)');
    assert.match(row(0.08).deltaDetail!, /paired test's Δ over the 20 items both skills answered: \+0\.080$/);
    assert.equal(tableRows(data)[0]!.deltaDetail, undefined);
  });
});

describe('gate history: the gate beside the steps', () => {
  const regressions = { max: 0, items: ['q7', 'q12'], rejected: true };

  it('marks a candidate turned down by the per-item rule in its row and on its marker, with the items', () => {
    const d: GateHistoryData = {
      ...data,
      steps: [
        step({
          step: 1,
          action: 'reject',
          candidateScore: 0.6,
          previousScore: 0.5,
          currentScore: 0.5,
          itemRegressions: regressions,
        }),
      ],
    };
    const [row] = tableRows(d);
    assert.equal(row!.regressions, 'broke 2 (rule)');
    assert.equal(
      row!.regressionsDetail,
      'broke 2 item(s) the current skill passes (at most 0 allowed, so rejected): q7, q12',
    );
    assert.match(
      scoreChart(d).rejected[0]!.label,
      /; broke 2 item\(s\) the current skill passes .*: q7, q12$/,
    );
    assert.equal(tableRows(data)[0]!.regressions, undefined);
  });

  it('draws the target alone as a flat line, names it in the summary, and says what the gate can tell and the A/A check found', () => {
    const d: GateHistoryData = {
      ...data,
      noSkill: { selection: 0.2, test: 0.25 },
      gatePower: { test: 'paired', items: 20, repeats: 1, alpha: 0.05 },
      aa: aaCheckOf(3, 2),
    };
    assert.deepEqual(scoreChart(d).noSkill, [
      { x: 0, y: 0.2 },
      { x: 4, y: 0.2 },
    ]);
    assert.deepEqual(scoreChart(data).noSkill, []);
    assert.match(summaryLine(d), / · baseline 0\.250 · no skill 0\.200 · /);
    const lines = gateLines(d);
    assert.equal(
      lines[0],
      'Gate: paired; 20 items × 1 repeat: only Δ ≥ 0.250 can be told from noise at alpha 0.05; for Δ 0.10, 3 repeats or 50 selection items.',
    );
    assert.match(
      lines[1]!,
      /^A\/A ×3: strict gate accepts 2 of 6 \(33%\), paired 0 \(the same skill scored against itself/,
    );
    assert.match(
      lines[2]!,
      /^No skill \(the target alone\): selection 0\.200, test 0\.250\. The best skill beats no skill at all by \+\d\.\d{3} on selection\.$/,
    );
    assert.deepEqual(gateLines({ ...data, noSkillOff: true }), [
      'The target with no skill at all was not scored (evaluation.no_skill_baseline: false); set it to true to see whether the skill helps at all.',
    ]);
    assert.deepEqual(gateLines(data), []);
  });
});
