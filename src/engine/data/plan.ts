import { SkillOptError } from '../errors';
import { withShuffledChoices } from './choiceShuffle';
import { PyRandom } from './pyRandom';
import type { TaskItem } from './tasks';

/**
 * Deterministic training batches, drawn exactly as the reference's split loader draws them, so the
 * same seed walks the train split in the same order here and in Python. Epochs are numbered as the
 * trainer numbers them (the first epoch is 1): with seed 42 the first batch of epoch 1 has batch seed
 * 42 + 1·1000 + 0 + 1 = 1043, which is what the reference records in `history.json`.
 */

export interface TrainBatch {
  /** Position of the batch in the epoch (step_in_epoch · accumulation + micro-batch). */
  batchIdx: number;
  /** `seed + epoch·1000 + batchIdx + 1`; recorded as `batch_seed` and used to seed per-batch randomness. */
  seed: number;
  items: TaskItem[];
  /** True when the epoch ran out of items and this batch was refilled from a reshuffle. */
  refilled: boolean;
}

export interface EpochPlanOptions {
  seed: number;
  /** The trainer's epoch number (1-based in the reference). */
  epoch: number;
  batchSize: number;
  /** Micro-batches per step; default 1. */
  accumulation?: number;
  /** Override the step count; default `stepsPerEpoch(train, batchSize, accumulation)`. */
  stepsPerEpoch?: number;
}

/** `ceil(trainSize / (batchSize · accumulation))`: every epoch is one pass over the train split. */
export function stepsPerEpoch(trainSize: number, batchSize: number, accumulation = 1): number {
  positiveInt(batchSize, 'batch_size');
  positiveInt(accumulation, 'accumulation');
  return Math.ceil(trainSize / (batchSize * accumulation));
}

/**
 * One epoch's batches: shuffle the train items with `Random(seed + epoch·1000)` and cut consecutive
 * batches of `batchSize` (the last may be short).
 *
 * Refill: with accumulation > 1 a small split can run out before the last micro-batches of the epoch
 * (5 items, batch 4, accumulation 3 gives 4, 1 and then nothing). The reference does not leave such a
 * batch empty: it copies the epoch's shuffled order, shuffles that copy again with `Random(batch seed)`
 * and takes the first `batchSize`. We do the same, so the trainer always gets `steps · accumulation`
 * non-empty batches and the items match the reference's.
 */
export function planTrainEpoch(trainItems: readonly TaskItem[], opts: EpochPlanOptions): TrainBatch[] {
  const accumulation = opts.accumulation ?? 1;
  const steps = opts.stepsPerEpoch ?? stepsPerEpoch(trainItems.length, opts.batchSize, accumulation);
  positiveInt(opts.batchSize, 'batch_size');
  positiveInt(accumulation, 'accumulation');
  const base = opts.seed + opts.epoch * 1000;
  const order = new PyRandom(base).shuffle([...trainItems]);
  const total = steps * accumulation;
  const batches: TrainBatch[] = [];
  let cursor = 0;
  for (let batchIdx = 0; batchIdx < total; batchIdx++) {
    let items = order.slice(cursor, cursor + opts.batchSize);
    cursor += items.length;
    const seed = base + batchIdx + 1;
    let refilled = false;
    if (items.length === 0 && order.length > 0) {
      items = new PyRandom(seed).shuffle([...order]).slice(0, opts.batchSize);
      refilled = true;
    }
    // LiveMathematicianBench items get their choice order from the batch seed, as in the reference.
    batches.push({ batchIdx, seed, items: items.map((i) => withShuffledChoices(i, seed)), refilled });
  }
  return batches;
}

/** Shuffle all items with `Random(seed)` and take the first `n` (slow-update and meta-skill sampling). */
export function buildTrainBatch<T>(items: readonly T[], n: number, seed: number): T[] {
  return new PyRandom(seed).shuffle([...items]).slice(0, Math.max(0, n));
}

function positiveInt(value: number, key: string): void {
  if (!Number.isInteger(value) || value <= 0) {
    throw new SkillOptError('config', `${key} must be a positive whole number, got ${value}`, {
      key,
      fix: `set ${key} to 1 or more`,
    });
  }
}
