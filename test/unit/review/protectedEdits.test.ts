import assert from 'node:assert/strict';
import { findProtectedRegions } from '../../../src/engine/skill/document';
import { lineStarts, touchedRegion } from '../../../src/extension/language/protectedEdits';

const skill = [
  '# Skill', // 0
  '', // 1
  '- Rule one.', // 2
  '', // 3
  '<!-- SLOW_UPDATE_START -->', // 4
  '- Learned across epochs.', // 5
  '<!-- SLOW_UPDATE_END -->', // 6
  '', // 7
].join('\n');

const at = (startLine: number, startChar: number, endLine = startLine, endChar = startChar) => ({
  startLine,
  startChar,
  endLine,
  endChar,
});

describe('protected block edits', () => {
  const regions = findProtectedRegions(skill);
  const starts = lineStarts(skill);

  it('finds the slow-update block on lines 4 to 6', () => {
    assert.deepEqual(
      regions.map((r) => [r.kind, r.startLine, r.endLine]),
      [['slow_update', 4, 6]],
    );
  });

  it('flags typing inside the block and editing a marker', () => {
    assert.equal(touchedRegion(regions, starts, at(5, 3))?.kind, 'slow_update');
    assert.equal(touchedRegion(regions, starts, at(4, 5, 4, 9))?.kind, 'slow_update');
    assert.equal(touchedRegion(regions, starts, at(6, 0, 7, 0))?.kind, 'slow_update');
  });

  it('ignores typing outside, and right before the start marker', () => {
    assert.equal(touchedRegion(regions, starts, at(2, 4)), undefined);
    assert.equal(touchedRegion(regions, starts, at(4, 0)), undefined);
    assert.equal(touchedRegion(regions, starts, at(7, 0)), undefined);
  });

  it('ignores a change that replaces the whole block (applying a whole skill)', () => {
    assert.equal(touchedRegion(regions, starts, at(0, 0, 7, 0)), undefined);
  });
});
