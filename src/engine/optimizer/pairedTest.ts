/**
 * The paired gate's statistics (evaluation.gate_test: paired): is the candidate better than the
 * current skill on the same selection items, beyond the noise of the target and the scorer?
 * Small exact tests written here on purpose: a binomial tail and a sign-flip permutation are a few
 * lines each, not worth a statistics package. Every random draw is seeded, so a resumed run and a
 * re-run decide the same.
 */
import { PyRandom } from '../data/pyRandom';
import { flipDistribution, halfBinomial, invertedInterval, shiftedPValue } from './testInterval';

/** Which test was used: exact sign test (McNemar on 0–1 scores) or a sign-flip permutation test. */
export type PairedTestKind = 'sign' | 'permutation';

export interface PairedTestResult {
  test: PairedTestKind;
  /** Items scored under both skills. */
  n: number;
  /** Items the candidate scored higher / lower on. */
  improved: number;
  regressed: number;
  meanDelta: number;
  /** One-sided p-value of "the candidate is better" (H0: deltas symmetric about 0). */
  pValue: number;
  /** Whether the p-value was enumerated exactly or estimated by seeded Monte Carlo draws. */
  exact: boolean;
  /**
   * The shifts of the deltas the same one-sided test at alpha does not reject, from either side
   * (testInterval.ts): a 1 − 2·alpha interval whose lower end is above 0 exactly when pValue ≤ alpha.
   */
  interval: [number, number];
}

export { EXACT_PERMUTATION_MAX, MONTE_CARLO_DRAWS } from './testInterval';
export const BOOTSTRAP_DRAWS = 2_000;

/** P(X ≥ k) for X ~ Binomial(n, 1/2), from the same log-space masses as the sign-flip test. */
export function binomialUpperTail(k: number, n: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  return Math.min(
    1,
    halfBinomial(n)
      .slice(k)
      .reduce((a, b) => a + b, 0),
  );
}

/** Exact one-sided sign test: `wins` improvements against `losses` regressions, ties dropped (McNemar). */
export function signTest(wins: number, losses: number): number {
  return binomialUpperTail(wins, wins + losses);
}

/**
 * One-sided sign-flip permutation test of "mean delta > 0": the share of sign assignments whose
 * sum is at least the observed one. Exact for up to EXACT_PERMUTATION_MAX non-zero deltas,
 * otherwise (1 + hits) / (1 + draws) over seeded random flips.
 */
export function permutationTest(deltas: readonly number[], seed: number): { p: number; exact: boolean } {
  const f = flipDistribution(deltas, seed, false);
  return { p: shiftedPValue(f, 0, 'greater'), exact: f.exact };
}

/**
 * The Wilson score interval of a share (`successes` of `n` 0–1 scores), two-sided at 1 − alpha:
 * unlike the normal approximation it stays inside [0, 1] and is honest for small splits.
 */
export function wilsonInterval(successes: number, n: number, alpha: number): [number, number] {
  if (n <= 0) return [0, 1];
  const z = normalQuantile(1 - alpha / 2);
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
function normalQuantile(q: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (q < low) {
    const t = Math.sqrt(-2 * Math.log(q));
    return (
      (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) /
      ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1)
    );
  }
  if (q > 1 - low) return -normalQuantile(1 - q);
  const u = q - 0.5;
  const r = u * u;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * u) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/** Two-sided (1 − alpha) percentile bootstrap interval of the mean of `deltas`, seeded. */
export function bootstrapInterval(deltas: readonly number[], alpha: number, seed: number): [number, number] {
  const n = deltas.length;
  if (n === 0) return [0, 0];
  const rng = new PyRandom(seed);
  const means: number[] = [];
  for (let k = 0; k < BOOTSTRAP_DRAWS; k++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += deltas[Math.floor(rng.random() * n)];
    means.push(s / n);
  }
  means.sort((a, b) => a - b);
  const at = (q: number): number =>
    means[Math.min(BOOTSTRAP_DRAWS - 1, Math.max(0, Math.floor(q * BOOTSTRAP_DRAWS)))];
  return [at(alpha / 2), at(1 - alpha / 2)];
}

/**
 * The paired comparison of a candidate with the current skill on per-item scores (both already
 * projected to the gate metric, keyed by item id). Items scored under only one skill are left out.
 * 0–1 scores on every item get the exact sign test; any fractional score (soft metrics, repeats)
 * the sign-flip permutation test (the same test on ±1 deltas, so one computation serves both).
 */
export function pairedTest(
  candidate: ReadonlyMap<string, number>,
  current: ReadonlyMap<string, number>,
  opts: { alpha: number; seed: number },
): PairedTestResult {
  const deltas: number[] = [];
  let binary = true;
  for (const [id, c] of candidate) {
    const b = current.get(id);
    if (b === undefined) continue;
    deltas.push(c - b);
    if ((c !== 0 && c !== 1) || (b !== 0 && b !== 1)) binary = false;
  }
  const improved = deltas.filter((x) => x > 0).length;
  const regressed = deltas.filter((x) => x < 0).length;
  const n = deltas.length;
  const meanDelta = n ? deltas.reduce((a, b) => a + b, 0) / n : 0;
  // One distribution of sign flips gives the p-value and the interval: they cannot disagree.
  const flips = flipDistribution(deltas, opts.seed, binary);
  const pValue = shiftedPValue(flips, 0, 'greater');
  const pLess = shiftedPValue(flips, 0, 'less');
  return {
    test: binary ? 'sign' : 'permutation',
    n,
    improved,
    regressed,
    meanDelta,
    pValue,
    exact: flips.exact,
    interval: invertedInterval(flips, opts.alpha, pValue, pLess),
  };
}

// The power check's arithmetic is words every surface shows: it lives with them.
export { describePower, smallestDetectableDelta } from '../../protocol/gateText';
