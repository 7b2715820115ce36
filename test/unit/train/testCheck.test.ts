import assert from 'node:assert/strict';
import { wilsonInterval } from '../../../src/engine/optimizer/pairedTest';
import type { TestSummary } from '../../../src/engine/train/evaluate';
import { testCheck } from '../../../src/engine/train/testCheck';
import { testCheckLines } from '../../../src/protocol/gateText';

const summary = (hard: number[]): TestSummary => {
  const items = Object.fromEntries(hard.map((h, i) => [`t${i}`, h]));
  const mean = hard.reduce((a, b) => a + b, 0) / hard.length;
  return { overall: { hard: mean, soft: mean, total: hard.length }, byType: {}, failing: [], items };
};

describe('the test split read with its uncertainty', () => {
  it('Wilson intervals match the closed form computed in Python', () => {
    // The closed form with Python's statistics.NormalDist quantile: (0.39678, 0.89221)
    const [lo, hi] = wilsonInterval(7, 10, 0.05);
    assert.ok(Math.abs(lo - 0.3967781474611) < 1e-6 && Math.abs(hi - 0.8922087325937) < 1e-6, `${lo} ${hi}`);
    const [lo2, hi2] = wilsonInterval(18, 20, 0.1);
    assert.ok(Math.abs(lo2 - 0.7383369536731) < 1e-6 && Math.abs(hi2 - 0.9663367764381) < 1e-6);
    const [z0, z1] = wilsonInterval(0, 20, 0.05);
    assert.ok(z0 >= 0 && z0 < 1e-9 && Math.abs(z1 - 0.1611251580528) < 1e-6);
  });

  it('confirms a selection gain that shows on test, flags one that does not', () => {
    const initial = summary(Array.from({ length: 30 }, (_, i) => (i < 10 ? 1 : 0)));
    const better = summary(Array.from({ length: 30 }, (_, i) => (i < 25 ? 1 : 0)));
    const ok = testCheck({ initial, best: better, final: better }, 0.2, { alpha: 0.05, seed: 1 })!;
    assert.equal(ok.verdict, 'confirmed');
    assert.equal(ok.best_vs_initial?.n, 30);
    assert.ok(ok.best_vs_initial!.interval[0] > 0);
    assert.ok(ok.intervals.best && ok.intervals.initial && ok.intervals.final);
    assert.match(
      testCheckLines(ok).join('\n'),
      /The selection gain shows on test: best − initial on the same 30 test items: \+0\.500/,
    );

    // The same selection gain, but on test the best skill only swaps which items pass.
    const swapped = summary(Array.from({ length: 30 }, (_, i) => (i >= 5 && i < 15 ? 1 : 0)));
    const flagged = testCheck({ initial, best: swapped }, 0.2, { alpha: 0.05, seed: 1 })!;
    assert.equal(flagged.verdict, 'not_confirmed');
    assert.match(
      testCheckLines(flagged).join('\n'),
      /\*\*The best skill's selection gain \(\+0\.200\) does not show on test\*\*.*overfitted/,
    );
  });

  it('has nothing to confirm without a selection gain, and nothing to say without a test score', () => {
    const s = summary([1, 0, 1, 0]);
    assert.equal(testCheck({ initial: s, best: s }, 0, { alpha: 0.05, seed: 1 })?.verdict, 'no_gain');
    // The CLI's plain-text form has no Markdown.
    const plain = testCheckLines(testCheck({ initial: s, best: s }, 0.1, { alpha: 0.05, seed: 1 })!, false);
    assert.ok(plain.every((l) => !/[*`]/.test(l)) && plain.length === 2, plain.join('\n'));
    assert.equal(testCheck({}, 0.3, { alpha: 0.05, seed: 1 }), undefined);
  });
});
