import { join } from 'node:path';
import { SkillOptError } from '../errors';
import { RUN_DIR } from '../store/layout';

/** The seed a ratio split is shuffled with: `split_seed: 0` means train.seed, as in the reference (datasets/base.py). */
export function effectiveSplitSeed(splitSeed: number, trainSeed: number): number {
  return splitSeed === 0 ? trainSeed : splitSeed;
}

/** The reference's default folder for a generated split: `<outRoot>/_generated_splits/<name>_2-1-7_seed42`. */
export function defaultSplitOutputDir(outRoot: string, name: string, ratio = '2:1:7', seed = 42): string {
  return join(outRoot, RUN_DIR.generatedSplits, `${name}_${ratio.replace(/:/g, '-')}_seed${seed}`);
}

/**
 * What is wrong with a `train:val:test` ratio, read as the reference reads it (datasets/base.py
 * `_parse_split_ratio`): split on ":", parts stripped and empty ones dropped, each a Python `int()`
 * (sign, surrounding spaces and digit underscores allowed), all positive. So "2 : 1 : 7" and "02:1:7"
 * are accepted; fractions ("0.6, 0.2, 0.2", "0.6:0.2:0.2") are refused, naming the whole-number ratio
 * they mean.
 */
export function splitRatioProblem(text: string): { message: string; fix: string } | undefined {
  const parts = splitRatioParts(text);
  const meant = fractionRatio(text);
  const fix = meant
    ? `write the ratio as whole-number weights train:val:test: "${meant}" for ${JSON.stringify(text)}`
    : 'write the ratio as three positive whole numbers train:val:test, e.g. "2:1:7"';
  if (parts.length !== 3)
    return { message: `split_ratio must have the form train:val:test, got ${JSON.stringify(text)}`, fix };
  if (!parts.every((p) => INT.test(p)))
    return { message: `split_ratio must contain whole numbers, got ${JSON.stringify(text)}`, fix };
  if (parts.some((p) => toInt(p) <= 0))
    return { message: `split_ratio parts must be positive, got ${JSON.stringify(text)}`, fix };
  return undefined;
}

/** Python's `int()` of a stripped string: an optional sign, digits, single underscores between them. */
const INT = /^[+-]?\d+(?:_\d+)*$/;
const toInt = (p: string): number => Number(p.replace(/_/g, ''));
const splitRatioParts = (text: string): string[] =>
  text
    .split(':')
    .map((p) => p.trim())
    .filter((p) => p !== '');

/** "0.6, 0.2, 0.2" (or with ":" or spaces) → "3:1:1": the whole-number ratio three fractions mean. */
function fractionRatio(text: string): string | undefined {
  const parts = text.split(/[\s,:;/]+/).filter((p) => p !== '');
  if (parts.length !== 3 || !parts.every((p) => /^\d*\.?\d+$/.test(p))) return undefined;
  const places = Math.max(...parts.map((p) => (p.split('.')[1] ?? '').length));
  if (places > 6) return undefined;
  const ints = parts.map((p) => Math.round(Number(p) * 10 ** places));
  if (ints.some((n) => n <= 0)) return undefined;
  const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
  const g = ints.reduce(gcd);
  return ints.map((n) => n / g).join(':');
}

/** Parse `train:val:test` into three positive integers (as the reference does; see splitRatioProblem). */
export function parseSplitRatio(text: string): [number, number, number] {
  const problem = splitRatioProblem(text);
  if (problem) throw new SkillOptError('config', problem.message, { key: 'split_ratio', fix: problem.fix });
  const [a, b, c] = splitRatioParts(text).map(toInt) as [number, number, number];
  return [a, b, c];
}

/**
 * Largest-remainder split sizes, computed with the same float operations as the reference so the
 * remainders (and therefore ties) compare identically. Ties go to the larger weight, then to the
 * earlier split (Python's stable sort with `reverse=True`).
 */
export function computeSplitCounts(
  total: number,
  ratio: readonly [number, number, number],
): [number, number, number] {
  const denom = ratio[0] + ratio[1] + ratio[2];
  const raw = ratio.map((w) => (total * w) / denom);
  const counts = raw.map((v) => Math.trunc(v));
  const remaining = total - counts.reduce((a, b) => a + b, 0);
  const order = [0, 1, 2].sort((x, y) => {
    const fx = raw[x] - counts[x];
    const fy = raw[y] - counts[y];
    if (fx !== fy) return fy - fx;
    if (ratio[x] !== ratio[y]) return ratio[y] - ratio[x];
    return x - y;
  });
  for (const idx of order.slice(0, remaining)) counts[idx]++;
  return [counts[0], counts[1], counts[2]];
}
