/**
 * What a review tells the engine (or records, for a finished run): the decision of a
 * whole-candidate call, and the decision once the person has decided every placed edit. Pure:
 * built from the session's start and its edits' fates; the session moves its own phase.
 */
import type { DecideParams } from '../../protocol/engine';
import type { OwnerState, SessionInit } from './reviewModel';

/** A whole-candidate call: every edit the same way (the unplaced ones too when the person saw them). */
export function candidateDecision(
  init: SessionInit,
  owners: readonly OwnerState[],
  accept: boolean,
  includeUnplaced: boolean,
  reason?: string,
): DecideParams {
  const ids = owners
    .filter(
      (o) => o.fate !== 'skipped' && (includeUnplaced || (o.fate !== 'conflict' && o.fate !== 'invalidated')),
    )
    .map((o) => o.id);
  return {
    runId: init.runId,
    step: init.step,
    decisions: ids.map((editId) => ({ editId, accept, ...(!accept && reason ? { reason } : {}) })),
    candidate: accept ? 'accept' : 'reject',
    ...(!accept && reason ? { reason } : {}),
  };
}

/** The person's decisions edit by edit, and the candidate's when they all went one way. */
export function personDecision(
  init: SessionInit,
  owners: readonly OwnerState[],
  reason?: string,
): { params: DecideParams; anyAccepted: boolean } {
  const decided = owners.filter((o) => o.decidedBy === 'person');
  const allAccepted = decided.length > 0 && decided.every((o) => o.fate === 'accepted');
  const allRejected = decided.length > 0 && decided.every((o) => o.fate === 'rejected');
  const params: DecideParams = {
    runId: init.runId,
    step: init.step,
    decisions: decided.map((o) => ({
      editId: o.id,
      accept: o.fate === 'accepted',
      ...(o.reason ? { reason: o.reason } : {}),
    })),
  };
  // human-first: the gate has not run yet, so there is no candidate to accept or reject.
  if (init.mode !== 'human-first' || init.reviewNow) {
    if (allAccepted) params.candidate = 'accept';
    else if (allRejected) params.candidate = 'reject';
  }
  if (reason && params.candidate === 'reject') params.reason = reason;
  return { params, anyAccepted: decided.some((o) => o.fate === 'accepted') };
}
