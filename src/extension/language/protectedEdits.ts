/**
 * Which of the person's edits land in a protected block. Pure: regions come from the engine's own
 * marker scanner, positions are 0-based lines and characters like VS Code's.
 */
import type { ProtectedRegion } from '../../engine/skill/markers';

export interface LineRange {
  startLine: number;
  startChar: number;
  endLine: number;
  endChar: number;
}

/** Offsets of each line start, so (line, character) positions map to text offsets. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function offsetOf(starts: readonly number[], line: number, character: number): number {
  return (starts[line] ?? starts.at(-1) ?? 0) + character;
}

/**
 * The region a change edits inside of, given the regions of the text *before* the change. A change
 * that replaces a whole block (Apply Best Skill, a pasted skill) is not an edit inside it.
 */
export function touchedRegion(
  regions: readonly ProtectedRegion[],
  starts: readonly number[],
  change: LineRange,
): ProtectedRegion | undefined {
  const from = offsetOf(starts, change.startLine, change.startChar);
  const to = offsetOf(starts, change.endLine, change.endChar);
  for (const r of regions) {
    const wholeBlock = from <= r.start && to >= r.end;
    if (wholeBlock) continue;
    // Touching the start marker's first character from outside is typing before the block.
    const inside = from === to ? from > r.start && from < r.end : from < r.end && to > r.start;
    if (inside) return r;
  }
  return undefined;
}
