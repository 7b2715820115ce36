/**
 * The review of one candidate on one document, as a pure state machine: which edit is pending,
 * accepted or rejected (and by whom), which of its lines are in the document, and what the next
 * transition must do to the text (line operations) and tell the engine (a decision). The
 * controller turns line operations into one undoable WorkspaceEdit and sends the decision.
 */
import type { GateTestRecord, ItemRegressions } from '../../protocol/records';
import { skillHash } from '../../engine/skill/document';
import type { DecideParams } from '../../protocol/engine';
import {
  candidateChanges,
  ownersOf,
  placeChanges,
  placeOnCandidate,
  type Change,
  type PlacedChange,
} from './layout';
import type { TextChange } from './tracking';
import { ownsLines, ReviewLines } from './reviewLines';
import { previousForDocument } from './injectedBlocks';
import { candidateDecision, personDecision } from './sessionDecisions';
import { lineHunks } from '../../engine/skill/hunks';
import type {
  Decider,
  Fate,
  LineOp,
  OwnerState,
  Phase,
  Segment,
  SessionInit,
  Transition,
  Verdict,
} from './reviewModel';

export type { Decider, Fate, LineOp, OwnerState, Phase, Segment, SessionInit, Transition, Verdict };
export { applyLineOps, describeOwner } from './reviewModel';

export class ReviewSession {
  readonly owners = new Map<string, OwnerState>();
  private readonly lines: ReviewLines;
  phase: Phase = 'review';
  verdict: Verdict | undefined;
  /** The gate's scores when the engine asked after the gate accepted (gate-then-human). */
  gateScores:
    | {
        candidateScore: number;
        currentScore: number;
        /** The paired gate's test; `inconclusive` when the person is asked to decide within noise. */
        gateTest?: GateTestRecord;
        itemRegressions?: ItemRegressions;
      }
    | undefined;
  /** The document already held the candidate when the review opened. */
  readonly startedOnCandidate: boolean;
  /** The engine is paused until the person answers (it asked with `review/requested`). */
  waiting = false;
  /** The question the engine asked (`review/requested`); the answer names it, then it is cleared. */
  private questionId: string | undefined;
  private asked = false;
  /** human-first shows the review before its question arrives: an answer given then waits for it. */
  private early = false;
  private held: DecideParams | undefined;

  private constructor(
    readonly init: SessionInit,
    placed: PlacedChange[],
    conflicts: Change[],
    onCandidate: boolean,
  ) {
    this.startedOnCandidate = onCandidate;
    const changes = [...placed, ...conflicts].sort((a, b) => a.at - b.at);
    for (const id of ownersOf(changes)) {
      const edit = init.edits.find((e) => e.id === id);
      this.owners.set(id, { id, fate: 'pending', ...(edit ? { edit } : {}) });
    }
    for (const e of init.edits) {
      if (!this.owners.has(e.id)) this.owners.set(e.id, { id: e.id, edit: e, fate: 'skipped' });
    }
    for (const c of conflicts) {
      const o = this.owners.get(c.owner);
      if (o) o.fate = 'conflict';
    }
    // An owner with one unplaceable change cannot be applied piecemeal.
    this.lines = new ReviewLines(
      placed.filter((c) => this.owners.get(c.owner)?.fate !== 'conflict'),
      onCandidate,
    );
  }

  /** Lays the candidate's changes onto the document the person has open. */
  static create(init: SessionInit): ReviewSession {
    const doc = init.docText.replace(/\r\n/g, '\n');
    const previous = previousForDocument(init.previousText, doc);
    // The engine's hunks are against its own previous text; without its empty blocks they are redrawn.
    const hunks = previous === init.previousText ? init.hunks : lineHunks(previous, init.candidateText);
    const changes = candidateChanges(previous, init.candidateText, hunks, init.edits, init.file);
    const onCandidate =
      changes.length > 0 && skillHash(doc) === skillHash(init.candidateText.replace(/\r\n/g, '\n'));
    if (onCandidate) {
      const session = new ReviewSession(init, placeOnCandidate(changes), [], true);
      for (const o of session.owners.values()) if (o.fate === 'pending') o.fate = 'accepted';
      session.phase = init.live ? 'awaiting-gate' : 'done';
      return session;
    }
    const { placed, conflicts } = placeChanges(previous, doc, changes);
    return new ReviewSession(init, placed, conflicts, false);
  }

  /**
   * Whether the person decides edit by edit. In a live gate-then-human run the gate judged the
   * candidate as a whole and the engine takes or drops it whole, so the choice is per candidate.
   */
  get perEdit(): boolean {
    return !(this.init.live && this.init.mode === 'gate-then-human' && !this.init.reviewNow);
  }

  get key(): string {
    return `${this.init.runId}\u0000${this.init.origin}\u0000${this.init.step}`;
  }

  ownerList(): OwnerState[] {
    return [...this.owners.values()];
  }

