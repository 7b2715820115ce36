import assert from 'node:assert/strict';
import {
  extractAppendixNotes,
  extractSlowUpdate,
  injectEmptyAppendix,
  replaceAppendix,
  replaceSlowUpdate,
} from '../../../src/engine/skill/document';
import { keepProtectedBlock } from '../../../src/engine/train/update';

describe('rewrite modes keep the protected blocks', () => {
  const body = '# Skill\n\n- Answer briefly.\n';
  const current = replaceAppendix(replaceSlowUpdate(injectEmptyAppendix(body), 'Guidance from epoch 1.'), [
    'Note kept by the appendix.',
  ]);

  it('leaves a rewrite alone when it kept both blocks as they were', () => {
    const rewritten = current.replace('Answer briefly.', 'Answer in one line.');
    assert.deepEqual(keepProtectedBlock(current, rewritten), { text: rewritten, restored: false });
  });

  it('puts back a slow-update block the rewrite changed or dropped', () => {
    for (const rewritten of [
      current.replace('Guidance from epoch 1.', 'Guidance I made up.'),
      `${body}\n- A new rule.\n`,
    ]) {
      const kept = keepProtectedBlock(current, rewritten);
      assert.equal(kept.restored, true);
      assert.equal(extractSlowUpdate(kept.text), 'Guidance from epoch 1.');
    }
  });

  it('puts back an appendix the rewrite changed or dropped', () => {
    for (const rewritten of [
      current.replace('Note kept by the appendix.', 'A note the rewrite wrote.'),
      replaceSlowUpdate(`${body}\n- A new rule.\n`, 'Guidance from epoch 1.'),
    ]) {
      const kept = keepProtectedBlock(current, rewritten);
      assert.equal(kept.restored, true);
      assert.deepEqual(extractAppendixNotes(kept.text), ['Note kept by the appendix.']);
      assert.equal(extractSlowUpdate(kept.text), 'Guidance from epoch 1.');
    }
  });

  it('adds no block the current skill did not have', () => {
    const kept = keepProtectedBlock(body, `${body}- More.\n`);
    assert.deepEqual(kept, { text: `${body}- More.\n`, restored: false });
  });
});
