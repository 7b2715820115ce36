import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { diffStats, lineHunks, unifiedDiff } from '../../../src/engine/skill/hunks';

/** Indexed access that fails the test instead of yielding undefined. */
function at<T>(list: readonly T[], i: number): T {
  const v = list[i];
  if (v === undefined) throw new assert.AssertionError({ message: `no item at index ${i}` });
  return v;
}

const run = join(__dirname, '..', '..', 'fixtures', 'skillopt-python-run');

function shape(before: string, after: string): unknown[] {
  return lineHunks(before, after).map(({ oldStart, oldLines, newStart, newLines, removed, added }) => ({
    oldStart,
    oldLines,
    newStart,
    newLines,
    removed,
    added,
  }));
}

describe('line hunks', () => {
  it('numbers an insertion as a unified diff header does', () => {
    assert.deepEqual(shape('a\nb\nc\n', 'a\nx\nb\nc\n'), [
      { oldStart: 1, oldLines: 0, newStart: 2, newLines: 1, removed: [], added: ['x'] },
    ]);
    assert.deepEqual(shape('a\nb\n', 'x\na\nb\n'), [
      { oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, removed: [], added: ['x'] },
    ]);
  });

  it('numbers deletions and replacements, without context lines', () => {
    assert.deepEqual(shape('a\nb\nc\n', 'a\nc\n'), [
      { oldStart: 2, oldLines: 1, newStart: 1, newLines: 0, removed: ['b'], added: [] },
    ]);
    assert.deepEqual(shape('a\nb\nc\nd\n', 'a\nX\nc\nY\n'), [
      { oldStart: 2, oldLines: 1, newStart: 2, newLines: 1, removed: ['b'], added: ['X'] },
      { oldStart: 4, oldLines: 1, newStart: 4, newLines: 1, removed: ['d'], added: ['Y'] },
    ]);
  });

  it('keeps "no newline at end of file" notes out of the lines', () => {
    assert.deepEqual(shape('a\nb', 'a\nb\n'), [
      { oldStart: 2, oldLines: 1, newStart: 2, newLines: 1, removed: ['b'], added: ['b'] },
    ]);
  });

  it('returns nothing for identical texts', () => {
    assert.deepEqual(lineHunks('same\n', 'same\n'), []);
    assert.deepEqual(diffStats('same\n', 'same\n'), { added: 0, removed: 0 });
  });

  it('gives ids that are stable for a pair and distinct within it', () => {
    const before = 'a\nb\nc\nd\n';
    const after = 'a\nX\nc\nX\n';
    const first = lineHunks(before, after).map((h) => h.id);
    assert.deepEqual(
      lineHunks(before, after).map((h) => h.id),
      first,
    );
    assert.equal(new Set(first).size, 2);
    for (const id of first) assert.match(id, /^h-[0-9a-f]{10}$/);
  });

  it('describes the first step of the reference run', () => {
    const before = readFileSync(join(run, 'skills', 'skill_v0000.md'), 'utf8');
    const after = readFileSync(join(run, 'steps', 'step_0001', 'candidate_skill.md'), 'utf8');
    const hunks = lineHunks(before, after);
    assert.deepEqual(
      hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines]),
      [
        [2, 0, 3, 2],
        [3, 0, 6, 4],
      ],
    );
    assert.match(at(at(hunks, 0).added, 0), /^- Rule f89533\.1: /);
    assert.deepEqual(diffStats(before, after), { added: 6, removed: 0 });
  });

  it('prints a unified diff with the given names', () => {
    const text = unifiedDiff('a\nb\n', 'a\nc\n', { before: 'skill_v0001.md', after: 'candidate_skill.md' });
    assert.ok(text.includes('--- skill_v0001.md\n+++ candidate_skill.md\n'));
    assert.ok(text.includes('@@ -1,2 +1,2 @@\n a\n-b\n+c\n'));
  });
});
