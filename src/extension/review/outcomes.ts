/**
 * Why a review action changed nothing, and what a review shows after its run moved on. Pure (no
 * `vscode`): the commands turn a reason into an information message, the view turns an ended
 * review into an inert lens, and both are unit-tested here.
 */
import { candidateName } from '../../protocol/webview';
import type { ReviewSession } from './session';

/** How a run ended: its terminal event, or `interrupted` when the engine process died under it. */
export type RunEnd = 'stopped' | 'failed' | 'finished' | 'interrupted';

const endWords: Record<RunEnd, string> = {
  stopped: 'stopped',
  failed: 'failed',
  finished: 'finished',
  interrupted: 'was interrupted (the engine stopped)',
};

/** A review that still waited on its run when the run ended. */
export interface EndedReview {
  key: string;
  runId: string;
  step: number;
  epoch: number;
  origin: ReviewSession['init']['origin'];
  how: RunEnd;
}

/**
 * The review still waits on its run: the gate is scoring, or the person reviews a live candidate
 * the engine is (or is about to be) paused on. A past step opened for review is not.
 */
export function waitsOnRun(s: ReviewSession): boolean {
  if (!s.init.live || s.phase === 'done') return false;
  return s.phase === 'awaiting-gate' || s.waiting || (s.phase === 'review' && !s.init.reviewNow);
}

export function endedReviewOf(s: ReviewSession, how: RunEnd): EndedReview {
  const { runId, step, epoch, origin } = s.init;
  return { key: s.key, runId, step, epoch, origin, how };
}

/** The one line an ended review keeps: the run is gone, so nothing here can be decided any more. */
export function endedTitle(e: EndedReview): string {
  const name = candidateName(e.origin, e.step, e.epoch);
  const verb = endWords[e.how];
  return `$(debug-stop) SkillOpt ${name}: the run ${verb} before it was decided; its undecided lines were taken out`;
}

/** What the person is told when acting on an ended review. */
export function endedMessage(e: EndedReview): string {
  const name = candidateName(e.origin, e.step, e.epoch);
  const verb = endWords[e.how];
  return `SkillOpt: the run ${verb} before ${name} was decided, so there is nothing to accept or reject here. Resume the run to review it again.`;
}

/** Ended reviews by document (URI string); a new review of the document replaces its notice. */
export class EndedReviews {
  private readonly byDoc = new Map<string, EndedReview>();

  set(doc: string, e: EndedReview): void {
    this.byDoc.set(doc, e);
  }

  get(doc: string): EndedReview | undefined {
    return this.byDoc.get(doc);
  }

  clear(doc: string): boolean {
    return this.byDoc.delete(doc);
  }
}

/**
 * The line is one an open review put in the document (undecided, or kept but not yet through the
 * gate): no run's provenance may claim it, whatever text an earlier run wrote.
 */
export function reviewOwnsLine(s: ReviewSession, line: number): boolean {
  if (s.phase === 'done') return false;
  return s
    .allSegments()
    .some((g) => g.kind === 'added' && g.present && line >= g.start && line < g.start + g.lines.length);
}

export type ReviewAction =
  { kind: 'edit'; editId: string; accept: boolean } | { kind: 'whole'; accept: boolean; fromDiff: boolean };

const fateWords: Record<string, string> = {
  accepted: 'accepted',
  rejected: 'rejected',
  skipped: 'not applied by the optimizer (it did not fit the skill)',
  conflict: 'not shown here: your SKILL.md changed where it applies',
  invalidated: 'set aside because you typed over its lines',
};

function unplacedCount(s: ReviewSession): number {
  return s.withFate('conflict').length;
}

/**
 * Why `action` would change nothing on this review, in words naming what to do instead; undefined
 * when it will change the document or tell the engine something.
 */
export function whyNoEffect(s: ReviewSession, action: ReviewAction): string | undefined {
  const name = candidateName(s.init.origin, s.init.step, s.init.epoch);
  if (s.phase === 'done')
    return `SkillOpt: ${name} is already decided; there is nothing left to accept or reject.`;
  if (action.kind === 'edit') {
    if (!s.perEdit)
      return `SkillOpt: the gate judged ${name} as a whole; use Accept Candidate or Reject Candidate at the top of the file.`;
    const o = s.owners.get(action.editId);
    if (!o) return `SkillOpt: ${name} has no such edit any more; it was replaced by a newer candidate.`;
    if (s.phase === 'awaiting-gate')
      return `SkillOpt: the gate is scoring ${name}; its edits can be decided once it has a verdict.`;
    if (o.fate !== 'pending')
      return `SkillOpt: that edit is already ${fateWords[o.fate] ?? o.fate}; nothing changed.`;
    return undefined;
  }
  if (s.phase !== 'review') return undefined;
  const placedPending = s.placedOwners().some((id) => s.owners.get(id)?.fate === 'pending');
  if (placedPending) return undefined;
  const unplaced = unplacedCount(s);
  // The diff's Accept / Reject covers the unplaced edits too (the person saw the whole candidate).
  if (action.fromDiff && unplaced > 0) return undefined;
  if (unplaced > 0)
    return `SkillOpt: ${unplaced === 1 ? 'the change' : `${unplaced} changes`} of ${name} could not be shown in this editor because your SKILL.md changed where ${unplaced === 1 ? 'it applies' : 'they apply'}. Open in Diff View to see the whole candidate and accept or reject it there.`;
  // A candidate with no changes at all still needs its answer: a paused run waits for it.
  return undefined;
}
