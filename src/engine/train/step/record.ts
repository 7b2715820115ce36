import type { GateTestRecord, ItemRegressions, Score, StepRecord } from '../../../protocol/records';
import type { GateAction, SkipAction } from '../../../protocol/vocabulary';
import type { TrainState } from '../trainState';
import type { StageTokens } from '../loopContext';

export const round1 = (n: number): number => Math.round(n * 10) / 10;
export const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

/** Rough token count (4 chars/token) used for skill-length telemetry; documented as an estimate. */
export function estimateSkillTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Builds one `history.json` record as the step's stages learn its parts. Each stage fills its own
 * section once; the order of the calls is the order of the keys in the file (reference §8.2).
 */
export class StepRecordBuilder {
  private readonly r: StepRecord;

  constructor(init: {
    step: number;
    epoch: number;
    stepInEpoch: number;
    timing: Record<string, number>;
    rollout: Score;
    rolloutN: number;
    batches: StepRecord['accumulation_batches'];
    patches: { total: number; failure: number; success: number; editsProposed: number };
    state: TrainState;
  }) {
    const { state } = init;
    this.r = {
      step: init.step,
      epoch: init.epoch,
      step_in_epoch: init.stepInEpoch,
      timing: init.timing,
      tokens: {},
      rollout_hard: round6(init.rollout.hard),
      rollout_soft: round6(init.rollout.soft),
      rollout_n: init.rolloutN,
      accumulation_batches: init.batches,
      n_patches: init.patches.total,
      n_failure_patches: init.patches.failure,
      n_success_patches: init.patches.success,
      n_edits_proposed: init.patches.editsProposed,
      action: 'skip_no_patches',
      current_score: state.currentScore,
      best_score: state.bestScore,
      best_step: state.bestStep,
      skill_len: state.current.length,
      wall_time_s: 0,
    };
  }

  get step(): number {
    return this.r.step;
  }

  get epoch(): number {
    return this.r.epoch;
  }

  get review(): StepRecord['review'] {
    return this.r.review;
  }

  merged(n: number): void {
    this.r.n_edits_merged = n;
  }

  ranked(x: {
    n: number;
    budget: number | null;
    lrControlMode: string;
    lrDecision?: Record<string, unknown>;
    supportCounts: number[];
  }): void {
    this.r.n_edits_ranked = x.n;
    this.r.edit_budget = x.budget;
    this.r.lr_control_mode = x.lrControlMode;
    if (x.lrDecision) this.r.lr_decision = x.lrDecision;
    this.r.support_counts = x.supportCounts;
  }

  candidate(x: {
    hash: string;
    length: number;
    changeSummary?: string[];
    applySummary?: StepRecord['edit_apply_summary'];
  }): void {
    this.r.candidate_hash = x.hash;
    this.r.candidate_skill_len = x.length;
    if (x.changeSummary) this.r.rewrite_change_summary = x.changeSummary;
    if (x.applySummary) this.r.edit_apply_summary = x.applySummary;
  }

  /** human-first pruning changed what the gate scores. */
  gatedCandidate(hash: string, length: number): void {
    this.r.candidate_hash = hash;
    this.r.candidate_skill_len = length;
  }

  reviewed(review: NonNullable<StepRecord['review']>): void {
    this.r.review = review;
  }

  /** Items the target could not answer; recorded only when there were some. */
  errored(rollout: number): void {
    if (rollout > 0) this.r.rollout_errored = rollout;
  }

  gated(x: {
    score: Score;
    metric: string;
    projected: number;
    action: GateAction;
    errored: number;
    test?: GateTestRecord;
    regressions?: ItemRegressions;
  }): void {
    this.r.selection_hard = x.score.hard;
    this.r.selection_soft = x.score.soft;
    if (x.errored > 0) this.r.selection_errored = x.errored;
    this.r.gate_metric = x.metric;
    this.r.candidate_gate_score = x.projected;
    this.r.action = x.action;
    if (x.test) this.r.gate_test = x.test;
    if (x.regressions) this.r.item_regressions = x.regressions;
  }

  /** The appendix flush after the gate (or the skip): the reference's four counters. */
  appendix(x: { lapseNotes: number; added: number; total: number; consolidated?: number }): void {
    this.r.n_execution_lapse_notes = x.lapseNotes;
    this.r.n_appendix_notes_added = x.added;
    this.r.n_appendix_notes_total = x.total;
    if (x.consolidated !== undefined) this.r.n_appendix_notes_consolidated = x.consolidated;
  }

  skipped(action: SkipAction): void {
    this.r.action = action;
  }

  /** The record as committed: scores and skill after the step, tokens, fallbacks and wall time. */
  finish(x: {
    state: TrainState;
    tokens: StageTokens;
    /** Only gated steps name the origins of the current and best skills. */
    withOrigins: boolean;
    fallbacks: ReadonlyArray<{ stage: string; reason: string }>;
    seconds: number;
  }): StepRecord {
    const { state } = x;
    const r = this.r;
    r.tokens = x.tokens;
    r.current_score = state.currentScore;
    r.best_score = state.bestScore;
    r.best_step = state.bestStep;
    if (x.withOrigins) {
      r.current_origin = state.currentOrigin;
      r.best_origin = state.bestOrigin;
    }
    r.skill_len = state.current.length;
    r.skill_tokens = estimateSkillTokens(state.current);
    if (x.fallbacks.length) r.fallbacks = [...x.fallbacks];
    r.wall_time_s = round1(x.seconds);
    return r;
  }
}
