/**
 * The Gate History's data for one run, merged from the run folder (history records, step files)
 * and from the live events of a run in progress, plus the person's own review decisions. Pure
 * apart from the injected file readers, so it is unit-tested on real run folders.
 */
import type { AccountingTotals, CandidateEdit, EngineEvent } from '../../protocol/events';
import type { RunFolder } from '../../engine/store/runReader';
import type {
  AaRecord,
  ActivationRecord,
  GateTestRecord,
  ItemRegressions,
  StepRecord,
} from '../../protocol/records';
import { gateFactsOf } from '../../engine/store/gateFacts';
import type {
  CandidateOrigin,
  EditFate,
  GateEditRow,
  GateHistoryData,
  GateStepRow,
} from '../../protocol/webview';
import { stepKey, type RunDecisions, type StepDecision } from '../review/decisionStore';
import {
  isAccepted,
  isSkipped,
  type CandidateDecision,
  type OverruleDecision,
} from '../../protocol/vocabulary';

type Ready = Extract<EngineEvent, { type: 'candidate/ready' }>;
type Verdict = Extract<EngineEvent, { type: 'gate/verdict' }>;
type Started = Extract<EngineEvent, { type: 'run/started' }>;

/** What the live events of one run told us so far. */
export class LiveRun {
  started: Started | undefined;
  baseline: number | undefined;
  readonly records = new Map<number, StepRecord>();
  readonly candidates = new Map<string, Ready>();
  readonly verdicts = new Map<string, Verdict>();
  accounting: AccountingTotals | undefined;
  ended: 'finished' | 'stopped' | 'failed' | undefined;
  /** Overrules the engine applied (gate verdicts with origin `human`). */
  readonly overrules = new Map<number, CandidateDecision>();
  /** Review answers the engine confirmed with `review/decided`. */
  readonly reviews = new Map<number, { decision: string; rejectedEdits: string[] }>();
  /** The step whose review the engine is waiting for. */
  waitingStep: number | undefined;
  /** Activation-track verdicts by epoch. */
  readonly activation = new Map<number, ActivationRecord>();

  /** Returns whether the event changes what the Gate History shows. */
  apply(event: EngineEvent): boolean {
    switch (event.type) {
      case 'run/started':
        this.started = event;
        this.ended = undefined;
        return true;
      case 'baseline/scored':
        this.baseline = event.score;
        return true;
      case 'candidate/ready':
        this.candidates.set(stepKey(event.step, event.origin), event);
        return true;
      case 'gate/verdict':
        if (event.origin === 'final') return false;
        if (event.origin === 'human') {
          this.overrules.set(event.step, isAccepted(event.action) ? 'accept' : 'reject');
          return true;
        }
        this.verdicts.set(stepKey(event.step, event.origin), event);
        return true;
      case 'review/requested':
        this.waitingStep = event.step;
        return true;
      case 'review/decided':
        this.reviews.set(event.step, { decision: event.decision, rejectedEdits: event.rejectedEdits });
        if (this.waitingStep === event.step) this.waitingStep = undefined;
        return true;
      case 'step/finished':
        this.records.set(event.record.step, event.record);
        return true;
      case 'activation/verdict':
        this.activation.set(event.record.epoch, event.record);
        return true;
      case 'accounting':
        this.accounting = event.totals;
        return true;
      case 'run/finished':
      case 'run/stopped':
      case 'run/failed':
        this.ended =
          event.type === 'run/finished' ? 'finished' : event.type === 'run/stopped' ? 'stopped' : 'failed';
        // Nobody waits for a review of a run that ended.
        this.waitingStep = undefined;
        return true;
      default:
        return false;
    }
  }
}

/**
 * A candidate without a verdict: the gate runs, the person is asked, or (the run ended first) it
 * never will be decided, so the table agrees with the header's "stopped".
 */
function undecidedAction(live: LiveRun | undefined, step: number): 'pending' | 'waiting' | 'interrupted' {
  if (live?.ended) return 'interrupted';
  return live?.waitingStep === step ? 'waiting' : 'pending';
}

