/**
 * A rollout's pending items through the target's batch API (evaluation.batch_api): one batch, the
 * same requests and scoring as the synchronous path, and any item the batch did not answer asked
 * again on its own through the normal client (still failing = `errored`, not a zero).
 */
import type { TaskItem } from '../data/tasks';
import type { TargetBatch } from '../llm/batch/fromConfig';
import { runBatch, type BatchProgress } from '../llm/batch/runner';
import type { Logger } from '../log';
import { evalPaths } from '../store/layout';
import { runItem, scoreOrErrored, targetRequest, type ItemOptions, type TargetCall } from './rolloutItem';
import type { RolloutResult } from '../../protocol/records';

export interface RolloutBatch extends Pick<TargetBatch, 'api' | 'pollMs' | 'accounting'> {
  /** The response cache, as the synchronous client consults and fills it. */
  cached?: TargetBatch['cached'];
  keep?: TargetBatch['keep'];
  logger?: Logger;
  onProgress?: (p: BatchProgress) => void;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Answer `pending` through `batch`, calling `finish` once per item with its result row and the
 * function that records its usage (called where the row is written).
 */
export async function rolloutByBatch(
  pending: readonly TaskItem[],
  system: string,
  opts: ItemOptions,
  batch: RolloutBatch,
  finish: (item: TaskItem, result: RolloutResult, pay?: () => void) => void,
): Promise<void> {
  // Replies the response cache holds answer their items at once, free, as a call would be answered.
  const sent = await Promise.all(
    pending.map(async (item): Promise<TargetCall | undefined> => {
      const call = targetRequest(item, system, opts);
      const hit = await batch.cached?.(call.req);
      if (!hit) return call;
      finish(item, await scoreOrErrored(call, { text: hit.text, cached: true }, opts));
      return undefined;
    }),
  );
  const calls = sent.filter((c): c is TargetCall => c !== undefined);
  if (calls.length === 0) return;
  const settled = await runBatch({
    api: batch.api,
    stage: opts.stage,
    statePath: evalPaths(opts.dir).batch,
    items: calls.map((c) => ({ itemId: c.item.id, req: c.req })),
    pollMs: batch.pollMs,
    signal: opts.signal,
    accounting: batch.accounting,
    ...(batch.logger ? { logger: batch.logger } : {}),
    ...(batch.onProgress ? { onProgress: batch.onProgress } : {}),
    ...(batch.sleep ? { sleep: batch.sleep } : {}),
  });
  let retried = 0;
  await Promise.all(
    calls.map(async (call) => {
      const s = settled.get(call.item.id);
      if (s?.outcome.ok) {
        const reply = batch.keep ? batch.keep(call.req, s.outcome.reply) : s.outcome.reply;
        const result = await scoreOrErrored(call, { text: reply.text, cached: false }, opts);
        finish(call.item, result, s.pay);
        return;
      }
      retried++;
      batch.logger?.log(
        'info',
        'batch',
        `${opts.stage} ${call.item.id}: not answered by the batch (${s?.outcome.ok === false ? s.outcome.why : 'missing'}); asking it alone`,
      );
      // The batch's own answer, when one was billed, is paid where the row asked alone is written.
      finish(call.item, await runItem(call.item, system, opts), s?.pay);
    }),
  );
  if (retried)
    batch.logger?.log(
      'warn',
      'batch',
      `${opts.stage}: ${retried} item(s) the batch did not answer were asked one by one`,
    );
}
