import { createHash } from 'node:crypto';
import { createTwoFilesPatch, structuredPatch } from 'diff';
import type { LineHunk } from '../../protocol/records';

export interface DiffStats {
  added: number;
  removed: number;
}

export interface DiffNames {
  before: string;
  after: string;
}

function hunkId(ordinal: number, removed: readonly string[], added: readonly string[]): string {
  const key = JSON.stringify([ordinal, removed, added]);
  return `h-${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 10)}`;
}

/** Changed line blocks between two texts, without context lines. */
export function lineHunks(before: string, after: string): LineHunk[] {
  if (before === after) return [];
  const patch = structuredPatch('before', 'after', before, after, undefined, undefined, { context: 0 });
  return patch.hunks.map((h, ordinal) => {
    const removed: string[] = [];
    const added: string[] = [];
    for (const line of h.lines) {
      // "\ No newline at end of file" annotations are not content.
      if (line.startsWith('-')) removed.push(line.slice(1));
      else if (line.startsWith('+')) added.push(line.slice(1));
    }
    return {
      id: hunkId(ordinal, removed, added),
      // The library keeps the insertion line internally and subtracts one only when printing.
      oldStart: h.oldLines === 0 ? h.oldStart - 1 : h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newLines === 0 ? h.newStart - 1 : h.newStart,
      newLines: h.newLines,
      removed,
      added,
    };
  });
}

export function diffStats(before: string, after: string): DiffStats {
  let added = 0;
  let removed = 0;
  for (const h of lineHunks(before, after)) {
    added += h.added.length;
    removed += h.removed.length;
  }
  return { added, removed };
}

/** Unified diff text (3 lines of context) for terminals and logs. */
export function unifiedDiff(
  before: string,
  after: string,
  names: DiffNames = { before: 'before/SKILL.md', after: 'after/SKILL.md' },
): string {
  return createTwoFilesPatch(names.before, names.after, before, after, undefined, undefined, { context: 3 });
}
