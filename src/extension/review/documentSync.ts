/**
 * Keeps a review and its document in step: applies a transition's line operations (the change
 * event that follows is the review's, not the person's), follows the person's typing, sets a
 * review aside when its lines are gone, and keeps undecided lines out of a save the person asks for.
 */
import * as vscode from 'vscode';
import { candidateName } from '../../protocol/webview';
import type { Ctx } from '../ctx';
import { AutoSaveNotice } from './autoSaveNotice';
import type { DecisionStore } from './decisionStore';
import { applyOpsToDocument, followTyping, lineOpEdits, pendingInsertions } from './documentEdits';
import type { ReviewRegistry, TrackedSession } from './registry';
import { questionAskedNow, sendDecision } from './sendDecision';
import type { LineOp, Transition } from './session';

export class DocumentSync {
  private readonly applying = new Set<string>();
  private readonly autoSaveNotice: AutoSaveNotice;

  constructor(
    private readonly ctx: Ctx,
    private readonly decisions: DecisionStore,
    private readonly registry: ReviewRegistry,
    private readonly schedule: (uri: vscode.Uri) => void,
  ) {
    this.autoSaveNotice = new AutoSaveNotice(ctx);
  }

  /** Applies a transition: its edit to the document, then its decision to the engine or the store. */
  async run(t: TrackedSession, tr: Transition): Promise<void> {
    await this.applyOps(t, tr.ops);
    this.schedule(t.uri);
    if (tr.send && t.session.holdUntilAsked(tr.send)) {
      this.ctx.log.info(`review: step ${tr.send.step}'s answer waits for the run to ask its question`);
    } else if (tr.send) {
      const sent = await sendDecision(this.ctx, this.decisions, t.session.init, tr.send, t.sent);
      // A refused answer leaves the review as it was asked, to be answered again edit by edit.
      if (sent.detail === 'stale' && !t.group)
        await this.applyOps(t, t.session.answerRefused(questionAskedNow(this.ctx, t.session.init)).ops);
      this.schedule(t.uri);
    } else if (tr.record)
      await this.decisions.record(
        t.session.init.runDir ?? t.session.init.runId,
        t.session.init.origin,
        tr.record,
      );
  }

  async applyOps(t: TrackedSession, ops: readonly LineOp[]): Promise<void> {
    if (ops.length === 0) return;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri.toString());
    if (!doc) return;
    const key = t.uri.toString();
    // Until the edit's change event is in, the change is ours, not the person's.
    this.applying.add(key);
    try {
      if (!(await applyOpsToDocument(doc, ops))) {
        this.ctx.log.warn(`review: VS Code refused the edit to ${t.uri.fsPath}; the review of it stops`);
        t.session.dismiss();
      }
    } finally {
      this.applying.delete(key);
    }
  }

  /** The person typed (or reverted, or undid): follow it. */
  onDocumentChange(e: vscode.TextDocumentChangeEvent): void {
    const t = this.registry.get(e.document.uri);
    if (!t || this.applying.has(e.document.uri.toString()) || e.contentChanges.length === 0) return;
    const pendingBefore = pendingInsertions(t.session).length;
    const open = t.session.phase !== 'done';
    const lost = followTyping(t.session, e);
    if (lost.length > 0)
      this.ctx.log.info(`review: your typing detached ${lost.length} edit(s) from the review`);
    // Every undecided line went at once (a revert, an undo of the review's edit): set the review
    // aside; showing the document again, or the run's "waiting" surfaces, bring it back.
    if (pendingBefore > 0 && pendingInsertions(t.session).length === 0) {
      this.ctx.log.info(`review: ${t.fileName} lost the candidate's lines; the review is set aside`);
      // Losing every edit may have ended the session itself; it was open before the change.
      this.registry.park(t, open);
    }
    this.schedule(t.uri);
  }

  /**
   * A save the person asks for during a review (Ctrl+S, the close prompt's Save) never writes the
   * candidate's undecided lines: they leave the saved text, and the review, which no longer
   * matches the document, is set aside. A paused run can be reviewed again from its notification,
   * the status bar or the tree.
   */
  onWillSave(e: vscode.TextDocumentWillSaveEvent): void {
    const t = this.registry.get(e.document.uri);
    if (!t || t.session.phase === 'done') return;
    const ops = pendingInsertions(t.session);
    // Auto-save fires a second after every change: stripping there would end every review at once.
    if (e.reason !== vscode.TextDocumentSaveReason.Manual) {
      this.autoSaveNotice.tell(t, ops, e.document);
      return;
    }
    if (ops.length === 0) return;
    e.waitUntil(Promise.resolve(lineOpEdits(e.document, ops)));
    this.registry.park(t);
    this.schedule(t.uri);
    const lines = ops.reduce((n, op) => n + (op.kind === 'delete' ? op.count : 0), 0);
    const { origin, step, epoch } = t.session.init;
    void vscode.window.showInformationMessage(
      `SkillOpt: saved ${t.fileName} without the ${lines} undecided line${lines === 1 ? '' : 's'} of ${candidateName(origin, step, epoch)}.`,
    );
  }
}
