/**
 * The reviews on screen (one per skill document) and those set aside until their document shows
 * again: what the controller, the commands and the views look reviews up in.
 */
import type * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import { ParkedReviews } from './parked';
import { readyEventOf } from './reviewContext';
import type { CandidateReady, Origin } from './runFiles';
import type { SentDecision } from './sendDecision';
import type { ReviewGroup } from './reviewGroup';
import type { ReviewSession } from './session';

type ReviewRequested = Extract<EngineEvent, { type: 'review/requested' }>;

/** A live session plus what the controller tracks around it. */
export interface TrackedSession {
  session: ReviewSession;
  uri: vscode.Uri;
  sent: SentDecision[];
  /** Skill file name, for titles. */
  fileName: string;
  /** The engine's pause for this candidate, kept so a closed document reopens into it. */
  request?: ReviewRequested;
  /** Auto mode with skillopt.followRun on a file that was saved: it is saved as the run moves on. */
  savesAsItFollows?: boolean;
  /** A skill folder's candidate that changes more files: the reviews of all of them (this one included). */
  group?: ReviewGroup<TrackedSession, CandidateReady>;
}

/** The reviews of one candidate: the group's members, or the review alone. */
export function membersOf(t: TrackedSession): TrackedSession[] {
  return t.group ? [...t.group.members] : [t];
}

export class ReviewRegistry {
  private readonly sessions = new Map<string, TrackedSession>();
  /** The latest candidate (and what followed it) for each skill that is not shown; replayed when it is. */
  readonly parked = new ParkedReviews();
  /** Sets a skill folder's grouped reviews aside together (folderReview.ts setAsideGroup). */
  onGroupPark: ((t: TrackedSession, open: boolean) => void) | undefined;

  get(uri: vscode.Uri): TrackedSession | undefined {
    return this.sessions.get(uri.toString());
  }

  set(t: TrackedSession): void {
    this.sessions.set(t.uri.toString(), t);
  }

  delete(uri: vscode.Uri): void {
    this.sessions.delete(uri.toString());
  }

  all(): TrackedSession[] {
    return [...this.sessions.values()];
  }

  /** The open (not finished) review of one run's step; SKILL.md's when a folder's files have several. */
  findByRun(runKey: string, step: number, origin: Origin): TrackedSession | undefined {
    const open = this.all().filter(
      (t) =>
        t.session.phase !== 'done' &&
        t.session.init.step === step &&
        t.session.init.origin === origin &&
        (t.session.init.runId === runKey || t.session.init.runDir === runKey),
    );
    return open.find((t) => t.session.init.file === undefined) ?? open[0];
  }

  /**
   * Ends a review on screen; a live one (`open` before the change that ended it) waiting for the
   * person is replayed when its document shows again.
   */
  park(t: TrackedSession, open = t.session.phase !== 'done'): void {
    // A skill folder's file is one part of a candidate: the controller sets the whole group aside.
    if (t.group && this.onGroupPark) return this.onGroupPark(t, open);
    this.delete(t.uri);
    const { init } = t.session;
    if (open && init.live) this.parked.parkSession(t.uri.fsPath, readyEventOf(t.session), init, t.request);
    t.session.dismiss();
  }
}
