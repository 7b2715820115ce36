import type { AaRecord, GateTestRecord } from '../../src/protocol/records';

/** A paired gate's test that could not tell the candidate from noise (p 0.3125 = signTest(3, 1)). */
export const inconclusiveGateTest: GateTestRecord = {
  test: 'sign',
  n: 20,
  repeats: 1,
  improved: 3,
  regressed: 1,
  mean_delta: 0.1,
  p_value: 0.3125,
  exact: true,
  alpha: 0.05,
  ci_low: -0.05,
  ci_high: 0.2,
  verdict: 'inconclusive',
};

/**
 * An A/A check of `runs` runs on 19 items where the strict gate accepted `strictAccepts` of the
 * runs × (runs − 1) comparisons of the skill with itself and the paired gate none.
 */
export function aaCheckOf(runs: number, strictAccepts: number): AaRecord {
  return {
    runs,
    items: 19,
    metric: 'hard',
    alpha: 0.05,
    scores: Array.from({ length: runs }, (_, i) => 0.5 + (i % 2) * 0.05),
    comparisons: runs * (runs - 1),
    strict_accepts: strictAccepts,
    paired_accepts: 0,
    paired_inconclusive: 3,
    changed_items: 6,
  };
}