  /** Owners the document can show, in document order. */
  placedOwners(): string[] {
    return this.lines.owners();
  }

  withFate(fate: Fate): string[] {
    return this.ownerList()
      .filter((o) => o.fate === fate)
      .map((o) => o.id);
  }

  segmentsOf(owner: string): Segment[] {
    return this.lines.of(owner);
  }

  allSegments(): readonly Segment[] {
    return this.lines.all();
  }

  /** First line the owner occupies in the document, or its anchor when none of its lines are there. */
  ownerLine(owner: string): number | undefined {
    const segs = this.segmentsOf(owner);
    const present = segs.find(ownsLines);
    return present?.start ?? segs[0]?.start;
  }

  /** Opens the review according to the mode; returns what to do to the document. */
  begin(): Transition {
    if (this.phase === 'done' || this.phase === 'awaiting-gate') return { ops: [] };
    const { live, mode, reviewNow } = this.init;
    if (live && mode !== 'human-first' && !reviewNow) {
      this.phase = 'awaiting-gate';
      return { ops: [] };
    }
    this.phase = 'review';
    return { ops: this.toggle(this.withFate('pending'), { removed: true, added: true }) };
  }

  /**
   * The gate's verdict on this candidate. In auto mode it decides; a gate-then-human engine asks
   * the person first (`onReviewRequested`), so a verdict that arrives while still awaiting the
   * gate means nobody was asked and it is final there too.
   */
  onVerdict(v: Verdict): Transition {
    this.verdict = v;
    if (this.phase !== 'awaiting-gate') return { ops: [] };
    this.waiting = false;
    if (this.init.mode === 'human-first') {
      const kept = this.ownerList().filter((o) => o.fate === 'accepted' && o.decidedBy === 'person');
      this.phase = 'verdict';
      if (v.accepted) return { ops: [] };
      const ids = kept.map((o) => o.id);
      for (const o of kept) this.setFate(o.id, 'rejected', 'gate');
      return { ops: this.toggle(ids, { removed: true, added: false }) };
    }
    const pending = this.withFate('pending');
    this.phase = 'verdict';
    if (!v.accepted) {
      for (const id of pending) this.setFate(id, 'rejected', 'gate');
      return { ops: [] };
    }
    for (const id of pending) this.setFate(id, 'accepted', 'gate');
    return { ops: this.toggle(pending, { removed: false, added: true }) };
  }

  /** The engine paused and asks the person (after the gate accepted, or before the gate runs). */
  onReviewRequested(
    questionId: string,
    phase: 'before_gate' | 'after_gate',
    scores?: {
      candidateScore?: number;
      currentScore?: number;
      gateTest?: GateTestRecord;
      itemRegressions?: ItemRegressions;
    },
  ): Transition {
    this.asked = true;
    const held = this.held;
    this.held = undefined;
    if (held) return { ops: [], send: { ...held, questionId } };
    if (this.early || this.phase === 'done' || this.phase === 'verdict') return { ops: [] };
    this.waiting = true;
    this.questionId = questionId;
    if (phase === 'after_gate' && scores?.candidateScore !== undefined) {
      this.gateScores = {
        candidateScore: scores.candidateScore,
        currentScore: scores.currentScore ?? scores.candidateScore,
        ...(scores.gateTest ? { gateTest: scores.gateTest } : {}),
        ...(scores.itemRegressions ? { itemRegressions: scores.itemRegressions } : {}),
      };
    }
    if (this.phase === 'review') return { ops: [] };
    this.phase = 'review';
    return { ops: this.toggle(this.withFate('pending'), { removed: true, added: true }) };
  }

  /** The person accepts or rejects some edits during the review. */
  decide(ids: readonly string[], accept: boolean, reason?: string): Transition {
    if (!this.perEdit) return { ops: [] };
    return this.decideOwners(ids, accept, reason);
  }

  private decideOwners(ids: readonly string[], accept: boolean, reason?: string): Transition {
    if (this.phase !== 'review') return { ops: [] };
    const pending = ids.filter((id) => this.owners.get(id)?.fate === 'pending' && this.isPlaced(id));
    for (const id of pending)
      this.setFate(id, accept ? 'accepted' : 'rejected', 'person', accept ? undefined : reason);
    const ops = this.toggle(pending, { removed: !accept, added: accept });
    if (this.placedOwners().some((id) => this.owners.get(id)?.fate === 'pending')) return { ops };
    return { ops, ...this.complete(reason) };
  }

  /**
   * Candidate-level accept: the person's overrule of a gate rejection, Accept All, or Accept
   * Candidate in the diff view (`seenAll`: the person saw every edit, placeable or not).
   */
  acceptCandidate(seenAll = false): Transition {
    return this.wholeCandidate(true, seenAll);
  }

  rejectCandidate(reason?: string, seenAll = false): Transition {
    return this.wholeCandidate(false, seenAll, reason);
  }

