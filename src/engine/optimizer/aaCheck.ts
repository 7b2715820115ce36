/**
 * The A/A check (`skillopt eval --aa N`): one skill scored N times on the same items, every run
 * compared with every other as if it were a candidate against the current skill. Nothing differs
 * but noise, so each "accept" is a false accept: the rate shows how noisy the target and scorer
 * are, for the reference's strict gate and for the paired gate at the configured alpha.
 */
import { decideGate, decidePairedGate, projectScore, type GateMetric } from './gate';
import { pairedTest } from './pairedTest';

export interface AaRun {
  /** Per-item scores of one run (errored items left out). */
  items: ReadonlyMap<string, { hard: number; soft: number }>;
}

export interface AaReport {
  runs: number;
  /** Items scored in every run. */
  items: number;
  metric: GateMetric;
  alpha: number;
  /** Each run's mean on the gate metric, over the items scored in every run. */
  scores: number[];
  /** Ordered pairs of runs compared (N × (N − 1)). */
  comparisons: number;
  /** Comparisons the strict gate (candidate > current) would accept. */
  strict_accepts: number;
  /** Comparisons the paired gate would accept, and call inconclusive. */
  paired_accepts: number;
  paired_inconclusive: number;
  /** Items whose score differs between at least two runs. */
  changed_items: number;
}

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

/** The CLI's lines for an A/A report. */
export function aaText(r: AaReport): string[] {
  const pct = (n: number): string => `${r.comparisons ? Math.round((100 * n) / r.comparisons) : 0}%`;
  const spread = r.scores.length ? Math.max(...r.scores) - Math.min(...r.scores) : 0;
  return [
    `A/A check: the same skill scored ${r.runs} times on ${r.items} items (${r.metric}): ${r.scores.map((s) => s.toFixed(3)).join(', ')} (spread ${spread.toFixed(3)}); ${r.changed_items} item(s) scored differently between runs.`,
    `  strict gate (the reference rule): would accept the skill over itself in ${r.strict_accepts} of ${r.comparisons} comparisons (${pct(r.strict_accepts)}).`,
    `  paired gate (alpha ${r.alpha}): ${r.paired_accepts} accepted (${pct(r.paired_accepts)}), ${r.paired_inconclusive} inconclusive.`,
    ...(r.strict_accepts > 0
      ? [
          '  Every one of those accepts is noise: consider evaluation.gate_test: paired, evaluation.repeats, or a larger selection split.',
        ]
      : []),
  ];
}
