/**
 * Pure shaping of a run's gate history into what the charts draw, and the verdict words the
 * charts and the table share (the table's rows and the header's lines: tableModel.ts). No DOM, no
 * Chart.js: render.ts only paints these values, and the unit tests check them.
 */
import { describeGateTest, describeItemRegressions } from '../../protocol/gateText';
import {
  candidateName,
  type CandidateOrigin,
  type GateHistoryData,
  type GateStepRow,
} from '../../protocol/webview';
import {
  isAccepted,
  isInconclusive,
  verdictKind as kindOfVerdict,
  type VerdictKind as ActionKind,
} from '../../protocol/vocabulary';
import { actionLabel } from '../../protocol/words';

export interface Point {
  x: number;
  y: number;
}

/** A candidate drawn on the score chart, with what the tooltip says about it. */
export interface Marker extends Point {
  key: string;
  label: string;
}

export interface ScoreChartModel {
  best: Point[];
  current: Point[];
  rollout: Point[];
  accepted: Marker[];
  rejected: Marker[];
  /** The paired gate could not tell these from the current skill (not kept). */
  inconclusive: Marker[];
  pending: Marker[];
  human: Marker[];
  /** Slow updates and meta reflections, between the epoch's last step and the next. */
  epochEnd: Marker[];
  /**
   * The paired gate's interval of each candidate's delta, as a vertical bar through its marker:
   * two points per bar, a NaN point between bars so the line breaks.
   */
  errorBars: Point[];
  /** The target alone on the selection split, as a flat line across the run (once it finished). */
  noSkill: Point[];
  /** Last step on the x axis (the run's planned length while it runs). */
  maxStep: number;
  /** The score axis: [0, 1] widened to every plotted value, interval ends included. */
  yRange: { min: number; max: number };
}

export interface BudgetChartModel {
  editBudget: Point[];
  skillTokens: Point[];
  /** Some step had no `skill_tokens`, so its value is the length / 4 estimate. */
  estimatedTokens: boolean;
  maxStep: number;
}

export interface SpendChartModel {
  /** Running total after each step. */
  spend: Point[];
  unit: 'usd' | 'tokens';
  maxStep: number;
}

export type VerdictKind = 'accept' | 'reject' | 'inconclusive' | 'skip' | 'pending';

/**
 * Epoch-end candidates sit between the epoch's last step and the next one on the step axis, in
 * the order the engine runs them: meta reflection, then the slow update.
 */
const epochEndOffset: Record<CandidateOrigin, number> = { step: 0, meta_reflect: 0.33, slow_update: 0.66 };

export function rowKey(row: Pick<GateStepRow, 'step' | 'origin'>): string {
  return `${row.step}:${row.origin}`;
}

/** Rows whose candidate the gate has not decided yet: the gate runs, or the person is asked first. */
const undecided = {
  pending: 'gate running…',
  waiting: 'waiting for your review',
  interrupted: 'not decided: the run ended first',
} as const;

const kinds: Record<ActionKind, VerdictKind> = {
  accepted: 'accept',
  rejected: 'reject',
  inconclusive: 'inconclusive',
  skipped: 'skip',
};

/** A row the gate (or the person) has not decided yet. */
export function isUndecided(action: string): boolean {
  return Object.hasOwn(undecided, action);
}

export function verdictKind(action: string): VerdictKind {
  // A candidate its run never decided is not pending any more: it reads (and charts) as not kept.
  if (action === 'interrupted') return 'skip';
  return Object.hasOwn(undecided, action) ? 'pending' : kinds[kindOfVerdict(action)];
}

/** How a row's action reads; other actions (e.g. `no_content`) read as their words. */
export function verdictLabel(action: string): string {
  return Object.hasOwn(undecided, action) ? undecided[action as keyof typeof undecided] : actionLabel(action);
}

export function formatScore(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(3);
}

export function formatDelta(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '';
  // Scores are shown with 3 decimals; anything smaller reads as no change.
  if (Math.abs(v) < 0.0005) return '±0.000';
  return `${v > 0 ? '+' : '−'}${Math.abs(v).toFixed(3)}`;
}

/** Tokens of the skill: the engine's count when it wrote one, else characters / 4. */
export function skillTokensOf(row: Pick<GateStepRow, 'skillTokens' | 'skillLen'>): number | undefined {
  if (row.skillTokens !== undefined) return row.skillTokens;
  // Four characters per token is the usual rule of thumb for English prose.
  return row.skillLen !== undefined ? Math.round(row.skillLen / 4) : undefined;
}

function xOf(row: GateStepRow): number {
  return row.step + epochEndOffset[row.origin];
}