/** An epoch-end stage (meta reflection, slow update) as its run folder records it. */
export interface EpochEndInfo {
  origin: Exclude<CandidateOrigin, 'step'>;
  epoch: number;
  step: number;
  action: string;
  score?: number;
  hasCandidate: boolean;
  edits?: CandidateEdit[];
  gateTest?: GateTestRecord;
  itemRegressions?: ItemRegressions;
}

export interface HistoryInput {
  runId: string;
  run: RunFolder | undefined;
  live: LiveRun | undefined;
  decisions: RunDecisions;
  /** Edits of a finished step, from its folder. */
  stepEdits(step: number): CandidateEdit[];
  stepHasCandidate(step: number): boolean;
  epochEnds(): EpochEndInfo[];
  /** Overrules recorded in the run folder (`human_decisions.json`). */
  overrules(): Array<{ step: number; decision: OverruleDecision; reason?: string }>;
  /** The newest A/A check kept in the run folder, if any. */
  aa?(): AaRecord | undefined;
}

/** Everything known about the person's part in one step, from every source. */
interface HumanView {
  decision?: StepDecision;
  review?: StepRecord['review'];
  liveReview?: { decision: string; rejectedEdits: string[] };
  overrule?: CandidateDecision;
}

function humanOf(h: HumanView): GateStepRow['human'] {
  if (h.overrule) return h.overrule;
  const d = h.decision;
  if (d) {
    if (d.candidate) return d.candidate;
    const values = Object.values(d.edits);
    if (values.length > 0) {
      if (values.every((v) => v.accept)) return 'accept';
      if (values.every((v) => !v.accept)) return 'reject';
      return 'mixed';
    }
  }
  switch (h.review?.decision ?? h.liveReview?.decision) {
    case 'human_accept':
    case 'human_kept_all':
      return 'accept';
    case 'human_reject':
      return 'reject';
    case 'human_pruned':
      return 'mixed';
    default:
      return undefined;
  }
}

function fateOf(edit: CandidateEdit, action: string, h: HumanView): { fate: EditFate; reason?: string } {
  if (edit.status && !edit.status.startsWith('applied'))
    return { fate: 'skipped', ...(edit.status_reason ? { reason: edit.status_reason } : {}) };
  const mine = h.decision?.edits[edit.id];
  if (mine)
    return {
      fate: mine.accept ? 'accepted-by-you' : 'rejected-by-you',
      ...(mine.reason ? { reason: mine.reason } : {}),
    };
  const recorded = h.review?.rejected_edits?.find((r) => r.id === edit.id);
  if (recorded || h.liveReview?.rejectedEdits.includes(edit.id)) {
    return { fate: 'rejected-by-you', ...(recorded?.reason ? { reason: recorded.reason } : {}) };
  }
  const whole = h.overrule ?? h.decision?.candidate;
  if (whole) return { fate: whole === 'accept' ? 'accepted-by-you' : 'rejected-by-you' };
  if (h.review?.decision === 'human_accept' || h.review?.decision === 'human_kept_all')
    return { fate: 'accepted-by-you' };
  if (h.review?.decision === 'human_pruned')
    return { fate: isAccepted(action) ? 'accepted-by-you' : 'rejected-by-gate' };
  if (action === 'pending' || action === 'waiting') return { fate: 'pending' };
  if (action === 'interrupted') return { fate: 'skipped' };
  return { fate: isAccepted(action) ? 'kept' : 'rejected-by-gate' };
}

function editRows(edits: readonly CandidateEdit[], action: string, h: HumanView): GateEditRow[] {
  return edits.map((e) => ({
    id: e.id,
    op: e.op,
    ...(e.target !== undefined ? { target: e.target } : {}),
    ...(e.content !== undefined ? { content: e.content } : {}),
    ...(e.support_count !== undefined ? { supportCount: e.support_count } : {}),
    ...(e.source_type !== undefined ? { sourceType: e.source_type } : {}),
    ...(e.status !== undefined ? { status: e.status } : {}),
    ...fateOf(e, action, h),
  }));
}

