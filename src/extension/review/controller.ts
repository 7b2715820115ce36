/**
 * Runs the reviews: turns engine events (live, or rebuilt from a run folder) into one
 * ReviewSession per skill document, applies each transition to the document as one undoable
 * edit, keeps sessions in step with the person's typing, and sends decisions to the engine.
 */
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import type { Ctx } from '../ctx';
import type { CandidateContentProvider } from './candidateContent';
import type { DecisionStore } from './decisionStore';
import { openSkillDocument } from './documentEdits';
import { closeSessionDiffs } from './diffTabs';
import { AutoSaveHold } from './autoSaveHold';
import { DocumentSync } from './documentSync';
import { saveFollowed, staysInRunFolder } from './followRun';
import { membersOf, ReviewRegistry, type TrackedSession } from './registry';
import {
  beginReview,
  retireReviews,
  setAsideGroup,
  transitionReviews,
  wholeCandidateReviews,
  type FolderReviewHost,
} from './folderReview';
import { EndedReviews, type RunEnd } from './outcomes';
import { endRun, replaceOtherRuns, writeCandidate, type RunEndHost } from './runEnds';
import {
  readyFromRequest,
  reviewContextOf,
  verdictOf,
  type ReviewContext,
  type RunHints,
} from './reviewContext';
import { previousFromCandidate } from './layout';
import { runDirOfCandidate, type CandidateReady, type GateVerdictEvent, type Origin } from './runFiles';
import { Redraws } from './redraws';
import { openFromFolder, reopenWaiting, type ReopenHost, type ReviewRequested } from './reopen';
import type { ReviewSession, Transition } from './session';

export type { TrackedSession };

export class ReviewController implements vscode.Disposable {
  private readonly registry = new ReviewRegistry();
  private readonly docs: DocumentSync;
  private readonly hints = new Map<string, RunHints>();
  /** Runs that sent events and have not ended. */
  private readonly liveRuns = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly redraws = new Redraws();
  /** Reviews whose run ended while they still waited on it: an inert lens says so. */
  readonly ended = new EndedReviews();
  /** Fired (debounced) when a document's review changes: redraw decorations and lenses. */
  readonly onDidChange = this.redraws.onDidChange;
  private readonly disposables: vscode.Disposable[] = [];
  /** What the run-end and run-start handling (runEnds.ts) may do to the reviews. */
  private readonly host: RunEndHost = {
    all: () => this.all(),
    ended: this.ended,
    sessionFor: (uri) => this.sessionFor(uri),
    skillPathOf: (runId, outDir) => this.contextOf(runId, undefined, outDir).skillPath,
    retire: (t) => this.retire(t),
    forget: (t) => {
      this.registry.delete(t.uri);
      this.schedule(t.uri);
    },
    schedule: (uri) => this.schedule(uri),
  };
  /** What a skill folder's reviews of several files act through (folderReview.ts). */
  private readonly folder: FolderReviewHost;
  /** What bringing a review back from its run folder acts through (reopen.ts). */
  private readonly reopen: ReopenHost = {
    contextOf: (runId, candidatePath) => this.contextOf(runId, candidatePath),
    findByRun: (runId, step, origin) => this.findByRun(runId, step, origin),
    onCandidate: (runId, event, run, texts, history) => this.onCandidate(runId, event, run, texts, history),
    onReviewRequested: (runId, event) => this.onReviewRequested(runId, event),
    dropOthers: async (t) => {
      // The other files' undecided lines go; SKILL.md lost its own (that is why it is rebuilt).
      await retireReviews(
        this.folder,
        membersOf(t).filter((m) => m !== t),
      );
      t.session.dismiss();
      this.registry.delete(t.uri);
      this.schedule(t.uri);
    },
    unpark: (uri) => this.registry.parked.take(uri),
  };

  constructor(
    private readonly ctx: Ctx,
    readonly content: CandidateContentProvider,
    decisions: DecisionStore,
  ) {
    this.docs = new DocumentSync(ctx, decisions, this.registry, (uri) => this.schedule(uri));
    this.folder = {
      registry: this.registry,
      docs: this.docs,
      content,
      retire: (t) => this.retire(t),
      schedule: (uri) => this.schedule(uri),
      fail: (what, err) => this.fail(what, err),
    };
    this.registry.onGroupPark = (t, open) => {
      this.serial(() => setAsideGroup(this.folder, t, open)).catch((err: unknown) =>
        this.fail('setting a skill folder review aside', err),
      );
    };
    // Undecided lines hold auto-save while they are drawn (autoSaveHold.ts).
    const hold = new AutoSaveHold(() => this.registry.all());
    this.disposables.push(
      this.redraws,
      hold,
      this.redraws.onDidChange(() => hold.refresh()),
      ctx.runEvents((e) => {
        this.handleEvent(e.runId, e.event).catch((err: unknown) => this.fail('run event', err));
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.docs.onDocumentChange(e)),
      vscode.workspace.onDidOpenTextDocument((doc) => {
        this.unpark(doc).catch((err: unknown) => this.fail('opening a parked review', err));
      }),
      // A closed editor's document may stay open in VS Code for minutes: showing it again counts.
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        for (const e of editors)
          this.unpark(e.document).catch((err: unknown) => this.fail('showing a parked review', err));
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => this.onClose(doc)),
      vscode.workspace.onWillSaveTextDocument((e) => this.docs.onWillSave(e)),
      // A dead engine sends no terminal event: every run it trained ended with it.
      ctx.onDidEngineExit((exit) => {
        if (exit.expected) return;
        this.serial(async () => {
          for (const runId of [...this.liveRuns]) await this.runEnded(runId, 'interrupted');
        }).catch((err: unknown) => this.fail('ending the reviews of an interrupted run', err));
      }),
    );
  }

