/**
 * The gate verdicts a run announced, rebuilt from its folder: each step's from history.json, each
 * epoch end's (meta reflect, slow update) from its result file, the final check's from summary.json.
 * A run opened from its folder must
 * show the verdicts, tests and error bars a live run showed.
 */
import type { EngineEvent } from '../../protocol/events';
import type { GateTestRecord, ItemRegressions, StepRecord } from '../../protocol/records';
import { becomesBest, GATE_ACTIONS, isAccepted, isSkipped, type GateAction } from '../../protocol/vocabulary';
import { readJsonObject } from './jsonObject';
import { RunLayout, STEP_FILE } from './layout';
import { gateTestSchema, itemRegressionsSchema } from './runSchemas';

export type GateVerdictEvent = Extract<EngineEvent, { type: 'gate/verdict' }>;

/** The final check's verdict as summary.json keeps it (`final_check`); its scores are final_selection_*. */
export interface FinalCheckRecord {
  step: number;
  epoch: number;
  action: 'promote' | 'keep';
  candidate_score: number;
  current_score: number;
  best_score: number;
  cache_hit: boolean;
}

export function finalCheckRecord(v: GateVerdictEvent): FinalCheckRecord {
  return {
    step: v.step,
    epoch: v.epoch,
    action: v.action === 'promote' ? 'promote' : 'keep',
    candidate_score: v.candidateScore,
    current_score: v.currentScore,
    best_score: v.bestScore,
    cache_hit: v.cacheHit,
  };
}

/** The final check's verdict from summary.json; none when the run made none (its last skill was its best). */
export function finalVerdict(summary: Record<string, unknown> | undefined): GateVerdictEvent | undefined {
  const f = summary?.final_check;
  if (typeof f !== 'object' || f === null) return undefined;
  const r = f as Record<string, unknown>;
  const [step, epoch, candidate, current, best] = [
    r.step,
    r.epoch,
    r.candidate_score,
    r.current_score,
    r.best_score,
  ].map(num);
  if (r.action !== 'promote' && r.action !== 'keep') return undefined;
  if ([step, epoch, candidate, current, best].some((n) => n === undefined)) return undefined;
  const hard = num(summary?.final_selection_hard);
  const soft = num(summary?.final_selection_soft);
  return {
    type: 'gate/verdict',
    step: step!,
    epoch: epoch!,
    origin: 'final',
    action: r.action,
    candidateScore: candidate!,
    currentScore: current!,
    bestScore: best!,
    ...(hard !== undefined ? { selectionHard: hard } : {}),
    ...(soft !== undefined ? { selectionSoft: soft } : {}),
    cacheHit: r.cache_hit === true,
  };
}
export type EpochEndOrigin = 'meta_reflect' | 'slow_update';

/** The epoch-end stages that go through the gate, in the order an epoch end runs them. */
export const GATED_EPOCH_END: readonly EpochEndOrigin[] = ['meta_reflect', 'slow_update'];

/** The gate's evidence an epoch end's result file keeps (slow_result.json, gate_result.json); a damaged entry reads as none. */
export function epochEndGateEvidence(res: unknown): {
  gateTest?: GateTestRecord;
  itemRegressions?: ItemRegressions;
} {
  if (typeof res !== 'object' || res === null) return {};
  const r = res as Record<string, unknown>;
  const test = gateTestSchema.safeParse(r.gate_test);
  const broken = itemRegressionsSchema.safeParse(r.item_regressions);
  return {
    ...(test.success ? { gateTest: test.data } : {}),
    ...(broken.success ? { itemRegressions: broken.data } : {}),
  };
}

