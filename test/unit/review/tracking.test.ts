import assert from 'node:assert/strict';
import { shiftBlock, type TextChange } from '../../../src/extension/review/tracking';

const change = (
  startLine: number,
  startChar: number,
  endLine: number,
  endChar: number,
  text: string,
): TextChange => ({
  startLine,
  startChar,
  endLine,
  endChar,
  text,
});

describe('review tracking: blocks follow the person typing', () => {
  const block = { start: 10, length: 3 }; // lines 10, 11, 12

  it('moves a block down by the lines inserted above it', () => {
    assert.deepEqual(shiftBlock(block, change(2, 0, 2, 0, 'one\ntwo\n')), {
      kind: 'keep',
      block: { start: 12, length: 3 },
    });
  });

  it('moves a block up by the lines deleted above it, up to its first line', () => {
    assert.deepEqual(shiftBlock(block, change(8, 0, 10, 0, '')), {
      kind: 'keep',
      block: { start: 8, length: 3 },
    });
  });

  it('leaves a block alone when the change is below it', () => {
    assert.deepEqual(shiftBlock(block, change(13, 0, 15, 4, 'x')), { kind: 'keep', block });
  });

  it('counts whole lines inserted at the block start as above it', () => {
    assert.deepEqual(shiftBlock(block, change(10, 0, 10, 0, 'new\n')), {
      kind: 'keep',
      block: { start: 11, length: 3 },
    });
  });

  it('grows when the person presses Enter inside the block', () => {
    assert.deepEqual(shiftBlock(block, change(11, 4, 11, 4, '\n')), {
      kind: 'keep',
      block: { start: 10, length: 4 },
    });
  });

  it('shrinks when the person deletes one of its lines', () => {
    assert.deepEqual(shiftBlock(block, change(12, 0, 13, 0, '')), {
      kind: 'keep',
      block: { start: 10, length: 2 },
    });
  });

  it('keeps its size when the person types within a line', () => {
    assert.deepEqual(shiftBlock(block, change(10, 0, 10, 0, 'x')), { kind: 'keep', block });
  });

  it('is consumed when a change covers all its lines', () => {
    assert.deepEqual(shiftBlock(block, change(10, 0, 13, 0, '')), { kind: 'consumed' });
    assert.deepEqual(shiftBlock(block, change(4, 2, 20, 0, 'x')), { kind: 'consumed' });
  });

  it('is touched when a change crosses its first or last edge', () => {
    assert.deepEqual(shiftBlock(block, change(9, 3, 10, 0, '')), { kind: 'touched' }); // joins line 9 and 10
    assert.deepEqual(shiftBlock(block, change(12, 5, 14, 0, '')), { kind: 'touched' });
    assert.deepEqual(shiftBlock(block, change(9, 0, 11, 2, 'x')), { kind: 'touched' });
  });

  describe('anchors (zero-length blocks)', () => {
    const anchor = { start: 5, length: 0 };
    it('moves with lines inserted or deleted above', () => {
      assert.deepEqual(shiftBlock(anchor, change(1, 0, 1, 0, 'a\nb\n')), {
        kind: 'keep',
        block: { start: 7, length: 0 },
      });
      assert.deepEqual(shiftBlock(anchor, change(3, 0, 5, 0, '')), {
        kind: 'keep',
        block: { start: 3, length: 0 },
      });
      assert.deepEqual(shiftBlock(anchor, change(5, 0, 5, 0, 'z\n')), {
        kind: 'keep',
        block: { start: 6, length: 0 },
      });
    });
    it('stays for changes at or below it', () => {
      assert.deepEqual(shiftBlock(anchor, change(5, 0, 7, 0, '')), { kind: 'keep', block: anchor });
      assert.deepEqual(shiftBlock(anchor, change(5, 0, 5, 0, 'typed')), { kind: 'keep', block: anchor });
    });
    it('is touched by a change across it', () => {
      assert.deepEqual(shiftBlock(anchor, change(4, 2, 6, 0, '')), { kind: 'touched' });
    });
  });
});