  // ── queries ───────────────────────────────────────────────────────────────────────────────

  sessionFor(uri: vscode.Uri): TrackedSession | undefined {
    return this.registry.get(uri);
  }

  all(): TrackedSession[] {
    return this.registry.all();
  }

  /** The open (not finished) review of one run's step. */
  findByRun(runKey: string, step: number, origin: Origin): TrackedSession | undefined {
    return this.registry.findByRun(runKey, step, origin);
  }

  // ── events ────────────────────────────────────────────────────────────────────────────────

  /** Where a run lives, how it reviews, and which skill file it trains. */
  contextOf(runId: string, candidatePath?: string, runDir?: string): ReviewContext {
    return reviewContextOf(
      this.ctx,
      runId,
      { ...(runDir ? { runDir } : {}), ...this.hints.get(runId) },
      this.liveRuns.has(runId),
      candidatePath,
    );
  }

  /** Remembers overrides for a run; the next events of that run use them. */
  setHints(runId: string, hints: RunHints): void {
    this.hints.set(runId, { ...this.hints.get(runId), ...hints });
  }

  /**
   * Feeds one engine event to the reviews. Events, and the person's actions, run one at a time:
   * each computes its edit from the document as the previous one left it.
   */
  handleEvent(runId: string, event: EngineEvent): Promise<void> {
    return this.serial(() => this.handleEventNow(runId, event));
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async handleEventNow(runId: string, event: EngineEvent): Promise<void> {
    switch (event.type) {
      case 'run/started':
        this.liveRuns.add(runId);
        await replaceOtherRuns(this.host, runId, event.outDir);
        return;
      case 'run/finished':
      case 'run/stopped':
      case 'run/failed':
        await this.runEnded(runId, event.type.slice('run/'.length) as RunEnd);
        return;
      case 'candidate/ready':
        this.liveRuns.add(runId);
        await this.onCandidate(runId, event, this.contextOf(runId, event.candidatePath));
        return;
      case 'review/requested':
        await this.onReviewRequested(runId, event);
        return;
      case 'gate/verdict':
        if (event.origin !== 'final' && event.origin !== 'human')
          await this.onVerdict(runId, event, event.origin);
        return;
      default:
        return;
    }
  }

  private async runEnded(runId: string, how: RunEnd): Promise<void> {
    this.liveRuns.delete(runId);
    this.registry.parked.dropRun(runId);
    await endRun(this.host, runId, how);
  }

  private unpark(doc: vscode.TextDocument): Promise<void> {
    const p = this.registry.parked.take(doc.uri);
    if (!p) return Promise.resolve();
    this.setHints(p.runId, p.hints);
    return this.serial(async () => {
      for (const event of p.events) await this.handleEventNow(p.runId, event);
    });
  }

  private onClose(doc: vscode.TextDocument): void {
    const t = this.registry.get(doc.uri);
    if (t) this.park(t);
  }

  private park(t: TrackedSession, open?: boolean): void {
    this.registry.park(t, open);
  }

  private async onCandidate(
    runId: string,
    event: CandidateReady,
    run: ReviewContext,
    texts?: { previous: string; candidate: string },
    history?: { verdict?: GateVerdictEvent; reviewNow: boolean },
  ): Promise<TrackedSession | undefined> {
    if (staysInRunFolder(run, history?.reviewNow === true)) return undefined;
    const doc = openSkillDocument(run.skillPath);
    // A newer candidate replaces whatever older one waited for this skill to open.
    if (run.skillPath) this.registry.parked.take(vscode.Uri.file(run.skillPath));
    if (!doc) {
      // When the engine pauses for the person, the "waiting for you" notification opens it.
      if (run.skillPath) this.registry.parked.park(run.skillPath, runId, event, run);
      return undefined;
    }
    let candidate = texts?.candidate;
    if (candidate === undefined) {
      try {
        candidate = readFileSync(event.candidatePath, 'utf8');
      } catch (err) {
        this.fail(`reading ${event.candidatePath}`, err);
        return undefined;
      }
    }
    const previous = texts?.previous ?? previousFromCandidate(candidate, event.hunks);
    const runDir = run.runDir ?? runDirOfCandidate(event.candidatePath);
    this.content.remember(runDir, event.step, event.origin, previous, candidate);
    const existing = this.registry.get(doc.uri);
    const key = `${runId}\u0000${event.origin}\u0000${event.step}`;
    if (existing && existing.session.key === key && existing.session.phase !== 'done') return existing;
    if (existing) await this.retire(existing);
    this.ended.clear(doc.uri.toString());
    return beginReview(this.folder, {
      runId,
      event,
      run,
      doc,
      runDir,
      previous,
      candidate,
      ...(history ? { history } : {}),
    });
  }

  /** A newer candidate replaces an older review (every file's): lines only the review put in go. */
  private async retire(t: TrackedSession): Promise<void> {
    await retireReviews(this.folder, membersOf(t));
    await this.closeDiffs(t);
  }

  private async onReviewRequested(runId: string, event: ReviewRequested): Promise<void> {
    this.liveRuns.add(runId);
    let t = this.findByRun(runId, event.step, 'step');
    if (!t && this.registry.parked.followUp(runId, event.step, event)) return;
    if (!t) {
      // The extension was reloaded while the engine waited: rebuild the candidate from its files.
      const run = this.contextOf(runId, event.candidatePath);
      const runDir = run.runDir ?? runDirOfCandidate(event.candidatePath);
      let candidate: string;
      try {
        candidate = readFileSync(event.candidatePath, 'utf8');
      } catch (err) {
        this.fail(`reading ${event.candidatePath}`, err);
        return;
      }
      const ready = readyFromRequest(runDir, event, candidate);
      if (!ready) return;
      // The engine asks, so the run is not in auto mode, whatever could be read of its config.
      const mode = event.phase === 'before_gate' ? 'human-first' : 'gate-then-human';
      t = await this.onCandidate(runId, ready.event, { ...run, live: true, mode }, ready.texts);
      if (!t) return;
    }
    t.request = event;
    for (const m of membersOf(t))
      await this.docs.run(
        m,
        m.session.onReviewRequested(event.questionId, event.phase, {
          ...(event.candidateScore !== undefined ? { candidateScore: event.candidateScore } : {}),
          ...(event.currentScore !== undefined ? { currentScore: event.currentScore } : {}),
          ...(event.gateTest ? { gateTest: event.gateTest } : {}),
          ...(event.itemRegressions ? { itemRegressions: event.itemRegressions } : {}),
        }),
      );
  }

  private async onVerdict(runId: string, event: GateVerdictEvent, origin: Origin): Promise<void> {
    const t = this.findByRun(runId, event.step, origin);
    if (!t) {
      this.registry.parked.followUp(runId, event.step, event);
      return;
    }
    for (const m of membersOf(t)) {
      await this.docs.run(m, m.session.onVerdict(verdictOf(event)));
      await saveFollowed(m);
    }
  }

  // ── the person's actions ──────────────────────────────────────────────────────────────────

  /** Opens a step's candidate from a run folder as a review on the skill document. */
  openFromFolder(
    runId: string,
    runDir: string,
    step: number,
    origin: Origin,
    hints: RunHints = {},
  ): Promise<TrackedSession | undefined> {
    return this.serial(() => openFromFolder(this.reopen, runId, runDir, step, origin, hints));
  }

  /** Brings back the review a live run is paused on (reopen.ts). */
  reopenWaiting(runId: string, request: ReviewRequested): Promise<TrackedSession | undefined> {
    return this.serial(() => reopenWaiting(this.reopen, runId, request));
  }

  /** One review's action (an edit's Accept or Reject). */
  transition(t: TrackedSession, make: (s: ReviewSession) => Transition): Promise<void> {
    return this.serial(() => transitionReviews(this.folder, [t], make));
  }

  /** A whole-candidate action: on every file of a skill folder's candidate (wholeCandidateReviews). */
  transitionAll(t: TrackedSession, make: (s: ReviewSession) => Transition): Promise<void> {
    return this.serial(() => transitionReviews(this.folder, wholeCandidateReviews(t), make));
  }

  /** A decided or replaced step's diff tabs go: none of them may act on the skill any more. */
  private closeDiffs(t: TrackedSession): Promise<void> {
    return closeSessionDiffs(t.session.init);
  }

  /** Stops showing a candidate (in every file of a skill folder's candidate). */
  dismiss(t: TrackedSession): void {
    for (const m of membersOf(t)) {
      m.session.dismiss();
      this.schedule(m.uri);
    }
  }

  /** The diff's Accept of a candidate the editor could not show all of: the document becomes it. */
  writeCandidate(t: TrackedSession): Promise<boolean> {
    return this.serial(() => writeCandidate(this.host, t));
  }

  dismissEnded(uri: vscode.Uri): void {
    if (this.ended.clear(uri.toString())) this.schedule(uri);
  }

  schedule(uri: vscode.Uri): void {
    this.redraws.schedule(uri);
  }

  private fail(what: string, err: unknown): void {
    this.ctx.log.error(`review: ${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
