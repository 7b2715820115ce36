/**
 * The paired gate's p-value and the interval of its delta from one computation, so the two can
 * never disagree: the interval is every shift μ that the same one-sided sign-flip test, run on
 * (deltas − μ) at the same alpha, would not reject from either side. Its lower end is above 0
 * exactly when the test rejects at μ = 0, i.e. when the gate's p ≤ alpha (a two-sided 1 − 2·alpha
 * interval, each end a one-sided 1 − alpha bound).
 *
 * Flipping the signs of a set A of deltas makes the shifted sum at least the observed one exactly
 * when Σ_A (d − μ) ≤ 0, i.e. when A's mean is at most μ (Hartigan's subset means): the p-value is a
 * non-decreasing step function of μ and the confidence set is an interval, found by bisection. Zero
 * deltas (ties) change nothing at μ = 0 but do once shifted: their flips are summed out exactly with
 * binomial weights. On 0–1 scores the deltas are ±1 and the subsets are counted in closed form, so
 * the test at μ = 0 is the exact sign test (McNemar) for any number of items.
 */
import { PyRandom } from '../data/pyRandom';

/** Largest count of non-zero deltas whose 2^n sign flips are enumerated exactly. */
export const EXACT_PERMUTATION_MAX = 16;
export const MONTE_CARLO_DRAWS = 20_000;

/** One set of flipped non-zero deltas: their sum, their count, and its share of all flips drawn. */
interface Flip {
  sum: number;
  size: number;
  weight: number;
}

/** The sign flips of one set of deltas, and the share that always counts (no flip at all). */
export interface FlipDistribution {
  flips: Flip[];
  /** Mass of the identity beyond `flips` (the observed assignment in a Monte Carlo estimate). */
  base: number;
  /** Zero deltas: each flips with probability ½ on top of every entry of `flips`. */
  zeros: number;
  /** Σ|d| of the deltas, for the tolerance that counts rounding-level ties as ties. */
  absSum: number;
  n: number;
  exact: boolean;
}

const logFactorials = (n: number): number[] => {
  const out = [0];
  for (let i = 1; i <= n; i++) out.push(out[i - 1] + Math.log(i));
  return out;
};

/** P(X = j) for X ~ Binomial(n, ½), j = 0..n, in log space so large n neither overflows nor underflows. */
export function halfBinomial(n: number): number[] {
  const lf = logFactorials(n);
  return Array.from({ length: n + 1 }, (_, j) => Math.exp(lf[n] - lf[j] - lf[n - j] - n * Math.LN2));
}

/**
 * Every sign flip of `deltas` (exact), or the seeded Monte Carlo draws above EXACT_PERMUTATION_MAX
 * non-zero deltas (the same draws, in the same order, whatever the shift). `binary`: deltas in
 * {−1, 0, 1}, counted in closed form.
 */
export function flipDistribution(deltas: readonly number[], seed: number, binary: boolean): FlipDistribution {
  const d = deltas.filter((x) => x !== 0);
  const zeros = deltas.length - d.length;
  const absSum = d.reduce((a, b) => a + Math.abs(b), 0);
  const common = { zeros, absSum, n: deltas.length };
  if (binary) {
    const wins = d.filter((x) => x > 0).length;
    const losses = d.length - wins;
    const pw = halfBinomial(wins);
    const pl = halfBinomial(losses);
    const flips: Flip[] = [];
    for (let a = 0; a <= wins; a++)
      for (let b = 0; b <= losses; b++) flips.push({ sum: a - b, size: a + b, weight: pw[a] * pl[b] });
    return { flips, base: 0, exact: true, ...common };
  }
  if (d.length <= EXACT_PERMUTATION_MAX) {
    const total = 2 ** d.length;
    const flips: Flip[] = [];
    for (let mask = 0; mask < total; mask++) {
      let sum = 0;
      let size = 0;
      for (let i = 0; i < d.length; i++)
        if (mask & (1 << i)) {
          sum += d[i];
          size++;
        }
      flips.push({ sum, size, weight: 1 / total });
    }
    return { flips, base: 0, exact: true, ...common };
  }
  const rng = new PyRandom(seed);
  const weight = 1 / (1 + MONTE_CARLO_DRAWS);
  const flips: Flip[] = [];
  for (let k = 0; k < MONTE_CARLO_DRAWS; k++) {
    let sum = 0;
    let size = 0;
    // One random bit per sign, 32 from each draw of the generator.
    let bits = 0;
    for (let i = 0; i < d.length; i++) {
      if (i % 32 === 0) bits = rng.getrandbits(32);
      if (bits & 1) {
        sum += d[i];
        size++;
      }
      bits >>>= 1;
    }
    flips.push({ sum, size, weight });
  }
  return { flips, base: weight, exact: false, ...common };
}

