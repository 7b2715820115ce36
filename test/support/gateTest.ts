import type { GateTestRecord } from '../../src/protocol/records';

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