  /** Stops showing the candidate; the document keeps whatever it has. */
  dismiss(): void {
    this.phase = 'done';
  }

  /** The person typed: move the blocks, and drop the edits whose lines they rewrote. */
  applyTextChange(change: TextChange): string[] {
    const lost = this.lines.follow(change);
    for (const id of lost) {
      const o = this.owners.get(id);
      if (o && (o.fate === 'pending' || o.fate === 'accepted' || o.fate === 'rejected'))
        o.fate = 'invalidated';
    }
    if (lost.size > 0 && this.phase === 'review' && !this.placedOwners().some((id) => this.isPending(id))) {
      this.phase = 'done';
    }
    return [...lost];
  }

  /** After the person typed inside blocks, their lines are read back from the document. */
  refreshLines(docLines: readonly string[]): void {
    this.lines.refresh(docLines);
  }

  private isPlaced(id: string): boolean {
    return this.lines.has(id);
  }

  private isPending(id: string): boolean {
    return this.owners.get(id)?.fate === 'pending';
  }

  private setFate(id: string, fate: Fate, by: Decider, reason?: string): void {
    const o = this.owners.get(id);
    if (!o) return;
    o.fate = fate;
    o.decidedBy = by;
    if (reason) o.reason = reason;
    else delete o.reason;
  }

  private wholeCandidate(accept: boolean, seenAll: boolean, reason?: string): Transition {
    if (this.phase === 'done') return { ops: [] };
    if (this.phase === 'review') {
      const pending = this.withFate('pending').filter((id) => this.isPlaced(id));
      const t = this.decideOwners(pending, accept, reason);
      // The whole-candidate answer replaces the per-edit one, to the same question.
      if (seenAll && t.send) t.send = { ...t.send, ...this.decision(accept, true, reason) };
      return t;
    }
    // Overrule (verdict) or an early call (awaiting the gate): flip every placed edit.
    const ids = this.ownerList()
      .filter((o) => o.fate !== 'skipped' && o.fate !== 'invalidated' && o.fate !== 'conflict')
      .map((o) => o.id);
    const ops = this.toggle(ids, { removed: !accept, added: accept });
    for (const id of ids)
      this.setFate(id, accept ? 'accepted' : 'rejected', 'person', accept ? undefined : reason);
    this.phase = 'done';
    this.waiting = false;
    const decision = this.decision(accept, seenAll, reason);
    return this.init.live ? { ops, send: this.answering(decision) } : { ops, record: decision };
  }

  /** Decision for a whole-candidate call: every edit the same way. */
  private decision(accept: boolean, includeUnplaced: boolean, reason?: string): DecideParams {
    return candidateDecision(this.init, this.ownerList(), accept, includeUnplaced, reason);
  }

  /** Names the question a decision answers (once: a later call on this step is an overrule). */
  private answering(params: DecideParams): DecideParams {
    const { live, mode, reviewNow } = this.init;
    if (live && mode === 'human-first' && !reviewNow && !this.asked) this.early = true;
    const questionId = this.questionId;
    this.questionId = undefined;
    return questionId ? { ...params, questionId } : params;
  }

  /**
   * The engine refused this review's answer as stale (the run asks again, or moved on): the
   * person's decisions are undone and the review is drawn as it was asked, to be answered again
   * edit by edit. `questionId`: the question the run asks about this step now, if it does.
   */
  answerRefused(questionId: string | undefined): Transition {
    if (this.phase === 'verdict') return { ops: [] };
    const undone = this.ownerList().filter((o) => o.decidedBy === 'person' && this.isPlaced(o.id));
    for (const o of undone) {
      o.fate = 'pending';
      delete o.decidedBy;
      delete o.reason;
    }
    this.phase = 'review';
    this.early = false;
    this.held = undefined;
    this.waiting = questionId !== undefined;
    this.asked ||= this.waiting;
    this.questionId = questionId;
    return {
      ops: this.toggle(
        undone.map((o) => o.id),
        { removed: true, added: true },
      ),
    };
  }

  /** Keeps an answer given before the engine asked, to send with the question's id when it does. */
  holdUntilAsked(params: DecideParams): boolean {
    if (!this.early || this.asked) return false;
    this.held = params;
    return true;
  }

  /** Every placed edit is decided by the person: tell the engine (live runs) and move on. */
  private complete(reason?: string): Omit<Transition, 'ops'> {
    const { params, anyAccepted } = personDecision(this.init, this.ownerList(), reason);
    const { live, mode, reviewNow } = this.init;
    this.waiting = false;
    this.phase =
      live && mode === 'human-first' && anyAccepted && !this.verdict && !reviewNow ? 'awaiting-gate' : 'done';
    return live ? { send: this.answering(params) } : { record: params };
  }

  private toggle(ids: readonly string[], want: { removed: boolean; added: boolean }): LineOp[] {
    return this.lines.toggle(ids, want);
  }
}
