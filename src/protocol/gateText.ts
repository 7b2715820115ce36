/**
 * How the paired gate's test, the per-item rule and the test-split check read, in one place: the
 * CLI, report.md, the runs tree, Gate History and the review all show these same words.
 */
import type { GateTestRecord, ItemRegressions, TestCheck } from './records';

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

/** How a test check reads: report.md (Markdown) and the CLI (plain text). */
export function testCheckLines(c: TestCheck, markdown = true): string[] {
  const pct = `${Math.round(c.level * 100)}%`;
  const b = markdown ? '**' : '';
  const q = markdown ? '`' : '';
  const iv = ([lo, hi]: [number, number]): string => `[${lo.toFixed(3)}, ${hi.toFixed(3)}]`;
  const named = (['initial', 'best', 'final'] as const)
    .filter((k) => c.intervals[k])
    .map((k) => `${k} ${iv(c.intervals[k]!)}`);
  const lines = named.length ? [`Test scores, ${pct} intervals (Wilson): ${named.join(', ')}.`] : [];
  const p = c.best_vs_initial;
  if (p) {
    const delta = `best − initial on the same ${p.n} test items: ${p.mean_delta >= 0 ? '+' : ''}${p.mean_delta.toFixed(3)}, ${pct} interval ${iv(p.interval)}`;
    if (c.verdict === 'confirmed') lines.push(`The selection gain shows on test: ${delta}.`);
    else if (c.verdict === 'not_confirmed')
      lines.push(
        `${b}The best skill's selection gain (+${c.selection_gain.toFixed(3)}) does not show on test${b} (${delta}): the selection split may be overfitted. Enlarge it, use ${q}evaluation.gate_test: paired${q} or ${q}evaluation.repeats${q}, and trust the test numbers.`,
      );
    else lines.push(`No selection gain to confirm; ${delta}.`);
  }
  return lines.length && markdown ? [...lines, ''] : lines;
}
