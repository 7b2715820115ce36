/**
 * Cancelling the provider batches a stopped evaluation left running (`skillopt eval --cancel-batch`).
 * A stop leaves a batch running on purpose (resuming collects it without paying twice); this is
 * for a user who no longer wants its answers. The batch's `provider_batch.json` stays: what the
 * batch answered before the cancel is billed by the provider, so the next run of the evaluation
 * collects those answers (recorded once in the ledger) and asks the rest one by one.
 */
import { setMaxListeners } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import type { BatchCancelOutcome } from '../../../protocol/vocabulary';
import { SkillOptError } from '../../errors';
import { EVAL_FILE } from '../../store/layout';
import { readJsonl } from '../../store/jsonl';
import { RESULT_ROWS } from '../../store/runRows';
import { batchStateSchema, readRunJson } from '../../store/runSchemas';
import { describeError } from '../retry';
import type { BatchApi, BatchStatus } from './types';

export interface CancelledBatch {
  /** The `provider_batch.json` that recorded it. */
  file: string;
  provider: string;
  stage: string;
  batchId?: string;
  outcome: BatchCancelOutcome;
  /** The provider's status after the cancel (or when it was found ended). */
  status?: BatchStatus;
}

/**
 * Every `provider_batch.json` under `dir` (an evaluation's output folder or a run folder), except
 * under its top-level folder `skip` (a run's eval-only evaluations, which their own command collects).
 */
export function recordedBatches(dir: string, skip?: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => basename(p) === EVAL_FILE.batch && (!skip || p.split(sep)[0] !== skip))
    .map((p) => join(dir, p))
    .sort();
}

/**
 * The recorded batches not yet collected: running, cancelled or lost. A batch whose evaluation has
 * a result for every item it sent was collected (its file stays, nothing is left at the provider).
 */
export function outstandingBatches(dir: string, skip?: string): string[] {
  return recordedBatches(dir, skip).filter((file) => !collected(file));
}

/**
 * What a stop says of the batches it leaves out: every one (provider, id, evaluation), that a
 * resume collects them, and the command that cancels them (`cancel`) for a user who would rather not.
 */
export function leftRunningText(dir: string, cancel: string, skip?: string): string | undefined {
  const left = outstandingBatches(dir, skip).flatMap((file) => {
    try {
      const s = readRunJson(file, batchStateSchema);
      return s
        ? [`${s.provider} batch ${s.batch_id ?? '(id not yet recorded)'} (${s.stage} evaluation)`]
        : [];
    } catch {
      return [`batch recorded in ${file} (unreadable)`];
    }
  });
  if (left.length === 0) return undefined;
  const one = left.length === 1;
  const head = one
    ? `the ${left[0]} is left running at the provider`
    : `${left.length} provider batches are left running at the provider: ${left.join(', ')}`;
  return `${head}. Resuming this folder collects ${one ? 'it' : 'them'} without paying twice; to cancel ${one ? 'it' : 'them'} instead: ${cancel}`;
}

function collected(file: string): boolean {
  try {
    const state = readRunJson(file, batchStateSchema);
    const results = join(dirname(file), EVAL_FILE.results);
    if (!state || !existsSync(results)) return false;
    const answered = new Set(readJsonl(results, RESULT_ROWS).map((r) => r.id));
    return Object.values(state.items).every((id) => answered.has(id));
  } catch {
    // A file that cannot be read cannot be shown collected: it stays outstanding.
    return false;
  }
}

/** Cancel each batch recorded under `dir` (but `skip`) that is still running at `api`'s provider. */
export async function cancelRecordedBatches(
  dir: string,
  api: BatchApi,
  signal: AbortSignal,
  skip?: string,
): Promise<CancelledBatch[]> {
  // Every provider call listens on the signal; a folder may hold many batches.
  setMaxListeners(0, signal);
  const out: CancelledBatch[] = [];
  for (const file of recordedBatches(dir, skip)) {
    const state = readRunJson(file, batchStateSchema);
    if (!state) continue;
    const base = { file, provider: state.provider, stage: state.stage };
    const batchId = state.batch_id;
    if (!batchId) {
      out.push({ ...base, outcome: 'no_id' });
      continue;
    }
    if (state.provider !== api.provider) {
      out.push({ ...base, batchId, outcome: 'other_provider' });
      continue;
    }
    const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (err) {
        throw new SkillOptError(
          'llm',
          `${what} the ${api.provider} batch ${batchId} (${state.stage} evaluation): ${describeError(err)}`,
          { file, fix: 'check the key and the network and run the command again' },
        );
      }
    };
    const before = await call('checking', () => api.status(batchId, signal));
    if (before.state !== 'running') {
      out.push({ ...base, batchId, outcome: 'ended', status: before });
      continue;
    }
    await call('cancelling', () => api.cancel(batchId));
    const after = await call('checking', () => api.status(batchId, signal));
    out.push({ ...base, batchId, outcome: 'cancelled', status: after });
  }
  return out;
}
