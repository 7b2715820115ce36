import assert from 'node:assert/strict';
import { PyRandom } from '../../../src/engine/data/pyRandom';
import { decideGate, decidePairedGate } from '../../../src/engine/optimizer/gate';
import {
  binomialUpperTail,
  bootstrapInterval,
  describePower,
  pairedTest,
  permutationTest,
  signTest,
  smallestDetectableDelta,
} from '../../../src/engine/optimizer/pairedTest';
import { describeGatePower, powerSummary } from '../../../src/protocol/gateText';
import { cliInProcess as cli } from '../../support/cliInProcess';
import { exampleConfig } from '../train/helpers';

/** Expected p-values from scipy 1.17.1 (pairedTest.scipy.py beside this file). */
const TAILS: Array<[number, number, number]> = [
  [7, 10, 0.171875],
  [15, 20, 0.020694732666015625],
  [60, 100, 0.028443966820490444],
  [0, 5, 1.0],
  [5, 5, 0.03125],
  [520, 1000, 0.10872414660207075],
  [3, 3, 0.125],
];
const SIGN: Array<[number, number, number]> = [
  [6, 1, 0.0625],
  [9, 3, 0.072998046875],
  [4, 4, 0.63671875],
  [12, 2, 0.0064697265625],
];
const PERM: Array<[number[], number]> = [
  [[0.5, 0.25, -0.1, 0.75, 0.3, 0, 0.2, -0.05], 0.03125],
  [[1 / 3, 2 / 3, -1 / 3, 1 / 3, 0, 1 / 3, -2 / 3, 1 / 3, 1 / 3, 2 / 3, 1 / 3, 0], 0.0859375],
];

const close = (a: number, b: number, tol = 1e-12): void =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

