/**
 * A skill folder's candidate reviewed file by file: one review session per changed file, each on
 * its own document, and one answer to the engine for the whole candidate. The engine takes the
 * first decision it hears for a step, so the members' decisions are held until every member is
 * decided and then sent as one. No `vscode` import: unit-tested with plain sessions.
 */
import type { DecideParams } from '../../protocol/engine';
import type { ReviewSession } from './session';

/** What the group needs of a member: its session (the controller's TrackedSession has more). */
export interface GroupMember {
  session: ReviewSession;
}

/** A member still asks the person something: it is under review with an undecided placed edit. */
export function stillOpen(s: ReviewSession): boolean {
  return s.phase === 'review' && s.placedOwners().some((id) => s.owners.get(id)?.fate === 'pending');
}

/** The members' decisions as one: every edit's answer, and the candidate's when all members agree. */
export function mergeDecisions(parts: readonly DecideParams[]): DecideParams | undefined {
  const first = parts[0];
  if (!first) return undefined;
  const candidates = parts.map((p) => p.candidate);
  const agreed = candidates.every((c) => c === candidates[0]) ? candidates[0] : undefined;
  const reason = parts.find((p) => p.reason)?.reason;
  const questionId = parts.find((p) => p.questionId)?.questionId;
  return {
    runId: first.runId,
    step: first.step,
    ...(questionId ? { questionId } : {}),
    decisions: parts.flatMap((p) => p.decisions),
    ...(agreed ? { candidate: agreed } : {}),
    ...(agreed === 'reject' && reason ? { reason } : {}),
  };
}

export class ReviewGroup<M extends GroupMember = GroupMember, E = unknown> {
  /** `ready`: the candidate as the engine announced it (every file's edits), to rebuild the group. */
  constructor(readonly ready: E) {}

  /** SKILL.md's review first, then the other files in path order. */
  readonly members: M[] = [];
  private readonly held = new Map<M, { params: DecideParams; send: boolean }>();

  add(m: M): void {
    if (!this.members.includes(m)) this.members.push(m);
  }

  /**
   * Holds one member's decision (`send`: a live run hears it; otherwise it is only recorded).
   * Returns the whole candidate's decision once no member is open any more, and forgets the held ones.
   */
  hold(m: M, params: DecideParams, send: boolean): { params: DecideParams; send: boolean } | undefined {
    this.held.set(m, { params, send });
    if (this.members.some((x) => stillOpen(x.session))) return undefined;
    const parts = this.members.flatMap((x) => {
      const h = this.held.get(x);
      return h ? [h] : [];
    });
    this.held.clear();
    const merged = mergeDecisions(parts.map((h) => h.params));
    return merged ? { params: merged, send: parts.some((h) => h.send) } : undefined;
  }
}
