import assert from 'node:assert/strict';
import { aaReport, aaText } from '../../../src/engine/optimizer/aaCheck';
import { aaSummary } from '../../../src/protocol/gateText';

const run = (hard: number[]): { items: Map<string, { hard: number; soft: number }> } => ({
  items: new Map(hard.map((h, i) => [`t${i}`, { hard: h, soft: h }])),
});
const opts = { metric: 'hard' as const, mixedWeight: 0.5, alpha: 0.05, seed: 1 };

describe('A/A check (eval --aa)', () => {
  it('a deterministic target: every run equal, no gate accepts, no item changes', () => {
    const r = aaReport([run([1, 0, 1, 1]), run([1, 0, 1, 1]), run([1, 0, 1, 1])], opts);
    assert.equal(r.comparisons, 6);
    assert.equal(r.strict_accepts, 0);
    assert.equal(r.paired_accepts, 0);
    assert.equal(r.changed_items, 0);
    assert.deepEqual(r.scores, [0.75, 0.75, 0.75]);
  });

  it('counts the strict gate accepting noise, which the paired gate calls inconclusive', () => {
    // Run 2 gains one item by chance: the strict gate accepts it over runs 1 and 3, and run 3 over run 1.
    const r = aaReport([run([1, 0, 0, 1]), run([1, 1, 0, 1]), run([1, 0, 1, 1]), run([1, 0, 0, 1])], opts);
    assert.equal(r.comparisons, 12);
    assert.equal(r.changed_items, 2);
    // Strictly greater means: run 2 (0.75) and run 3 (0.75) over runs 1 and 4 (0.5): 4 comparisons.
    assert.equal(r.strict_accepts, 4);
    assert.equal(r.paired_accepts, 0, 'one item is never significant at 0.05');
    assert.equal(r.paired_inconclusive, 4);
    const text = aaText(r).join('\n');
    assert.match(text, /would accept the skill over itself in 4 of 12 comparisons \(33%\)/);
    assert.match(text, /paired gate \(alpha 0.05\): 0 accepted \(0%\), 4 inconclusive/);
    assert.match(text, /Every one of those accepts is noise/);
    assert.equal(aaSummary(r), 'A/A ×4: strict gate accepts 4 of 12 (33%), paired 0');
    // Runs of several samples per item (evaluation.repeats) say so wherever the check is shown.
    const repeated = { ...r, repeats: 3 };
    assert.match(aaText(repeated)[0], /scored 4 times, 3 samples per item each \(evaluation\.repeats/);
    assert.equal(aaSummary(repeated), 'A/A ×4 (3 repeats each): strict gate accepts 4 of 12 (33%), paired 0');
  });

  it('compares only items every run scored (an errored item is left out)', () => {
    const a = run([1, 0, 1]);
    const b = run([1, 0, 1]);
    b.items.delete('t2');
    const r = aaReport([a, b], opts);
    assert.equal(r.items, 2);
    assert.deepEqual(r.scores, [0.5, 0.5]);
  });
});
