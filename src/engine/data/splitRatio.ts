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

/** Parse `train:val:test` into three positive integers. */
export function parseSplitRatio(text: string): [number, number, number] {
  const parts = text
    .split(':')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const fix = 'write the ratio as three positive whole numbers, e.g. "2:1:7"';
  if (parts.length !== 3) {
    throw new SkillOptError('config', `split_ratio must have the form train:val:test, got "${text}"`, {
      key: 'split_ratio',
      fix,
    });
  }
  if (!parts.every((p) => /^[+-]?\d+$/.test(p))) {
    throw new SkillOptError('config', `split_ratio must contain whole numbers, got "${text}"`, {
      key: 'split_ratio',
      fix,
    });
  }
  const [a, b, c] = parts.map(Number) as [number, number, number];
  if (Math.min(a, b, c) <= 0) {
    throw new SkillOptError('config', `split_ratio parts must be positive, got "${text}"`, {
      key: 'split_ratio',
      fix,
    });
  }
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
