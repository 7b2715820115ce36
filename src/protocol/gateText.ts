/**
 * How the paired gate's test, the per-item rule, the test-split check, the power check, the no-skill
 * baseline and the A/A check read, in one place: the CLI, report.md, the runs tree, Gate History and
 * the review all show these same words.
 */
import type {
  AaRecord,
  GatePower,
  GateTestRecord,
  ItemRegressions,
  NoSkillScores,
  TestCheck,
} from './records';

const signed = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

/** `p 0.031`, `p < 0.001`: a p-value as every surface shows it. */
export function describePValue(p: number): string {
  return `p ${p < 0.001 ? '< 0.001' : p.toFixed(3)}`;
}

/** `p 0.031 (sign test, 19 items × 2): Δ +0.105, 95% interval [−0.011, +0.211]` */
export function describeGateTest(t: GateTestRecord): string {
  const how = `${t.test} test${t.exact ? '' : ', estimated'}, ${t.n} items × ${t.repeats}`;
  const level = Math.round((1 - t.alpha) * 1000) / 10;
  return `${describePValue(t.p_value)} (${how}): Δ ${signed(t.mean_delta)}, ${level}% interval [${signed(t.ci_low)}, ${signed(t.ci_high)}]`;
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

/** How many changed items a one-sided sign-flip test needs at level `alpha`: the least k with 2^−k ≤ alpha. */
const itemsNeeded = (alpha: number): number => Math.ceil(Math.log2(1 / alpha));

/**
 * The smallest mean improvement the paired gate can tell from noise on `items` items sampled
 * `repeats` times, at level `alpha`: even when every change points the candidate's way, a one-sided
 * sign-flip test needs k changed items with 2^−k ≤ alpha, and one item moves the mean by at least
 * 1 / (items × repeats). null when the split has fewer than k items: the test is over items, so no
 * number of repeats lets the gate accept anything.
 */
export function smallestDetectableDelta(items: number, repeats: number, alpha: number): number | null {
  const k = itemsNeeded(alpha);
  return items >= k ? Math.min(1, k / (items * Math.max(1, repeats))) : null;
}

const times = (items: number, repeats: number): string =>
  `${items} items × ${repeats} repeat${repeats === 1 ? '' : 's'}`;

/** `20 items × 1 repeat: only Δ ≥ 0.250 can be told from noise at alpha 0.05; for Δ 0.10, 3 repeats or 50 items` */
export function describePower(
  items: number,
  repeats: number,
  alpha: number,
  target = 0.1,
  graded = false,
): string {
  const d = smallestDetectableDelta(items, repeats, alpha);
  const k = itemsNeeded(alpha);
  if (d === null)
    return `${times(items, repeats)}: no Δ can be told from noise at alpha ${alpha} (the paired gate needs at least ${k} selection items; repeats do not help)`;
  // Partial credit moves an item by any amount: only the count of items that must move is bounded.
  if (graded)
    return `${times(items, repeats)}: at least ${k} items must move the candidate's way to be told from noise at alpha ${alpha} (Δ ≥ ${d.toFixed(3)} if each moves a whole point; partial-credit scores can show a smaller Δ)`;
  const needRepeats = Math.ceil(k / (target * Math.max(1, items)));
  const needItems = Math.ceil(k / (target * Math.max(1, repeats)));
  const hint =
    d <= target ? '' : `; for Δ ${target.toFixed(2)}, ${needRepeats} repeats or ${needItems} selection items`;
  return `${times(items, repeats)}: only Δ ≥ ${d.toFixed(3)} can be told from noise at alpha ${alpha}${hint}`;
}

/** `only Δ ≥ 0.263 detectable (19 items × 1 repeat, alpha 0.05)`: the power check in a tree row. */
export function powerSummary(p: GatePower): string {
  const d = smallestDetectableDelta(p.items, p.repeats, p.alpha);
  if (d === null)
    return `no Δ detectable (${times(p.items, p.repeats)}, alpha ${p.alpha}; at least ${itemsNeeded(p.alpha)} items needed)`;
  if (p.graded)
    return `≥ ${itemsNeeded(p.alpha)} items must move (${times(p.items, p.repeats)}, alpha ${p.alpha})`;
  return `only Δ ≥ ${d.toFixed(3)} detectable (${times(p.items, p.repeats)}, alpha ${p.alpha})`;
}

/** The gate under evaluation.use_gate: false (the reference's --use_gate False), wherever the gate is described. */
export const GATE_OFF_TEXT =
  'off (evaluation.use_gate: false): every candidate is accepted; the selection split only scores it, to keep the best';

/** `gate paired; 19 items × 1 repeat: only Δ ≥ 0.263 can be told from noise at alpha 0.05; …` */
export function describeGatePower(p: GatePower): string {
  return `${p.test}; ${describePower(p.items, p.repeats, p.alpha, 0.1, p.graded === true)}`;
}

/** Said wherever the no-skill row would be when the run did not measure it. */
export const NO_SKILL_OFF =
  'The target with no skill at all was not scored (evaluation.no_skill_baseline: false); set it to true to see whether the skill helps at all.';

/** `selection 0.400, test 0.389` */
export function describeNoSkill(n: NoSkillScores): string {
  return `selection ${n.selection.toFixed(3)}, test ${n.test === null ? '–' : n.test.toFixed(3)}`;
}

/**
 * Does the skill help at all: the best skill against the target alone, on the split that decides
 * (test when there is one, else selection).
 */
export function noSkillVerdict(
  n: NoSkillScores,
  best: { selection?: number | null; test?: number | null },
): string {
  const onTest = n.test !== null && best.test != null;
  const d = onTest ? best.test! - n.test! : best.selection != null ? best.selection - n.selection : 0;
  const where = onTest ? 'test' : 'selection';
  const signedD = `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(3)}`;
  if (d > 0) return `The best skill beats no skill at all by ${signedD} on ${where}.`;
  if (d === 0) return `The best skill scores the same as no skill at all on ${where}: it does not help yet.`;
  return `The best skill scores below no skill at all (${signedD} on ${where}): the skill may hurt; read it before using it.`;
}

/** The lines of an A/A report: the CLI, the evaluation report, the tree's tooltip and Gate History. */
export function aaText(r: AaRecord): string[] {
  const pct = (n: number): string => `${r.comparisons ? Math.round((100 * n) / r.comparisons) : 0}%`;
  const spread = r.scores.length ? Math.max(...r.scores) - Math.min(...r.scores) : 0;
  return [
    `A/A check: the same skill scored ${r.runs} times${r.repeats ? `, ${r.repeats} samples per item each (evaluation.repeats, as the gate samples),` : ''} on ${r.items} items (${r.metric}): ${r.scores.map((s) => s.toFixed(3)).join(', ')} (spread ${spread.toFixed(3)}); ${r.changed_items} item(s) scored differently between runs.`,
    `  strict gate (the reference rule): would accept the skill over itself in ${r.strict_accepts} of ${r.comparisons} comparisons (${pct(r.strict_accepts)}).`,
    `  paired gate (alpha ${r.alpha}): ${r.paired_accepts} accepted (${pct(r.paired_accepts)}), ${r.paired_inconclusive} inconclusive.`,
    ...(r.cache_hits
      ? [
          `  ${r.cache_hits} answer(s) came from the response cache: the noise of the evaluation that first sampled them, not new samples; set cache.enabled: false (or --cfg-options cache.enabled=false) to sample anew.`,
        ]
      : []),
    ...(r.strict_accepts > 0
      ? [
          '  Every one of those accepts is noise: consider evaluation.gate_test: paired, evaluation.repeats, or a larger selection split.',
        ]
      : []),
  ];
}

/** `A/A ×4: strict gate accepts 3 of 12 (25%), paired 0`: one line for a tree row or a header. */
export function aaSummary(r: AaRecord): string {
  const pct = r.comparisons ? Math.round((100 * r.strict_accepts) / r.comparisons) : 0;
  return `A/A ×${r.runs}${r.repeats ? ` (${r.repeats} repeats each)` : ''}: strict gate accepts ${r.strict_accepts} of ${r.comparisons} (${pct}%), paired ${r.paired_accepts}`;
}
