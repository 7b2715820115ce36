import type { CandidateEdit } from '../../protocol/events';
import type { GateTestRecord, ItemRegressions } from '../../protocol/records';
import type { CandidateDecision, OverruleDecision, ReviewPhase } from '../../protocol/vocabulary';

/** One question to the person in the loop; `review.mode` (REVIEW_MODES) decides when it is asked. */
export interface ReviewRequest {
  /**
   * This question alone: an answer carries it back, so an answer drawn for an earlier question of
   * the same step (before a stop and resume, or a re-ask) never answers this one.
   */
  questionId: string;
  step: number;
  epoch: number;
  phase: ReviewPhase;
  candidatePath: string;
  candidateHash: string;
  edits: CandidateEdit[];
  /** after_gate only: the gate's view. */
  candidateScore?: number;
  currentScore?: number;
  /** after_gate, paired gate: the test the person weighs (an inconclusive verdict is asked only so). */
  gateTest?: GateTestRecord;
  /** after_gate, evaluation.max_item_regressions: the items the candidate broke. */
  itemRegressions?: ItemRegressions;
}

export interface EditDecision {
  editId: string;
  accept: boolean;
  reason?: string;
}

export interface ReviewDecision {
  /** before_gate: per-edit decisions; edits not mentioned are kept. */
  edits?: EditDecision[];
  /** after_gate: the candidate as a whole. */
  candidate?: CandidateDecision;
  reason?: string;
}

export interface Overrule {
  step: number;
  /** accept a gate-rejected candidate, or revert an accepted one */
  decision: OverruleDecision;
  reason?: string;
}

export interface Reviewer {
  review(request: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision>;
  takeOverrules(): Overrule[];
}
