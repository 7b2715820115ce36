/**
 * Bringing a review back from its run folder: a step's candidate opened from the Runs view or the
 * command palette, and the review a live run is paused on when its document lost it (closed,
 * reverted, saved over). Both run inside the controller's queue (ReviewController.serial).
 */
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import type { TrackedSession } from './controller';
import { openSkillDocument } from './documentEdits';
import type { ReviewContext, RunHints } from './reviewContext';
import { stepCandidateFromFolder, type CandidateReady, type GateVerdictEvent, type Origin } from './runFiles';

export type ReviewRequested = Extract<EngineEvent, { type: 'review/requested' }>;

/** The parts of the review controller this module acts through. */
export interface ReopenHost {
  contextOf(runId: string, candidatePath?: string): ReviewContext;
  findByRun(runId: string, step: number, origin: Origin): TrackedSession | undefined;
  onCandidate(
    runId: string,
    event: CandidateReady,
    run: ReviewContext,
    texts?: { previous: string; candidate: string },
    history?: { verdict?: GateVerdictEvent; reviewNow: boolean },
  ): Promise<TrackedSession | undefined>;
  onReviewRequested(runId: string, event: ReviewRequested): Promise<void>;
  /** Ends a review that lost its lines, with every other file's review of its candidate. */
  dropOthers(t: TrackedSession): Promise<void>;
  /** Takes a parked review of `uri` off the shelf (it is about to be rebuilt). */
  unpark(uri: vscode.Uri): void;
}

/** Opens a step's candidate from a run folder as a review on the skill document. */
export async function openFromFolder(
  host: ReopenHost,
  runId: string,
  runDir: string,
  step: number,
  origin: Origin,
  hints: RunHints,
): Promise<TrackedSession | undefined> {
  const got = stepCandidateFromFolder(runDir, step, origin);
  if (!got) {
    void vscode.window.showWarningMessage(`SkillOpt: ${runDir} has no candidate for step ${step}.`);
    return undefined;
  }
  const run = { ...host.contextOf(runId, got.event.candidatePath), runDir, ...hints };
  if (run.skillPath && !openSkillDocument(run.skillPath)) {
    await vscode.window.showTextDocument(vscode.Uri.file(run.skillPath), { preview: false });
  }
  return host.onCandidate(
    runId,
    got.event,
    run,
    { previous: got.previousText, candidate: got.candidateText },
    { ...(got.verdict ? { verdict: got.verdict } : {}), reviewNow: true },
  );
}

/**
 * Brings back the review a live run is paused on: shows it if it is intact, otherwise (the
 * document was closed, reverted or saved over) rebuilds it from the run folder.
 */
export async function reopenWaiting(
  host: ReopenHost,
  runId: string,
  request: ReviewRequested,
): Promise<TrackedSession | undefined> {
  const skillPath = host.contextOf(runId, request.candidatePath).skillPath;
  if (!skillPath) return undefined;
  const uri = vscode.Uri.file(skillPath);
  const t = host.findByRun(runId, request.step, 'step');
  const doc = openSkillDocument(skillPath);
  // The review's lines make the document dirty; a clean one lost them (revert or save).
  if (t && t.uri.toString() === uri.toString() && doc?.isDirty && t.session.phase === 'review') {
    await vscode.window.showTextDocument(uri, { preview: false });
    return t;
  }
  if (t) await host.dropOthers(t);
  host.unpark(uri);
  await vscode.window.showTextDocument(uri, { preview: false });
  await host.onReviewRequested(runId, request);
  return host.findByRun(runId, request.step, 'step');
}
