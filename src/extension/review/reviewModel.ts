/** The words of a review (fates, phases, line operations, transitions) and what they do to text. */
import type { CandidateEdit, CandidateHunk } from '../../protocol/events';
import type { DecideParams } from '../../protocol/engine';
import type { CandidateOrigin } from '../../protocol/webview';
import type { ReviewMode } from '../../protocol/vocabulary';
import { isHunkOwner, splitLines } from './layout';

/** pending: not decided; conflict: the open document lost its lines; invalidated: the person typed across them. */
export type Fate = 'pending' | 'accepted' | 'rejected' | 'conflict' | 'skipped' | 'invalidated';
export type Decider = 'gate' | 'person';

/**
 * awaiting-gate: the document is untouched until the verdict; review: the person decides per edit;
 * verdict: the gate decided and the person may overrule; done: nothing left to show.
 */
export type Phase = 'awaiting-gate' | 'review' | 'verdict' | 'done';

export interface OwnerState {
  /** Edit id, or `hunk:<id>` for lines no edit explains. */
  id: string;
  edit?: CandidateEdit;
  fate: Fate;
  decidedBy?: Decider;
  reason?: string;
}

export interface Segment {
  owner: string;
  kind: 'removed' | 'added';
  lines: string[];
  /** First document line when present; the anchor (the point before this line) when absent. */
  start: number;
  present: boolean;
}

export type LineOp =
  { kind: 'delete'; start: number; count: number } | { kind: 'insert'; at: number; lines: string[] };

export interface Verdict {
  accepted: boolean;
  action: string;
  candidateScore: number;
  currentScore: number;
  bestScore: number;
}

export interface Transition {
  ops: LineOp[];
  /** Set when the engine must hear about it (live runs only). */
  send?: DecideParams;
  /** A finished run's decision: nobody to tell, but it goes into the run's history. */
  record?: DecideParams;
}

export interface SessionInit {
  runId: string;
  runDir?: string;
  step: number;
  epoch: number;
  origin: CandidateOrigin;
  mode: ReviewMode;
  /** The run is still going, so decisions are sent to the engine. */
  live: boolean;
  edits: CandidateEdit[];
  hunks: CandidateHunk[];
  previousText: string;
  candidateText: string;
  docText: string;
  candidatePath?: string;
  /**
   * A skill folder's file other than SKILL.md that this review shows (relative, `/`-separated);
   * its texts and edits are that file's alone.
   */
  file?: string;
  /**
   * The person opened a finished step to review it: decide now, whatever the mode (the gate's
   * verdict is history; a live run hears the outcome as an overrule).
   */
  reviewNow?: boolean;
}

/** Applies line operations (pre-edit coordinates) to a text; the controller does the same through VS Code. */
export function applyLineOps(text: string, ops: readonly LineOp[]): string {
  const lines = splitLines(text);
  const sorted = [...ops]
    .map((op, i) => ({ op, i }))
    .sort((a, b) => {
      const pa = a.op.kind === 'insert' ? a.op.at : a.op.start;
      const pb = b.op.kind === 'insert' ? b.op.at : b.op.start;
      return pb - pa || b.i - a.i;
    });
  for (const { op } of sorted) {
    if (op.kind === 'insert') lines.splice(op.at, 0, ...op.lines);
    else lines.splice(op.start, op.count);
  }
  return lines.join('\n');
}

export function describeOwner(o: OwnerState): string {
  if (isHunkOwner(o.id)) return 'change';
  return o.edit?.op ?? 'edit';
}
