/**
 * Pure shaping of a run's gate history into what the charts and the table draw. No DOM, no
 * Chart.js: render.ts and table.ts only paint these values, and the unit tests check them.
 */
import {
  aaSummary,
  describeGatePower,
  describeGateTest,
  describeItemRegressions,
  describeNoSkill,
  NO_SKILL_OFF,
  noSkillVerdict,
} from '../../protocol/gateText';
import {
  candidateName,
  type CandidateOrigin,
  type EditFate,
  type GateHistoryData,
  type GateStepRow,
} from '../../protocol/webview';
import {
  isAccepted,
  isInconclusive,
  isSkipped,
  verdictKind as kindOfVerdict,
  type VerdictKind as ActionKind,
} from '../../protocol/vocabulary';
import { actionLabel, editTerms, editTitle } from '../../protocol/words';

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

export interface TableEdit {
  id: string;
  title: string;
  /** The engine's terms for the same edit (op, support_count, source_type), for the hover. */
  terms: string;
  /** Optimizer-written text: shown with textContent only. */
  content: string;
  fate: EditFate;
  fateLabel: string;
}

export interface TableRow {
  key: string;
  step: number;
  origin: CandidateOrigin;
  title: string;
  verdict: string;
  verdictKind: VerdictKind;
  human?: string;
  score: string;
  delta: string;
  deltaValue?: number;
  /** What the Δ is, and the paired test's own Δ where the paired gate decided. */
  deltaDetail?: string;
  editsSummary: string;
  edits: TableEdit[];
  canOpen: boolean;
  /** `broke 2`: items the candidate broke that the current skill passes (the per-item rule). */
  regressions?: string;
  /** The per-item rule's whole sentence, with the item ids. */
  regressionsDetail?: string;
}

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

export function verdictKind(action: string): VerdictKind {
  // A candidate its run never decided is not pending any more: it reads (and charts) as not kept.
  if (action === 'interrupted') return 'skip';
  return Object.hasOwn(undecided, action) ? 'pending' : kinds[kindOfVerdict(action)];
}

/** How a row's action reads; other actions (e.g. `no_content`) read as their words. */
export function verdictLabel(action: string): string {
  return Object.hasOwn(undecided, action) ? undecided[action as keyof typeof undecided] : actionLabel(action);
}

const fateLabels: Record<EditFate, string> = {
  kept: 'kept',
  'rejected-by-gate': 'rejected by gate',
  'accepted-by-you': 'accepted by you',
  'rejected-by-you': 'rejected by you',
  skipped: 'not applied',
  pending: 'waiting for the gate',
};

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
  const steps = data.steps.filter((r) => r.origin === 'step' && !Object.hasOwn(undecided, r.action));
  const dollars = steps.length > 0 && steps.every((r) => typeof r.costUsd === 'number');
  const spend: Point[] = [];
  let total = 0;
  for (const row of steps) {
    total += dollars ? (row.costUsd ?? 0) : (row.tokens ?? 0);
    spend.push({ x: row.step, y: total });
  }
  return { spend, unit: dollars ? 'usd' : 'tokens', maxStep: maxStepOf(data) };
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function humanLabel(h: NonNullable<GateStepRow['human']>): string {
  // The whole-candidate answers read as the run's other human verdicts do (protocol/words.ts).
  if (h === 'accept' || h === 'reject') return actionLabel(`human_${h}`);
  return 'you decided per edit';
}

function fateText(e: GateStepRow['edits'][number]): string {
  const base = fateLabels[e.fate];
  if (e.fate === 'skipped' && e.status)
    return `${base} (${e.status.replace(/_/g, ' ')})${e.reason ? `: ${e.reason}` : ''}`;
  if (e.reason) return `${base}: ${e.reason}`;
  return base;
}

