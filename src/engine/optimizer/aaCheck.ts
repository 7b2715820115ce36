/**
 * The A/A check (`skillopt eval --aa N`): one skill scored N times on the same items, every run
 * compared with every other as if it were a candidate against the current skill. Nothing differs
 * but noise, so each "accept" is a false accept: the rate shows how noisy the target and scorer
 * are, for the reference's strict gate and for the paired gate at the configured alpha.
 */
import { decideGate, decidePairedGate, projectScore, type GateMetric } from './gate';
import { pairedTest } from './pairedTest';
import type { AaRecord } from '../../protocol/records';

export interface AaRun {
  /** Per-item scores of one run (errored items left out). */
  items: ReadonlyMap<string, { hard: number; soft: number }>;
}

export type AaReport = AaRecord;

export function aaReport(
  runs: readonly AaRun[],
  opts: { metric: GateMetric; mixedWeight: number; alpha: number; seed: number },
): AaReport {
  const shared = [...(runs[0]?.items.keys() ?? [])].filter((id) => runs.every((r) => r.items.has(id)));
  const projected = runs.map(
    (r) =>
      new Map(
        shared.map((id) => [
          id,
          projectScore(r.items.get(id)!, { metric: opts.metric, mixedWeight: opts.mixedWeight }),
        ]),
      ),
  );
  const mean = (m: Map<string, number>): number =>
    m.size ? [...m.values()].reduce((a, b) => a + b, 0) / m.size : 0;
  const scores = projected.map(mean);
  let comparisons = 0;
  let strict = 0;
  let paired = 0;
  let inconclusive = 0;
  projected.forEach((current, i) =>
    projected.forEach((candidate, j) => {
      if (i === j) return;
      comparisons++;
      const gate = { candidate: scores[j], current: scores[i], best: scores[i], useGate: true };
      if (decideGate(gate) !== 'reject') strict++;
      const test = pairedTest(candidate, current, { alpha: opts.alpha, seed: opts.seed + comparisons });
      const verdict = decidePairedGate({ ...gate, test, alpha: opts.alpha });
      if (verdict === 'inconclusive') inconclusive++;
      else if (verdict !== 'reject') paired++;
    }),
  );
  const changed = shared.filter((id) => new Set(projected.map((p) => p.get(id))).size > 1).length;
  return {
    runs: runs.length,
    items: shared.length,
    metric: opts.metric,
    alpha: opts.alpha,
    scores,
    comparisons,
    strict_accepts: strict,
    paired_accepts: paired,
    paired_inconclusive: inconclusive,
    changed_items: changed,
  };
}

export { aaText } from '../../protocol/gateText';
