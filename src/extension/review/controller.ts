/**
 * Runs the reviews: turns engine events (live, or rebuilt from a run folder) into one
 * ReviewSession per skill document, applies each transition to the document as one undoable
 * edit, keeps sessions in step with the person's typing, and sends decisions to the engine.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import { lineHunks } from '../../engine/skill/hunks';
import { RUN_FILE, RunLayout } from '../../engine/store/layout';
import { EngineRequests, type DecideParams } from '../../protocol/engine';
import type { Ctx } from '../ctx';
import type { CandidateContentProvider } from './candidateContent';
import type { DecisionStore } from './decisionStore';
import { isSkillLanguage } from './languages';
import { runWithoutProtectedWarning } from './selfEdits';
import { previousFromCandidate } from './layout';
import {
  previousTextOf,
  runDirOfCandidate,
  stepCandidateFromFolder,
  type CandidateReady,
  type GateVerdictEvent,
  type Origin,
} from './runFiles';
import { applyLineOps, ReviewSession, type LineOp, type Transition } from './session';
import { isAccepted, isReviewMode, type ReviewMode } from '../../protocol/vocabulary';

type ReviewRequested = Extract<EngineEvent, { type: 'review/requested' }>;

/** Overrides for one run, given by whoever fed its events in (tests, the runs tree). */
export interface RunHints {
  runDir?: string;
  mode?: ReviewMode;
  live?: boolean;
  skillPath?: string;
}

interface SentDecision {
  params: DecideParams;
  outcome: 'ok' | 'ignored' | 'failed';
  detail?: string;
}

/** A live session plus what the controller tracks around it. */
export interface TrackedSession {
  session: ReviewSession;
  uri: vscode.Uri;
  sent: SentDecision[];
  /** Skill file name, for titles. */
  fileName: string;
}

/** Debounce for redraws while the person types or events arrive in bursts. */
const renderDelayMs = 60;