function editsSummary(row: GateStepRow): string {
  if (row.origin === 'slow_update') return 'rewrites the protected block';
  if (row.origin === 'meta_reflect' && row.edits.length === 0) return 'edits from the whole epoch';
  if (row.edits.length === 0) return isSkipped(row.action) ? '' : 'no edits';
  const counts = new Map<string, number>();
  for (const e of row.edits) counts.set(fateLabels[e.fate], (counts.get(fateLabels[e.fate]) ?? 0) + 1);
  const parts = [...counts].map(([label, n]) => `${n} ${label}`);
  return `${row.edits.length} edit${row.edits.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

export function tableRows(data: GateHistoryData): TableRow[] {
  return data.steps.map((row) => {
    const delta =
      row.candidateScore !== undefined && row.previousScore !== undefined
        ? row.candidateScore - row.previousScore
        : undefined;
    const out: TableRow = {
      key: rowKey(row),
      step: row.step,
      origin: row.origin,
      title: capitalize(candidateName(row.origin, row.step, row.epoch)),
      verdict: verdictLabel(row.action),
      verdictKind: verdictKind(row.action),
      score: formatScore(row.candidateScore),
      delta: formatDelta(delta),
      editsSummary: editsSummary(row),
      edits: row.edits.map((e) => ({
        id: e.id,
        title: editTitle(e),
        terms: editTerms(e),
        content: e.content ?? e.target ?? '',
        fate: e.fate,
        fateLabel: fateText(e),
      })),
      canOpen: row.hasCandidate,
    };
    if (delta !== undefined) out.deltaValue = delta;
    const t = row.gateTest;
    if (t && delta !== undefined) {
      // The column is mean against mean; the test compares the items both skills answered, with the
      // samples it drew (more_repeats re-samples the current skill), so the two can differ.
      const paired = formatDelta(t.mean_delta);
      out.deltaDetail = `candidate's score − the current score the step started from; the paired test's Δ over the ${t.n} items both skills answered: ${paired}`;
      if (paired !== out.delta) out.delta = `${out.delta} (paired ${paired})`;
    }
    if (row.human) out.human = humanLabel(row.human);
    const broke = row.itemRegressions;
    if (broke?.items.length) {
      out.regressions = `broke ${broke.items.length}${broke.rejected ? ' (rule)' : ''}`;
      out.regressionsDetail = describeItemRegressions(broke);
    }
    return out;
  });
}

/** One line under the title: where the run stands. */
export function summaryLine(data: GateHistoryData): string {
  const rows = data.steps.filter((r) => r.origin === 'step');
  const done = rows.filter((r) => !Object.hasOwn(undecided, r.action)).length;
  const accepted = rows.filter((r) => isAccepted(r.action)).length;
  const best = rows.reduce<number | undefined>(
    (m, r) => (r.bestScore !== undefined ? r.bestScore : m),
    data.baselineScore,
  );
  const parts = [
    data.totalSteps ? `${done} of ${data.totalSteps} steps` : `${done} step${done === 1 ? '' : 's'}`,
    `${accepted} accepted`,
    `best ${formatScore(best)}`,
  ];
  if (data.baselineScore !== undefined) parts.push(`baseline ${formatScore(data.baselineScore)}`);
  if (data.noSkill) parts.push(`no skill ${formatScore(data.noSkill.selection)}`);
  const spend =
    data.spend.dollars !== null
      ? `$${data.spend.dollars.toFixed(2)}`
      : `${data.spend.tokens.toLocaleString('en-US')} tokens`;
  parts.push(data.simulated ? `${spend} (simulated models)` : spend);
  return parts.join(' · ');
}

/**
 * The lines under the summary about the gate itself: what it can tell from noise, the newest A/A
 * check of this run's skills, and whether the skill beats the target alone (or that it was not
 * scored). The words are the CLI's and the report's.
 */
export function gateLines(data: GateHistoryData): string[] {
  const lines: string[] = [];
  if (data.gatePower) lines.push(`Gate: ${describeGatePower(data.gatePower)}.`);
  if (data.aa)
    lines.push(`${aaSummary(data.aa)} (the same skill scored against itself: every accept is noise).`);
  if (data.noSkill) {
    const best = data.steps.reduce<number | undefined>(
      (m, r) => (r.bestScore !== undefined ? r.bestScore : m),
      data.baselineScore,
    );
    lines.push(
      `No skill (the target alone): ${describeNoSkill(data.noSkill)}. ${noSkillVerdict(data.noSkill, { selection: best ?? null })}`,
    );
  } else if (data.noSkillOff) lines.push(NO_SKILL_OFF);
  return lines;
}
