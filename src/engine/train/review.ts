import type { CandidateEdit } from '../../protocol/events';

/**
 * The person in the loop. `review.mode` decides when the trainer asks:
 * - `auto`: never; the gate decides, and the person may overrule a finished step afterwards
 *   (collected with `takeOverrules` at the next step boundary).
 * - `gate-then-human`: after the gate accepts a candidate, before it becomes current.
 * - `human-first`: before the gate; only the edits the person keeps are evaluated.
 */
export type ReviewMode = 'auto' | 'gate-then-human' | 'human-first';

export interface ReviewRequest {
  step: number;
  epoch: number;
  phase: 'before_gate' | 'after_gate';
  candidatePath: string;
  candidateHash: string;
  edits: CandidateEdit[];
  /** after_gate only: the gate's view. */
  candidateScore?: number;
  currentScore?: number;
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
  candidate?: 'accept' | 'reject';
  reason?: string;
}

export interface Overrule {
  step: number;
  /** accept a gate-rejected candidate, or revert an accepted one */
  decision: 'accept' | 'revert';
  reason?: string;
}

export interface Reviewer {
  review(request: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision>;
  takeOverrules(): Overrule[];
}
