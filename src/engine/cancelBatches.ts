/**
 * Cancelling the provider batches a stopped run or evaluation left running, as the CLI's
 * `--cancel-batch` and the extension's Cancel Provider Batch both do it: the config's target batch
 * API whatever mode the run used, a target without one refused, the run lock held while cancelling.
 */
import { existsSync } from 'node:fs';
import { SkillOptError } from './errors';
import { cancelRecordedBatches, type CancelledBatch } from './llm/batch/cancel';
import type { PreparedRun } from './run';
import { acquireRunLock } from './store/runLock';

/** `overrides` plus the one that builds the target's batch API (the run may have used it in any mode). */
export function withBatchApi(overrides: readonly string[] = []): string[] {
  return [...overrides, 'evaluation.batch_api=final'];
}

/**
 * `prepare()` (called with `withBatchApi` overrides); a target without a batch API is refused with
 * the error `refuse` makes of the reason, since no batch of it can be running.
 */
export function batchTargetOnly(prepare: () => PreparedRun, refuse: (problem: string) => Error): PreparedRun {
  try {
    return prepare();
  } catch (err) {
    if (SkillOptError.is(err, 'config') && err.place.key === 'evaluation.batch_api')
      throw refuse(err.problem);
    throw err;
  }
}

/**
 * Cancel each batch recorded under the prepared folder (but its top-level folder `skip`) that is
 * still running at the target's provider, holding the run lock: a process resuming the run meanwhile
 * would collect the batch, and a running one is refused with its holder named.
 */
export async function cancelPreparedBatches(
  prepared: PreparedRun,
  signal: AbortSignal,
  skip?: string,
): Promise<CancelledBatch[]> {
  const api = prepared.models.batch?.api;
  // Prepared with withBatchApi, through batchTargetOnly: a target without one was refused there.
  if (!api) throw new SkillOptError('internal', 'cancelling batches of a run prepared without a batch API');
  const release = existsSync(prepared.outDir) ? acquireRunLock(prepared.outDir) : () => undefined;
  try {
    return await cancelRecordedBatches(prepared.outDir, api, signal, skip);
  } finally {
    release();
  }
}
