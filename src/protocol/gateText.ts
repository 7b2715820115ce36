/**
 * How the paired gate's test and the per-item rule read, in one place: the CLI, report.md, the
 * runs tree, Gate History and the review all show these same words.
 */
import type { GateTestRecord, ItemRegressions } from './records';

const signed = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

/** `p 0.031 (sign test, 19 items × 2): Δ +0.105, 95% interval [−0.011, +0.211]` */
export function describeGateTest(t: GateTestRecord): string {
  const p = t.p_value < 0.001 ? '< 0.001' : t.p_value.toFixed(3);
  const how = `${t.test} test${t.exact ? '' : ', estimated'}, ${t.n} items × ${t.repeats}`;
  const level = Math.round((1 - t.alpha) * 1000) / 10;
  return `p ${p} (${how}): Δ ${signed(t.mean_delta)}, ${level}% interval [${signed(t.ci_low)}, ${signed(t.ci_high)}]`;
}

/** `broke 2 item(s) the current skill passes (at most 0 allowed): q7, q12` */
export function describeItemRegressions(r: ItemRegressions, shown = 5): string {
  if (r.items.length === 0) return `broke no item the current skill passes (at most ${r.max} allowed)`;
  const ids =
    r.items.slice(0, shown).join(', ') + (r.items.length > shown ? `, … ${r.items.length - shown} more` : '');
  return `broke ${r.items.length} item(s) the current skill passes (at most ${r.max} allowed${r.rejected ? ', so rejected' : ''}): ${ids}`;
}