/** The gate verdict a step record implies; none for a skipped step or one that never reached the gate. */
export function verdictFromRecord(r: StepRecord, cacheHit = false): GateVerdictEvent | undefined {
  if (r.candidate_gate_score === undefined || isSkipped(r.action)) return undefined;
  return {
    type: 'gate/verdict',
    step: r.step,
    epoch: r.epoch,
    origin: 'step',
    action: r.action,
    candidateScore: r.candidate_gate_score,
    currentScore: r.current_score,
    bestScore: r.best_score,
    ...(r.selection_hard !== undefined ? { selectionHard: r.selection_hard } : {}),
    ...(r.selection_soft !== undefined ? { selectionSoft: r.selection_soft } : {}),
    cacheHit,
    ...(r.gate_test ? { gateTest: r.gate_test } : {}),
    ...(r.item_regressions ? { itemRegressions: r.item_regressions } : {}),
  };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/**
 * Walks a run's decisions in the order the loop made them, keeping the current and best scores
 * each verdict reports and the skills already scored (a skill scored before is a cache hit).
 */
export class VerdictReplay {
  private current: number;
  private best: number;
  private readonly scored = new Set<string>();

  constructor(
    private readonly layout: RunLayout,
    baseline = 0,
  ) {
    this.current = baseline;
    this.best = baseline;
  }

  /** A step's verdict (none for a skipped step); the record carries the scores after it. */
  step(r: StepRecord): GateVerdictEvent | undefined {
    const hit = r.candidate_hash !== undefined && this.scored.has(r.candidate_hash);
    const v = verdictFromRecord(r, hit);
    if (v && r.candidate_hash) this.scored.add(r.candidate_hash);
    this.current = r.current_score;
    this.best = r.best_score;
    return v;
  }

  /** One epoch-end stage's verdict, or none when it reached no gate (no candidate, no content, epoch 1). */
  epochEnd(origin: EpochEndOrigin, epoch: number, lastStep: number): GateVerdictEvent | undefined {
    const file = (name: string): string => this.layout.epochFile(origin, epoch, name);
    const res = readJsonObject(file(origin === 'slow_update' ? STEP_FILE.slowResult : STEP_FILE.gateResult));
    const action = res?.action;
    if (!res || !(GATE_ACTIONS as readonly unknown[]).includes(action)) return undefined;
    const score = num(origin === 'slow_update' ? res.selection_score : res.score);
    if (score === undefined) return undefined;
    const hash =
      origin === 'slow_update'
        ? res.candidate_hash
        : readJsonObject(file(STEP_FILE.metaReflectResult))?.candidate_hash;
    const hit = typeof hash === 'string' && this.scored.has(hash);
    if (typeof hash === 'string') this.scored.add(hash);
    const gateAction = action as GateAction;
    if (isAccepted(gateAction)) {
      if (becomesBest(gateAction, score, this.best)) this.best = score;
      this.current = score;
    }
    const hard = num(res.selection_hard);
    const soft = num(res.selection_soft);
    return {
      type: 'gate/verdict',
      step: lastStep,
      epoch,
      origin,
      action: gateAction,
      candidateScore: score,
      currentScore: this.current,
      bestScore: this.best,
      ...(hard !== undefined ? { selectionHard: hard } : {}),
      ...(soft !== undefined ? { selectionSoft: soft } : {}),
      cacheHit: hit,
      ...epochEndGateEvidence(res),
    };
  }

  /** Every gated epoch-end stage of an epoch, in the order the loop runs them. */
  epochEnds(epoch: number, lastStep: number): GateVerdictEvent[] {
    return GATED_EPOCH_END.flatMap((origin) => {
      const v = this.epochEnd(origin, epoch, lastStep);
      return v ? [v] : [];
    });
  }
}

/** Every epoch end's verdict of a run, replayed through its steps so the scores they report are right. */
export function epochEndVerdicts(
  dir: string,
  history: readonly StepRecord[],
  baseline?: number,
): GateVerdictEvent[] {
  const replay = new VerdictReplay(new RunLayout(dir), baseline);
  const out: GateVerdictEvent[] = [];
  for (const epoch of [...new Set(history.map((r) => r.epoch))].sort((a, b) => a - b)) {
    const steps = history.filter((r) => r.epoch === epoch);
    for (const r of steps) replay.step(r);
    out.push(...replay.epochEnds(epoch, Math.max(...steps.map((r) => r.step))));
  }
  return out;
}
