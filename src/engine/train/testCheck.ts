/**
 * The sealed test split, scored once at the end, read with its uncertainty: a Wilson interval for
 * each skill's test score, the paired bootstrap interval of best − initial on the same items, and
 * whether the selection gain that made the best skill shows on test. A gain on selection that the
 * test interval does not confirm is flagged: the selection split may have been overfitted.
 */
import type { TestCheck } from '../../protocol/records';
import { bootstrapInterval, wilsonInterval } from '../optimizer/pairedTest';
import type { TestSummary } from './evaluate';

export type { TestCheck };

export function testCheck(
  tests: { initial?: TestSummary; best?: TestSummary; final?: TestSummary },
  selectionGain: number,
  opts: { alpha: number; seed: number },
): TestCheck | undefined {
  if (!tests.best) return undefined;
  const interval = (t?: TestSummary): [number, number] | undefined => {
    if (!t?.items) return undefined;
    const hard = Object.values(t.items);
    return wilsonInterval(
      hard.reduce((a, b) => a + b, 0),
      hard.length,
      opts.alpha,
    );
  };
  const intervals: TestCheck['intervals'] = {};
  for (const key of ['initial', 'best', 'final'] as const) {
    const i = interval(tests[key]);
    if (i) intervals[key] = i;
  }
  let paired: TestCheck['best_vs_initial'];
  const best = tests.best.items;
  const initial = tests.initial?.items;
  if (best && initial) {
    const deltas = Object.entries(best)
      .filter(([id]) => id in initial)
      .map(([id, h]) => h - initial[id]);
    if (deltas.length)
      paired = {
        n: deltas.length,
        mean_delta: deltas.reduce((a, b) => a + b, 0) / deltas.length,
        interval: bootstrapInterval(deltas, opts.alpha, opts.seed),
      };
  }
  const verdict: TestCheck['verdict'] =
    !(selectionGain > 0) || !paired ? 'no_gain' : paired.interval[0] > 0 ? 'confirmed' : 'not_confirmed';
  return {
    level: 1 - opts.alpha,
    intervals,
    ...(paired ? { best_vs_initial: paired } : {}),
    selection_gain: selectionGain,
    verdict,
  };
}