describe('paired gate statistics', () => {
  it('binomial upper tails match scipy, large n included', () => {
    for (const [k, n, p] of TAILS) close(binomialUpperTail(k, n), p, 1e-10);
  });

  it('the exact sign test (McNemar on discordant pairs) matches scipy’s binomtest', () => {
    for (const [w, l, p] of SIGN) close(signTest(w, l), p, 1e-10);
  });

  it('the exact sign-flip permutation test matches scipy’s permutation_test', () => {
    for (const [d, p] of PERM) {
      const r = permutationTest(d, 1);
      assert.equal(r.exact, true);
      close(r.p, p, 1e-12);
    }
  });

  it('estimates by seeded Monte Carlo above 16 non-zero deltas, reproducibly and near the exact value', () => {
    // ±0.5 deltas: the sign-flip distribution is the binomial one, so the exact p is known.
    const d = [...Array<number>(17).fill(0.5), ...Array<number>(7).fill(-0.5)];
    const a = permutationTest(d, 7);
    assert.equal(a.exact, false);
    assert.deepEqual(permutationTest(d, 7), a);
    const exact = binomialUpperTail(17, 24);
    assert.ok(Math.abs(a.p - exact) < 0.01, `${a.p} vs ${exact}`);
  });

  it('gives a seeded bootstrap interval of the mean delta around the mean', () => {
    const d = [0.5, 0.25, -0.1, 0.75, 0.3, 0, 0.2, -0.05];
    const [lo, hi] = bootstrapInterval(d, 0.05, 3);
    const mean = d.reduce((a, b) => a + b, 0) / d.length;
    assert.ok(lo < mean && mean < hi, `${lo} < ${mean} < ${hi}`);
    assert.deepEqual(bootstrapInterval(d, 0.05, 3), [lo, hi]);
    const [lo2, hi2] = bootstrapInterval(d, 0.5, 3);
    assert.ok(lo2 >= lo && hi2 <= hi, 'a wider alpha gives a narrower interval');
  });

  it('uses the sign test on 0–1 scores, the permutation test on fractional ones, over common items only', () => {
    const cand = new Map([
      ['a', 1],
      ['b', 1],
      ['c', 0],
      ['d', 1],
      ['only-candidate', 1],
    ]);
    const cur = new Map([
      ['a', 0],
      ['b', 1],
      ['c', 1],
      ['d', 0],
      ['only-current', 0],
    ]);
    const t = pairedTest(cand, cur, { alpha: 0.05, seed: 1 });
    assert.equal(t.test, 'sign');
    assert.equal(t.n, 4);
    assert.deepEqual([t.improved, t.regressed], [2, 1]);
    close(t.pValue, signTest(2, 1));
    const soft = pairedTest(new Map([['a', 2 / 3]]), new Map([['a', 1 / 3]]), { alpha: 0.05, seed: 1 });
    assert.equal(soft.test, 'permutation');
    close(soft.pValue, 0.5);
  });

  it('decides accept only below alpha, reject when not better on average, inconclusive in between', () => {
    const base = { candidate: 0.6, current: 0.5, best: 0.55, useGate: true, alpha: 0.05 };
    assert.equal(decidePairedGate({ ...base, test: { meanDelta: 0.1, pValue: 0.01 } }), 'accept_new_best');
    assert.equal(decidePairedGate({ ...base, best: 0.7, test: { meanDelta: 0.1, pValue: 0.05 } }), 'accept');
    assert.equal(decidePairedGate({ ...base, test: { meanDelta: 0.1, pValue: 0.2 } }), 'inconclusive');
    assert.equal(decidePairedGate({ ...base, test: { meanDelta: 0, pValue: 1 } }), 'reject');
    assert.equal(decidePairedGate({ ...base, test: { meanDelta: -0.1, pValue: 0.9 } }), 'reject');
    assert.equal(
      decidePairedGate({ ...base, useGate: false, test: { meanDelta: -0.1, pValue: 0.9 } }),
      'force_accept',
    );
  });

  it('holds its level on a noisy target where the candidate changes nothing; the strict gate does not', function () {
    this.timeout(120_000);
    // 500 simulated gates: 30 items, 3 repeats each, every answer right with probability 0.7 for
    // both skills. A false accept is any accept; the strict gate keeps about half of them.
    const rng = new PyRandom(11);
    const sample = (): Map<string, number> => {
      const m = new Map<string, number>();
      for (let i = 0; i < 30; i++) {
        let right = 0;
        for (let r = 0; r < 3; r++) if (rng.random() < 0.7) right++;
        m.set(`t${i}`, right / 3);
      }
      return m;
    };
    const mean = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0) / m.size;
    let paired = 0;
    let strict = 0;
    const trials = 500;
    for (let k = 0; k < trials; k++) {
      const cand = sample();
      const cur = sample();
      const base = { candidate: mean(cand), current: mean(cur), best: mean(cur), useGate: true };
      if (decideGate(base) !== 'reject') strict++;
      const t = pairedTest(cand, cur, { alpha: 0.05, seed: k });
      if (decidePairedGate({ ...base, test: t, alpha: 0.05 }).startsWith('accept')) paired++;
    }
    assert.ok(paired / trials <= 0.07, `paired false-accept rate ${paired / trials}`);
    assert.ok(strict / trials > 0.4, `strict false-accept rate ${strict / trials}`);
  });

  it('says before spending the smallest improvement the gate can tell from noise, and what would do better', () => {
    // 5 of 5 items improved: p = 1/32 ≤ 0.05; 4 of 4: p = 1/16 > 0.05. So 20 items need Δ ≥ 5/20.
    assert.ok(signTest(5, 0) <= 0.05 && signTest(4, 0) > 0.05);
    assert.equal(smallestDetectableDelta(20, 1, 0.05), 0.25);
    assert.equal(smallestDetectableDelta(20, 5, 0.05), 0.05);
    assert.equal(smallestDetectableDelta(20, 1, 0.01), 0.35);
    assert.equal(
      describePower(20, 1, 0.05),
      '20 items × 1 repeat: only Δ ≥ 0.250 can be told from noise at alpha 0.05; for Δ 0.10, 3 repeats or 50 selection items',
    );
    assert.equal(
      describePower(50, 1, 0.05),
      '50 items × 1 repeat: only Δ ≥ 0.100 can be told from noise at alpha 0.05',
    );
  });

  it('says so when the split is too small for the paired gate to ever accept, whatever the repeats', () => {
    // 4 items: even all four improved by every repeat give p = 1/16 > 0.05 (exact sign flips).
    const up = new Map(['a', 'b', 'c', 'd'].map((id) => [id, 1]));
    const down = new Map(['a', 'b', 'c', 'd'].map((id) => [id, 0]));
    assert.equal(pairedTest(up, down, { alpha: 0.05, seed: 1 }).pValue, 1 / 16);
    const soft = new Map(['a', 'b', 'c', 'd'].map((id) => [id, 1 / 3]));
    assert.equal(pairedTest(soft, down, { alpha: 0.05, seed: 1 }).pValue, 1 / 16);
    assert.equal(smallestDetectableDelta(4, 3, 0.05), null);
    assert.equal(smallestDetectableDelta(0, 1, 0.05), null);
    assert.equal(smallestDetectableDelta(5, 1, 0.05), 1);
    assert.equal(
      describePower(4, 3, 0.05),
      '4 items × 3 repeats: no Δ can be told from noise at alpha 0.05 (the paired gate needs at least 5 selection items; repeats do not help)',
    );
    assert.equal(
      powerSummary({ test: 'paired', items: 4, repeats: 3, alpha: 0.05 }),
      'no Δ detectable (4 items × 3 repeats, alpha 0.05; at least 5 items needed)',
    );
    // At alpha 0.025 (two looks of more_repeats) six items are needed.
    assert.equal(smallestDetectableDelta(5, 2, 0.025), null);
  });

  it('with partial-credit scores (gate_metric soft, mixed) bounds how many items must move, not Δ', async () => {
    // 5 of 19 items each up by 0.02: Δ ≈ 0.005, far under 5 / 19, and yet p = 1/32 ≤ 0.05.
    const ids = Array.from({ length: 19 }, (_, i) => `q${i}`);
    const current = new Map(ids.map((id) => [id, 0.5]));
    const candidate = new Map(ids.map((id, i) => [id, i < 5 ? 0.52 : 0.5]));
    const t = pairedTest(candidate, current, { alpha: 0.05, seed: 1 });
    assert.ok(t.pValue <= 0.05 && t.meanDelta < 0.01, `p ${t.pValue}, Δ ${t.meanDelta}`);
    const graded = { test: 'paired', items: 19, repeats: 1, alpha: 0.05, graded: true } as const;
    assert.equal(
      describeGatePower(graded),
      "paired; 19 items × 1 repeat: at least 5 items must move the candidate's way to be told from noise at alpha 0.05 (Δ ≥ 0.263 if each moves a whole point; partial-credit scores can show a smaller Δ)",
    );
    assert.equal(powerSummary(graded), '≥ 5 items must move (19 items × 1 repeat, alpha 0.05)');
    // validate says it for a soft gate, and keeps the Δ bound for the hard one (0–1 scores).
    const gateLine = async (metric: string): Promise<string> =>
      (await cli(['validate', exampleConfig, '--cfg-options', `evaluation.gate_metric=${metric}`])).stdout
        .split('\n')
        .find((l) => l.trim().startsWith('gate ')) ?? '';
    assert.match(await gateLine('soft'), /at least 5 items must move/);
    assert.match(await gateLine('mixed'), /at least 5 items must move/);
    assert.match(await gateLine('hard'), /only Δ ≥ 0\.263 can be told from noise/);
  });
});
