import { relative } from 'node:path';
import { batchTargetOnly as targetWithBatchApi, cancelPreparedBatches } from '../../engine/cancelBatches';
import type { CancelledBatch } from '../../engine/llm/batch/cancel';
import type { PreparedRun } from '../../engine/run';
import { ExitCode, UsageError } from '../exit';

/**
 * `skillopt eval|train … --cancel-batch`: cancel the provider batch(es) the evaluation or run in
 * `--out` left running, print what became of each, and run nothing. `collect` is the command that
 * collects what a cancelled batch answered before the cancel.
 */
export async function cancelBatches(
  prepared: PreparedRun,
  json: boolean,
  collect: string,
  skip?: string,
): Promise<number> {
  const found = await cancelPreparedBatches(prepared, new AbortController().signal, skip);
  if (json) {
    process.stdout.write(JSON.stringify({ out_dir: prepared.outDir, batches: found }) + '\n');
    return ExitCode.Ok;
  }
  if (!found.length) {
    process.stdout.write(`No provider batch is recorded under ${prepared.outDir}: nothing to cancel.\n`);
    return ExitCode.Ok;
  }
  for (const b of found) process.stdout.write(describe(b, prepared.outDir) + '\n');
  if (found.some((b) => b.outcome === 'cancelled'))
    process.stdout.write(
      'What a cancelled batch answered before the cancel is billed by the provider. To collect those answers ' +
        `(recorded once in the ledger) and ask the rest one by one at list price:\n  ${collect}\n`,
    );
  return ExitCode.Ok;
}

function describe(b: CancelledBatch, outDir: string): string {
  const what = `the ${b.provider} batch ${b.batchId ?? ''} of the ${b.stage} evaluation (${relative(outDir, b.file) || b.file})`;
  const counts = b.status ? `${b.status.done} of ${b.status.total} answered` : '';
  switch (b.outcome) {
    case 'cancelled':
      return `Cancelled ${what}: ${counts} so far, provider status ${b.status?.detail ?? 'unknown'}.`;
    case 'ended':
      return `Nothing to cancel: ${what} has already ended (${b.status?.detail ?? 'ended'}, ${counts}); running the evaluation again collects it.`;
    case 'no_id':
      return `Cannot cancel the ${b.provider} batch of the ${b.stage} evaluation (${b.file}): the process that sent it stopped before its id was written; running the evaluation again finds it, or cancel it in the provider's console.`;
    case 'other_provider':
      return `Not cancelled: ${what} was sent through ${b.provider}, not through this config's target; cancel it with that config or in the provider's console.`;
  }
}

/** --cancel-batch for a target without a batch API: no batch of it can be running, said as such. */
export function batchTargetOnly(prepare: () => PreparedRun): PreparedRun {
  return targetWithBatchApi(
    prepare,
    (problem) =>
      new UsageError(
        `--cancel-batch: ${problem}, so no batch of this target can be running`,
        "drop --cancel-batch; to cancel a batch sent with another target, give that target's config",
      ),
  );
}
