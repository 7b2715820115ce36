/**
 * Where a review's lines are in the document: each placed change as a removed and an added block,
 * which of them are present, and how they move when the review toggles them or the person types.
 * Knows nothing of fates or the engine; the review session decides which owners to toggle.
 */
import type { PlacedChange } from './layout';
import type { LineOp, Segment } from './reviewModel';
import { shiftBlock, type TextChange } from './tracking';

export const ownsLines = (s: Segment): boolean => s.present && s.lines.length > 0;

export class ReviewLines {
  /** Document order; a change's removed segment comes right before its added segment. */
  private segments: Segment[] = [];

  /** `onCandidate`: the document already holds the added lines; otherwise the removed ones. */
  constructor(placed: readonly PlacedChange[], onCandidate: boolean) {
    for (const c of placed) {
      this.segments.push({
        owner: c.owner,
        kind: 'removed',
        lines: c.removed,
        start: c.docAt,
        present: !onCandidate,
      });
      this.segments.push({
        owner: c.owner,
        kind: 'added',
        lines: c.added,
        start: onCandidate ? c.docAt : c.docAt + c.removed.length,
        present: onCandidate,
      });
    }
  }

  all(): readonly Segment[] {
    return this.segments;
  }

  of(owner: string): Segment[] {
    return this.segments.filter((s) => s.owner === owner);
  }

  /** Owners the document can show, in document order. */
  owners(): string[] {
    return [...new Set(this.segments.map((s) => s.owner))];
  }

  has(owner: string): boolean {
    return this.segments.some((s) => s.owner === owner);
  }

  /**
   * Makes the removed / added lines of `ids` present or absent. Returns the line operations in
   * pre-edit coordinates (one WorkspaceEdit) and moves every segment to its post-edit place.
   */
  toggle(ids: readonly string[], want: { removed: boolean; added: boolean }): LineOp[] {
    const set = new Set(ids);
    const ops: LineOp[] = [];
    let delta = 0;
    for (const seg of this.segments) {
      const oldStart = seg.start;
      seg.start = oldStart + delta;
      if (!set.has(seg.owner) || seg.lines.length === 0) continue;
      const target = seg.kind === 'removed' ? want.removed : want.added;
      if (target === seg.present) continue;
      if (target) {
        ops.push({ kind: 'insert', at: oldStart, lines: seg.lines });
        delta += seg.lines.length;
      } else {
        ops.push({ kind: 'delete', start: oldStart, count: seg.lines.length });
        delta -= seg.lines.length;
      }
      seg.present = target;
    }
    return ops;
  }

  /** The person typed: move the blocks; returns the owners whose lines they rewrote (dropped here). */
  follow(change: TextChange): Set<string> {
    const lost = new Set<string>();
    const next: Segment[] = [];
    for (const seg of this.segments) {
      const fate = shiftBlock({ start: seg.start, length: ownsLines(seg) ? seg.lines.length : 0 }, change);
      if (fate.kind !== 'keep') {
        lost.add(seg.owner);
        continue;
      }
      const grew = ownsLines(seg) ? fate.block.length - seg.lines.length : 0;
      next.push({
        ...seg,
        start: fate.block.start,
        // Typing inside a block changes its lines; keep the count right for later deletions.
        lines: grew === 0 ? seg.lines : resize(seg.lines, fate.block.length),
      });
    }
    this.segments = next.filter((s) => !lost.has(s.owner));
    return lost;
  }

  /** After the person typed inside blocks, their lines are read back from the document. */
  refresh(docLines: readonly string[]): void {
    for (const seg of this.segments) {
      if (ownsLines(seg)) seg.lines = docLines.slice(seg.start, seg.start + seg.lines.length);
    }
  }
}

function resize(lines: readonly string[], length: number): string[] {
  const out = lines.slice(0, length);
  while (out.length < length) out.push('');
  return out;
}
