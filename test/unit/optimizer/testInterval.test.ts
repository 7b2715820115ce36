import assert from 'node:assert/strict';
import { PyRandom } from '../../../src/engine/data/pyRandom';
import { pairedTest, signTest } from '../../../src/engine/optimizer/pairedTest';
import { describeGateTest } from '../../../src/protocol/gateText';

/**
 * From testInterval.scipy.py beside this file (scipy 1.17.1): the exact one-sided p-value, and the
 * interval's ends found there by bisecting scipy's permutation_test p-values on (deltas − μ).
 */
const SCIPY: Array<[number[], number, number, number]> = [
  [[1, 1, 1, 1, 1, 1, -1, 0, 0, 0, 0, 0], 0.0625, -1.0658141036401503e-14, 0.7500000000000107],
  [[1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0.03125, 0.12499999999999645, 0.5714285714285765],
  [[1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, 0, 0, 0, 0], 0.03271484375, 0.14285714285713524, 0.8000000000000096],
  [[0.5, 0.25, -0.1, 0.75, 0.3, 0, 0.2, -0.05], 0.03125, 0.033333333333327886, 0.4333333333333389],
  [
    [1 / 3, 2 / 3, -1 / 3, 1 / 3, 0, 1 / 3, -2 / 3, 1 / 3, 1 / 3, 2 / 3, 1 / 3, 0],
    0.0859375,
    -5.329070518200751e-15,
    0.4000000000000039,
  ],
];

/** Candidate and current per-item scores whose deltas are `d` (current 0.5 unless `binary`). */
function pair(d: readonly number[], binary: boolean): [Map<string, number>, Map<string, number>] {
  const cand = new Map<string, number>();
  const cur = new Map<string, number>();
  d.forEach((x, i) => {
    const base = binary ? (x < 0 ? 1 : 0) : 0.25;
    cur.set(`q${i}`, binary && x === 0 ? i % 2 : base);
    cand.set(`q${i}`, (binary && x === 0 ? i % 2 : base) + x);
  });
  return [cand, cur];
}

const isBinary = (d: readonly number[]): boolean => d.every((x) => x === 0 || x === 1 || x === -1);

describe('paired gate: the interval comes from the test, so it never contradicts the verdict', () => {
  it('matches the p-value and the inverted-test ends computed with scipy', () => {
    for (const [d, p, lo, hi] of SCIPY) {
      const [cand, cur] = pair(d, isBinary(d));
      const t = pairedTest(cand, cur, { alpha: 0.05, seed: 1 });
      assert.equal(t.test, isBinary(d) ? 'sign' : 'permutation');
      assert.ok(Math.abs(t.pValue - p) < 1e-12, `p ${t.pValue} vs ${p}`);
      // Ties within rounding (1e-9 of the sums) count as ties, so the ends agree to about 1e-8.
      assert.ok(Math.abs(t.interval[0] - lo) < 1e-7, `low ${t.interval[0]} vs ${lo} for ${d.join(' ')}`);
      assert.ok(Math.abs(t.interval[1] - hi) < 1e-7, `high ${t.interval[1]} vs ${hi} for ${d.join(' ')}`);
    }
  });

  it('an inconclusive p 0.0625 (6 improved, 1 broken of 12) has an interval that includes 0', () => {
    // A simulated run showed this step as "inconclusive, p 0.063" beside a bootstrap interval
    // [+0.053, +0.421] that excluded 0. The test's own interval reaches 0.
    const [cand, cur] = pair(SCIPY[0][0], true);
    const t = pairedTest(cand, cur, { alpha: 0.05, seed: 3 });
    assert.ok(t.pValue > 0.05);
    assert.ok(t.interval[0] <= 0, `interval ${t.interval.join(', ')}`);
    assert.match(
      describeGateTest({
        test: t.test,
        n: t.n,
        repeats: 1,
        improved: t.improved,
        regressed: t.regressed,
        mean_delta: t.meanDelta,
        p_value: t.pValue,
        exact: t.exact,
        alpha: 0.05,
        ci_low: t.interval[0],
        ci_high: t.interval[1],
        ci_level: 0.9,
        verdict: 'inconclusive',
      }),
      /p 0\.063 .*Δ \+0\.417, 90% interval \[\+0\.000, \+0\.750\]/,
    );
  });

  it('excludes 0 exactly when p ≤ alpha, and holds the mean delta, over random splits of every kind', function () {
    this.timeout(120_000);
    const rng = new PyRandom(5);
    // Binary (any size, closed form), soft exact (≤ 16 non-zero deltas) and soft Monte Carlo (more).
    const shapes = [
      { n: 30, values: [-1, 0, 0, 1, 1] },
      { n: 12, values: [-0.5, 0, 0.25, 0.5, 1, -1 / 3] },
      { n: 24, values: [-2 / 3, -1 / 3, 0, 1 / 3, 2 / 3, 1] },
    ];
    let rejected = 0;
    let kept = 0;
    for (let k = 0; k < 60; k++) {
      const { n, values } = shapes[k % shapes.length];
      const d = Array.from({ length: n }, () => values[Math.floor(rng.random() * values.length)]);
      const [cand, cur] = pair(d, isBinary(d));
      for (const alpha of [0.05, 0.025, 0.1]) {
        const t = pairedTest(cand, cur, { alpha, seed: k });
        assert.equal(
          t.interval[0] > 0,
          t.pValue <= alpha,
          `${d.join(' ')} at ${alpha}: ${JSON.stringify(t)}`,
        );
        assert.ok(t.interval[0] <= t.meanDelta + 1e-9 && t.meanDelta <= t.interval[1] + 1e-9);
        if (t.pValue <= alpha) rejected++;
        else kept++;
      }
    }
    assert.ok(rejected > 10 && kept > 10, `both verdicts seen: ${rejected} / ${kept}`);
  });

  it('on 0–1 scores the p-value is the exact sign test for any number of items', () => {
    const d = [...Array<number>(40).fill(1), ...Array<number>(25).fill(-1), ...Array<number>(35).fill(0)];
    const [cand, cur] = pair(d, true);
    const t = pairedTest(cand, cur, { alpha: 0.05, seed: 1 });
    assert.equal(t.exact, true);
    assert.ok(Math.abs(t.pValue - signTest(40, 25)) < 1e-12, `${t.pValue} vs ${signTest(40, 25)}`);
    assert.equal(t.interval[0] > 0, t.pValue <= 0.05);
  });
});