/** Last step on the axis: the last one seen, or the run's planned length while it runs. */
function maxStepOf(data: GateHistoryData): number {
  const last = data.steps.reduce((m, r) => Math.max(m, r.step), 0);
  return Math.max(last, data.totalSteps ?? 0, 1);
}

function markerLabel(row: GateStepRow): string {
  const test = row.gateTest ? `; ${describeGateTest(row.gateTest)}` : '';
  const broke = row.itemRegressions?.items.length ? `; ${describeItemRegressions(row.itemRegressions)}` : '';
  return `${candidateName(row.origin, row.step, row.epoch)}: ${verdictLabel(row.action)}${test}${broke}`;
}

export function scoreChart(data: GateHistoryData): ScoreChartModel {
  const model: ScoreChartModel = {
    best: [],
    current: [],
    rollout: [],
    accepted: [],
    rejected: [],
    inconclusive: [],
    pending: [],
    human: [],
    epochEnd: [],
    errorBars: [],
    noSkill: [],
    maxStep: maxStepOf(data),
    yRange: { min: 0, max: 1 },
  };
  if (data.noSkill) {
    const y = data.noSkill.selection;
    model.noSkill.push({ x: 0, y }, { x: model.maxStep, y });
  }
  if (data.baselineScore !== undefined) {
    model.best.push({ x: 0, y: data.baselineScore });
    model.current.push({ x: 0, y: data.baselineScore });
  }
  for (const row of data.steps) {
    const x = xOf(row);
    if (row.bestScore !== undefined) model.best.push({ x, y: row.bestScore });
    if (row.currentScore !== undefined) model.current.push({ x, y: row.currentScore });
    if (row.origin === 'step' && row.rolloutScore !== undefined)
      model.rollout.push({ x, y: row.rolloutScore });
    if (row.candidateScore === undefined) {
      if (verdictKind(row.action) === 'pending' && row.previousScore !== undefined) {
        model.pending.push({ x, y: row.previousScore, key: rowKey(row), label: markerLabel(row) });
      }
      continue;
    }
    const marker: Marker = { x, y: row.candidateScore, key: rowKey(row), label: markerLabel(row) };
    const t = row.gateTest;
    if (t) {
      // The delta's interval, placed on the candidate: its score less the delta is the current's.
      // Drawn whole, past 0 or 1 too: a bar cut at the axis would hide how wide the interval is.
      const y = row.candidateScore;
      model.errorBars.push(
        { x, y: y - (t.mean_delta - t.ci_low) },
        { x, y: y + (t.ci_high - t.mean_delta) },
        { x, y: Number.NaN },
      );
    }
    if (row.origin !== 'step') model.epochEnd.push(marker);
    else if (isAccepted(row.action)) model.accepted.push(marker);
    else if (isInconclusive(row.action)) model.inconclusive.push(marker);
    else model.rejected.push(marker);
    if (row.human) model.human.push({ ...marker, label: `${marker.label}; ${humanLabel(row.human)}` });
  }
  const { maxStep: _max, yRange: _range, ...sets } = model;
  const ys = Object.values(sets).flatMap((set: Point[]) => set.map((p) => p.y).filter(Number.isFinite));
  model.yRange = { min: Math.min(0, ...ys), max: Math.max(1, ...ys) };
  return model;
}

export function budgetChart(data: GateHistoryData): BudgetChartModel {
  const model: BudgetChartModel = {
    editBudget: [],
    skillTokens: [],
    estimatedTokens: false,
    maxStep: maxStepOf(data),
  };
  for (const row of data.steps) {
    if (row.origin !== 'step') continue;
    if (typeof row.editBudget === 'number') model.editBudget.push({ x: row.step, y: row.editBudget });
    const tokens = skillTokensOf(row);
    if (tokens !== undefined) {
      model.skillTokens.push({ x: row.step, y: tokens });
      if (row.skillTokens === undefined) model.estimatedTokens = true;
    }
  }
  return model;
}

export function spendChart(data: GateHistoryData): SpendChartModel {
  // Undecided rows (interrupted ones too) have no spend of their own in history.json yet.
  const steps = data.steps.filter((r) => r.origin === 'step' && !isUndecided(r.action));
  const dollars = steps.length > 0 && steps.every((r) => typeof r.costUsd === 'number');
  const spend: Point[] = [];
  let total = 0;
  for (const row of steps) {
    total += dollars ? (row.costUsd ?? 0) : (row.tokens ?? 0);
    spend.push({ x: row.step, y: total });
  }
  return { spend, unit: dollars ? 'usd' : 'tokens', maxStep: maxStepOf(data) };
}

export function humanLabel(h: NonNullable<GateStepRow['human']>): string {
  // The whole-candidate answers read as the run's other human verdicts do (protocol/words.ts).
  if (h === 'accept' || h === 'reject') return actionLabel(`human_${h}`);
  return 'you decided per edit';
}