export function reviewModeSetting(): ReviewMode | undefined {
  const v = vscode.workspace.getConfiguration('skillopt').get<string>('reviewMode');
  return isReviewMode(v) ? v : undefined;
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export class ReviewController implements vscode.Disposable {
  private readonly sessions = new Map<string, TrackedSession>();
  /** The latest candidate (and what followed it) for each skill that is not open; replayed on open. */
  private readonly parked = new Map<
    string,
    { runId: string; step: number; events: EngineEvent[]; hints: RunHints }
  >();
  private readonly hints = new Map<string, RunHints>();
  /** Runs that sent events and have not ended. */
  private readonly liveRuns = new Set<string>();
  private readonly applying = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri | undefined>();
  /** Fired (debounced) when a document's review changes: redraw decorations and lenses. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly ctx: Ctx,
    readonly content: CandidateContentProvider,
    private readonly decisions: DecisionStore,
  ) {
    this.disposables.push(
      this.changed,
      ctx.runEvents((e) => {
        this.handleEvent(e.runId, e.event).catch((err: unknown) => this.fail('run event', err));
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.onDocumentChange(e)),
      vscode.workspace.onDidOpenTextDocument((doc) => {
        this.unpark(doc).catch((err: unknown) => this.fail('opening a parked review', err));
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => this.onClose(doc)),
    );
  }

  // ── queries ───────────────────────────────────────────────────────────────────────────────

  sessionFor(uri: vscode.Uri): TrackedSession | undefined {
    return this.sessions.get(uri.toString());
  }

  all(): TrackedSession[] {
    return [...this.sessions.values()];
  }

  /** The open (not finished) review of one run's step. */
  findByRun(runKey: string, step: number, origin: Origin): TrackedSession | undefined {
    return this.all().find(
      (t) =>
        t.session.phase !== 'done' &&
        t.session.init.step === step &&
        t.session.init.origin === origin &&
        (t.session.init.runId === runKey || t.session.init.runDir === runKey),
    );
  }

  // ── events ────────────────────────────────────────────────────────────────────────────────

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
        return;
      case 'run/finished':
      case 'run/stopped':
      case 'run/failed':
        this.liveRuns.delete(runId);
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

  /** Where a run lives, how it reviews, and which skill file it trains. */
  contextOf(runId: string, candidatePath?: string): Required<Pick<RunHints, 'mode' | 'live'>> & RunHints {
    const hints = this.hints.get(runId) ?? {};
    const run = this.ctx.runs.get(runId);
    const runDir = hints.runDir ?? run?.dir ?? (candidatePath ? runDirOfCandidate(candidatePath) : undefined);
    const config =
      run?.config ?? (runDir ? readJson(new RunLayout(runDir).file(RUN_FILE.config)) : undefined) ?? {};
    const configMode = config.review_mode;
    const mode = hints.mode ?? (isReviewMode(configMode) ? configMode : (reviewModeSetting() ?? 'auto'));
    const live = hints.live ?? (this.liveRuns.has(runId) || run?.status === 'running');
    let skillPath = hints.skillPath;
    const init = config.skill_init;
    if (!skillPath && typeof init === 'string' && init) {
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      skillPath = isAbsolute(init) ? init : folder ? resolve(folder, init) : undefined;
    }
    return { mode, live, ...(runDir ? { runDir } : {}), ...(skillPath ? { skillPath } : {}) };
  }

  private documentFor(skillPath: string | undefined): vscode.TextDocument | undefined {
    if (skillPath) {
      const want = vscode.Uri.file(skillPath).toString();
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === want);
      if (open) return open;
      return undefined;
    }
    const active = vscode.window.activeTextEditor?.document;
    return active && isSkillLanguage(active.languageId) ? active : undefined;
  }

  private park(skillPath: string, runId: string, event: CandidateReady, hints: RunHints): void {
    this.parked.set(vscode.Uri.file(skillPath).toString(), {
      runId,
      step: event.step,
      events: [event],
      hints,
    });
  }

  /** A verdict or review request for a candidate whose skill is closed joins its parked chain. */
  private parkFollowUp(runId: string, step: number, event: EngineEvent): boolean {
    for (const p of this.parked.values()) {
      if (p.runId === runId && p.step === step) {
        p.events.push(event);
        return true;
      }
    }
    return false;
  }

  private unpark(doc: vscode.TextDocument): Promise<void> {
    const p = this.parked.get(doc.uri.toString());
    if (!p) return Promise.resolve();
    this.parked.delete(doc.uri.toString());
    this.setHints(p.runId, p.hints);
    return this.serial(async () => {
      for (const event of p.events) await this.handleEventNow(p.runId, event);
    });
  }

  private onClose(doc: vscode.TextDocument): void {
    const t = this.sessions.get(doc.uri.toString());
    if (!t) return;
    // A closed document keeps nothing on screen; a live review waiting for the person stays parked.
    this.sessions.delete(doc.uri.toString());
    if (t.session.phase !== 'done' && t.session.init.live) {
      const { init } = t.session;
      this.park(doc.uri.fsPath, init.runId, this.readyEventOf(t.session), {
        mode: init.mode,
        live: init.live,
        ...(init.runDir ? { runDir: init.runDir } : {}),
        skillPath: doc.uri.fsPath,
      });
    }
  }

  private readyEventOf(s: ReviewSession): CandidateReady {
    const { init } = s;
    return {
      type: 'candidate/ready',
      step: init.step,
      epoch: init.epoch,
      origin: init.origin,
      previousHash: '',
      candidateHash: '',
      edits: init.edits,
      hunks: init.hunks,
      candidatePath: init.candidatePath ?? '',
    };
  }

  private async onCandidate(
    runId: string,
    event: CandidateReady,
    run: ReturnType<ReviewController['contextOf']>,
    texts?: { previous: string; candidate: string },
    history?: { verdict?: GateVerdictEvent; reviewNow: boolean },
  ): Promise<TrackedSession | undefined> {
    const doc = this.documentFor(run.skillPath);
    // A newer candidate replaces whatever older one waited for this skill to open.
    if (run.skillPath) this.parked.delete(vscode.Uri.file(run.skillPath).toString());
    if (!doc) {
      if (run.skillPath) this.park(run.skillPath, runId, event, run);
      if (run.live && run.skillPath && run.mode !== 'auto') this.offerOpen(run.skillPath, event.step);
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
    const existing = this.sessions.get(doc.uri.toString());
    const key = `${runId}\u0000${event.origin}\u0000${event.step}`;
    if (existing && existing.session.key === key && existing.session.phase !== 'done') return existing;
    if (existing) await this.retire(existing);
    const session = ReviewSession.create({
      runId,
      runDir,
      step: event.step,
      epoch: event.epoch,
      origin: event.origin,
      mode: run.mode,
      live: run.live,
      edits: event.edits,
      hunks: event.hunks,
      previousText: previous,
      candidateText: candidate,
      docText: doc.getText(),
      candidatePath: event.candidatePath,
      ...(history?.reviewNow ? { reviewNow: true } : {}),
    });
    if (history?.verdict) session.verdict = verdictOf(history.verdict);
    const tracked: TrackedSession = {
      session,
      uri: doc.uri,
      sent: [],
      fileName: doc.uri.path.split('/').pop() ?? 'SKILL.md',
    };
    this.sessions.set(doc.uri.toString(), tracked);
    await this.run(tracked, session.begin());
    return tracked;
  }

  private offerOpen(skillPath: string, step: number): void {
    const name = skillPath.split(/[\\/]/).pop() ?? skillPath;
    void vscode.window
      .showInformationMessage(`SkillOpt: step ${step} has a candidate for ${name} to review.`, 'Review')
      .then(async (choice) => {
        if (choice === 'Review') await vscode.window.showTextDocument(vscode.Uri.file(skillPath));
      });
  }

  /** A newer candidate replaces an older review: lines only the review put in the document go. */
  private async retire(t: TrackedSession): Promise<void> {
    const s = t.session;
    if (s.phase === 'review') {
      const pending = s.withFate('pending');
      const ops = s
        .allSegments()
        .filter(
          (seg) => pending.includes(seg.owner) && seg.kind === 'added' && seg.present && seg.lines.length > 0,
        )
        .map((seg): LineOp => ({ kind: 'delete', start: seg.start, count: seg.lines.length }));
      s.dismiss();
      await this.applyOps(t, ops);
    } else {
      s.dismiss();
    }
    this.sessions.delete(t.uri.toString());
    this.schedule(t.uri);
  }

  private async onReviewRequested(runId: string, event: ReviewRequested): Promise<void> {
    this.liveRuns.add(runId);
    let t = this.findByRun(runId, event.step, 'step');
    if (!t && this.parkFollowUp(runId, event.step, event)) return;
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
      const previous = previousTextOf(runDir, event.step, 'step');
      if (previous === undefined) return;
      const ready: CandidateReady = {
        type: 'candidate/ready',
        step: event.step,
        epoch: event.epoch,
        origin: 'step',
        previousHash: '',
        candidateHash: event.candidateHash,
        edits: event.edits,
        hunks: lineHunks(previous, candidate),
        candidatePath: event.candidatePath,
      };
      t = await this.onCandidate(runId, ready, { ...run, live: true }, { previous, candidate });
      if (!t) return;
    }
    await this.run(
      t,
      t.session.onReviewRequested(event.phase, {
        ...(event.candidateScore !== undefined ? { candidateScore: event.candidateScore } : {}),
        ...(event.currentScore !== undefined ? { currentScore: event.currentScore } : {}),
      }),
    );
  }

  private async onVerdict(runId: string, event: GateVerdictEvent, origin: Origin): Promise<void> {
    const t = this.findByRun(runId, event.step, origin);
    if (!t) {
      this.parkFollowUp(runId, event.step, event);
      return;
    }
    await this.run(t, t.session.onVerdict(verdictOf(event)));
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
    return this.serial(() => this.openFromFolderNow(runId, runDir, step, origin, hints));
  }

  private async openFromFolderNow(
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
    const run = { ...this.contextOf(runId, got.event.candidatePath), runDir, ...hints };
    if (run.skillPath && !this.documentFor(run.skillPath)) {
      await vscode.window.showTextDocument(vscode.Uri.file(run.skillPath), { preview: false });
    }
    return this.onCandidate(
      runId,
      got.event,
      run,
      { previous: got.previousText, candidate: got.candidateText },
      { ...(got.verdict ? { verdict: got.verdict } : {}), reviewNow: true },
    );
  }

  transition(t: TrackedSession, make: (s: ReviewSession) => Transition): Promise<void> {
    return this.serial(() => this.run(t, make(t.session)));
  }

  dismiss(t: TrackedSession): void {
    t.session.dismiss();
    this.schedule(t.uri);
  }

  // ── applying transitions ──────────────────────────────────────────────────────────────────

  private async run(t: TrackedSession, tr: Transition): Promise<void> {
    await this.applyOps(t, tr.ops);
    this.schedule(t.uri);
    if (tr.send) await this.send(t, tr.send);
    else if (tr.record)
      await this.decisions.record(
        t.session.init.runDir ?? t.session.init.runId,
        t.session.init.origin,
        tr.record,
      );
  }

  private async applyOps(t: TrackedSession, ops: readonly LineOp[]): Promise<void> {
    if (ops.length === 0) return;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri.toString());
    if (!doc) return;
    const edit = new vscode.WorkspaceEdit();
    const eol = doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n';
    const n = doc.lineCount;
    const lineEnd = (line: number): vscode.Position => doc.lineAt(line).range.end;
    for (const op of ops) {
      if (op.kind === 'insert') {
        const text = op.lines.join(eol);
        if (op.at < n) edit.insert(doc.uri, new vscode.Position(op.at, 0), text + eol);
        else edit.insert(doc.uri, lineEnd(n - 1), eol + text);
      } else {
        const end = op.start + op.count;
        if (end < n) edit.delete(doc.uri, new vscode.Range(op.start, 0, end, 0));
        else if (op.start > 0) edit.delete(doc.uri, new vscode.Range(lineEnd(op.start - 1), lineEnd(n - 1)));
        else edit.delete(doc.uri, new vscode.Range(new vscode.Position(0, 0), lineEnd(n - 1)));
      }
    }
    const key = t.uri.toString();
    const expected = applyLineOps(doc.getText().replace(/\r\n/g, '\n'), ops);
    this.applying.add(key);
    try {
      const ok = await runWithoutProtectedWarning(t.uri, () => vscode.workspace.applyEdit(edit));
      if (!ok) {
        this.ctx.log.warn(`review: VS Code refused the edit to ${t.uri.fsPath}; the review of it stops`);
        t.session.dismiss();
        return;
      }
      // The change event may trail the promise; until it is in, it is ours, not the person's.
      await textReaches(doc, expected);
    } finally {
      this.applying.delete(key);
    }
  }

  private async send(t: TrackedSession, params: DecideParams): Promise<void> {
    const { init } = t.session;
    await this.decisions.record(init.runDir ?? init.runId, init.origin, params);
    const entry: SentDecision = { params, outcome: 'failed' };
    t.sent.push(entry);
    try {
      const engine = await this.ctx.engine();
      const result = await engine.request(EngineRequests.decide, params, { timeoutMs: 15_000 });
      entry.outcome = result.ok && result.applied !== 'ignored' ? 'ok' : 'ignored';
      entry.detail = result.applied;
      if (entry.outcome === 'ignored') {
        this.ctx.log.info(
          `review: the engine had no use for the decision on step ${params.step} (${result.applied})`,
        );
      }
    } catch (err) {
      entry.detail = err instanceof Error ? err.message : String(err);
      this.ctx.log.warn(`review: sending the decision on step ${params.step} failed: ${entry.detail}`);
      void vscode.window.showWarningMessage(
        `SkillOpt: the run did not receive your decision on step ${params.step}: ${entry.detail}`,
      );
    }
    this.schedule(t.uri);
  }

  // ── the person types ──────────────────────────────────────────────────────────────────────

  private onDocumentChange(e: vscode.TextDocumentChangeEvent): void {
    const key = e.document.uri.toString();
    const t = this.sessions.get(key);
    if (!t || this.applying.has(key) || e.contentChanges.length === 0) return;
    const lost: string[] = [];
    for (const c of e.contentChanges) {
      lost.push(
        ...t.session.applyTextChange({
          startLine: c.range.start.line,
          startChar: c.range.start.character,
          endLine: c.range.end.line,
          endChar: c.range.end.character,
          text: c.text.replace(/\r\n/g, '\n'),
        }),
      );
    }
    const lines: string[] = [];
    for (let i = 0; i < e.document.lineCount; i++) lines.push(e.document.lineAt(i).text);
    t.session.refreshLines(lines);
    if (lost.length > 0)
      this.ctx.log.info(`review: your typing detached ${lost.length} edit(s) from the review`);
    this.schedule(t.uri);
  }

  schedule(uri: vscode.Uri): void {
    const key = uri.toString();
    if (this.timers.has(key)) return;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.changed.fire(uri);
      }, renderDelayMs),
    );
  }

  private fail(what: string, err: unknown): void {
    this.ctx.log.error(`review: ${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** Resolves once the document holds `expected` (or after a short wait, if it never does). */
function textReaches(doc: vscode.TextDocument, expected: string, ms = 2000): Promise<void> {
  const done = (): boolean => doc.getText().replace(/\r\n/g, '\n') === expected;
  if (done()) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms);
    const sub = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc && done()) finish();
    });
    function finish(): void {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    }
  });
}

export function verdictOf(v: GateVerdictEvent): {
  accepted: boolean;
  action: string;
  candidateScore: number;
  currentScore: number;
  bestScore: number;
} {
  return {
    accepted: isAccepted(v.action),
    action: v.action,
    candidateScore: v.candidateScore,
    currentScore: v.currentScore,
    bestScore: v.bestScore,
  };
}