function tokensOf(r: StepRecord): number {
  let n = 0;
  for (const t of Object.values(r.tokens ?? {})) n += (t.prompt_tokens ?? 0) + (t.completion_tokens ?? 0);
  return n;
}

export function buildGateHistory(input: HistoryInput): GateHistoryData {
  const { run, live, decisions } = input;
  const records = new Map<number, StepRecord>();
  for (const r of run?.history ?? []) records.set(r.step, r);
  for (const [step, r] of live?.records ?? []) records.set(step, r);
  const gateMetric = typeof run?.config.gate_metric === 'string' ? run.config.gate_metric : undefined;
  const overrules = new Map<number, CandidateDecision>();
  for (const o of input.overrules()) overrules.set(o.step, o.decision === 'accept' ? 'accept' : 'reject');
  for (const [step, o] of live?.overrules ?? []) overrules.set(step, o);
  const humanAt = (step: number, origin: CandidateOrigin, record?: StepRecord): HumanView => {
    const h: HumanView = {};
    const d = decisions[stepKey(step, origin)];
    if (d) h.decision = d;
    if (origin === 'step') {
      if (record?.review) h.review = record.review;
      const lr = live?.reviews.get(step);
      if (lr) h.liveReview = lr;
      const o = overrules.get(step);
      if (o) h.overrule = o;
    }
    return h;
  };
  const baselineScore = live?.baseline ?? run?.baselineScore;

  const rows: GateStepRow[] = [];
  for (const r of [...records.values()].sort((a, b) => a.step - b.step)) {
    const key = stepKey(r.step, 'step');
    const h = humanAt(r.step, 'step', r);
    const liveEdits = live?.candidates.get(key)?.edits;
    const edits = isSkipped(r.action) ? [] : (liveEdits ?? input.stepEdits(r.step));
    const row: GateStepRow = {
      step: r.step,
      epoch: r.epoch,
      origin: 'step',
      action: r.action,
      currentScore: r.current_score,
      bestScore: r.best_score,
      rolloutScore: gateMetric === 'soft' ? r.rollout_soft : r.rollout_hard,
      skillLen: r.skill_len,
      tokens: tokensOf(r),
      edits: editRows(edits, r.action, h),
      hasCandidate: liveEdits !== undefined || input.stepHasCandidate(r.step),
    };
    if (r.candidate_gate_score !== undefined) row.candidateScore = r.candidate_gate_score;
    if (r.edit_budget !== undefined) row.editBudget = r.edit_budget;
    if (r.skill_tokens !== undefined) row.skillTokens = r.skill_tokens;
    if (r.cost_usd !== undefined) row.costUsd = r.cost_usd;
    if (r.gate_test) row.gateTest = r.gate_test;
    if (r.item_regressions) row.itemRegressions = r.item_regressions;
    const human = humanOf(h);
    if (human) row.human = human;
    rows.push(row);
  }

  // A step still in flight: its candidate (and maybe the verdict) arrived before its record.
  for (const [key, ev] of live?.candidates ?? []) {
    if (ev.origin !== 'step' || records.has(ev.step)) continue;
    const v = live?.verdicts.get(key);
    const action = v?.action ?? undecidedAction(live, ev.step);
    const h = humanAt(ev.step, 'step');
    const row: GateStepRow = {
      step: ev.step,
      epoch: ev.epoch,
      origin: 'step',
      action,
      edits: editRows(ev.edits, action, h),
      hasCandidate: true,
    };
    if (v) {
      row.candidateScore = v.candidateScore;
      row.currentScore = v.currentScore;
      row.bestScore = v.bestScore;
      if (v.gateTest) row.gateTest = v.gateTest;
      if (v.itemRegressions) row.itemRegressions = v.itemRegressions;
    }
    const human = humanOf(h);
    if (human) row.human = human;
    rows.push(row);
  }

  const endRows = new Map<string, GateStepRow>();
  for (const e of input.epochEnds()) {
    if (!e.hasCandidate) continue;
    const key = stepKey(e.step, e.origin);
    const h = humanAt(e.step, e.origin);
    const row: GateStepRow = {
      step: e.step,
      epoch: e.epoch,
      origin: e.origin,
      action: e.action,
      edits: editRows(e.edits ?? [], e.action, h),
      hasCandidate: true,
    };
    if (e.score !== undefined) row.candidateScore = e.score;
    if (e.gateTest) row.gateTest = e.gateTest;
    if (e.itemRegressions) row.itemRegressions = e.itemRegressions;
    const human = humanOf(h);
    if (human) row.human = human;
    endRows.set(key, row);
  }
  for (const [key, ev] of live?.candidates ?? []) {
    if (ev.origin === 'step') continue;
    const v = live?.verdicts.get(key);
    const action = v?.action ?? endRows.get(key)?.action ?? undecidedAction(live, ev.step);
    const h = humanAt(ev.step, ev.origin);
    const row: GateStepRow = {
      ...(endRows.get(key) ?? { step: ev.step, epoch: ev.epoch, origin: ev.origin, hasCandidate: true }),
      action,
      edits: editRows(ev.edits, action, h),
    };
    if (v) {
      row.candidateScore = v.candidateScore;
      row.currentScore = v.currentScore;
      row.bestScore = v.bestScore;
      if (v.gateTest) row.gateTest = v.gateTest;
      if (v.itemRegressions) row.itemRegressions = v.itemRegressions;
    }
    endRows.set(key, row);
  }
  rows.push(...endRows.values());
  const order: Record<CandidateOrigin, number> = { step: 0, meta_reflect: 1, slow_update: 2 };
  rows.sort((a, b) => a.step - b.step || order[a.origin] - order[b.origin]);

  // What each candidate had to beat: the current score after the row before it.
  let before = baselineScore;
  for (const row of rows) {
    if (before !== undefined) row.previousScore = before;
    if (row.currentScore !== undefined) before = row.currentScore;
  }

  const stepTokens = rows.reduce((n, r) => n + (r.tokens ?? 0), 0);
  const liveTokens = live?.accounting
    ? live.accounting.promptTokens + live.accounting.completionTokens
    : undefined;
  const costs = rows.filter((r) => r.origin === 'step').map((r) => r.costUsd);
  const dollars =
    live?.accounting !== undefined
      ? live.accounting.dollars
      : costs.length > 0 && costs.every((c): c is number => typeof c === 'number')
        ? costs.reduce((a, b) => a + b, 0)
        : null;

  const status = live?.ended ?? (live?.started && !live.ended ? 'running' : (run?.status ?? 'unknown'));
  const simulated =
    live?.started?.simulated ??
    (run?.config.optimizer_backend === 'sim' || run?.config.target_backend === 'sim');
  const totalSteps =
    live?.started?.totalSteps ??
    (Number(run?.config.num_epochs ?? 0) * Number(run?.config.steps_per_epoch ?? 0) || undefined);

  const data: GateHistoryData = {
    runId: input.runId,
    runName: run?.name ?? input.runId.split(/[\\/]/).filter(Boolean).at(-1) ?? input.runId,
    status,
    simulated,
    steps: rows,
    spend: { dollars, tokens: liveTokens ?? stepTokens },
  };
  const activation = new Map((run?.activation ?? []).map((a) => [a.epoch, a]));
  for (const [epoch, a] of live?.activation ?? []) activation.set(epoch, a);
  if (activation.size) data.activation = [...activation.values()].sort((a, b) => a.epoch - b.epoch);
  const facts = gateFactsOf(run?.summary);
  const power = live?.started?.gatePower ?? facts.gatePower;
  if (power) data.gatePower = power;
  if (facts.noSkill) data.noSkill = facts.noSkill;
  if (facts.noSkillOff) data.noSkillOff = true;
  const aa = input.aa?.();
  if (aa) data.aa = aa;
  if (gateMetric) data.gateMetric = gateMetric;
  if (baselineScore !== undefined) data.baselineScore = baselineScore;
  if (totalSteps !== undefined) data.totalSteps = totalSteps;
  return data;
}