/**
 * One-sided p-value of the sign-flip test on (deltas − μ): `greater` is "the delta exceeds μ", the
 * share of flips whose shifted sum is at least the observed one; `less` the mirror image.
 */
export function shiftedPValue(f: FlipDistribution, mu: number, side: 'greater' | 'less'): number {
  const zeroMass = halfBinomial(f.zeros);
  const upper: number[] = []; // upper[j] = P(J ≥ j)
  let acc = 0;
  for (let j = f.zeros; j >= 0; j--) upper[j] = acc += zeroMass[j];
  const atLeast = (j: number): number => (j <= 0 ? 1 : j > f.zeros ? 0 : Math.min(1, upper[j]));
  // Sums equal up to rounding count as ties, which count for the observed side.
  const eps = 1e-9 * (f.absSum + f.n * Math.abs(mu));
  let p = f.base;
  for (const { sum, size, weight } of f.flips) {
    // Flipping A = (these deltas) ∪ (J zeros) counts when 2·Σ_A (d − μ) ≤ eps (greater), ≥ −eps (less).
    const slack = side === 'greater' ? sum - eps / 2 : sum + eps / 2;
    const sign = side === 'greater' ? 1 : -1;
    // Counted when sign·((size + J)·μ − slack) ≥ 0: a condition on how many zeros J flip.
    let share: number;
    if (mu === 0) share = sign * -slack >= 0 ? 1 : 0;
    else {
      const bound = slack / mu - size; // (size + J)·μ = slack at J = bound
      const needMore = sign * mu > 0; // counted for J ≥ bound, else for J ≤ bound
      share = needMore ? atLeast(Math.ceil(bound - 1e-9)) : 1 - atLeast(Math.floor(bound + 1e-9) + 1);
    }
    p += weight * share;
  }
  return Math.min(1, p);
}

const STEPS = 60;

/** Bisects between a shift the test rejects and one it keeps; returns the kept end, within 2^−60. */
function boundary(rejected: number, kept: number, keeps: (mu: number) => boolean): number {
  for (let k = 0; k < STEPS; k++) {
    const mid = (rejected + kept) / 2;
    if (keeps(mid)) kept = mid;
    else rejected = mid;
  }
  return kept;
}

/**
 * The ends of the interval, each a one-sided bound at `alpha`. Which side of 0 an end falls on is
 * decided by the test at μ = 0 (`pGreater`, `pLess` from shiftedPValue), so the lower end is above 0
 * exactly when pGreater ≤ alpha; bisection only places it within its side. Scores lie in [0, 1], so
 * a delta does too in [−1, 1]: an end the data cannot bound is −1 or +1.
 */
export function invertedInterval(
  f: FlipDistribution,
  alpha: number,
  pGreater: number,
  pLess: number,
): [number, number] {
  // Lower end: the least μ the `greater` test keeps (p > alpha); that p rises with μ.
  const keepsAbove = (mu: number): boolean => shiftedPValue(f, mu, 'greater') > alpha;
  const low =
    pGreater <= alpha ? boundary(0, 1, keepsAbove) : keepsAbove(-1) ? -1 : boundary(-1, 0, keepsAbove);
  // Upper end: the greatest μ the `less` test keeps; that p falls as μ rises.
  const keepsBelow = (mu: number): boolean => shiftedPValue(f, mu, 'less') > alpha;
  const high = pLess <= alpha ? boundary(0, -1, keepsBelow) : keepsBelow(1) ? 1 : boundary(1, 0, keepsBelow);
  return [low, high];
}
