/**
 * One evaluation through a provider's batch API: submit the requests (or find the batch an earlier
 * process of the run submitted for them), wait for it with progress, and hand back one outcome per
 * item. An intent (a tag and the requests' hashes) is written to the evaluation folder before the
 * batch is sent and its id right after, so a stopped run polls the same batch and never pays for
 * the same requests twice. A crash between the two is recovered by finding the batch: OpenAI's by
 * the tag in its metadata, Anthropic's by creation time and request count, checked against the
 * tag in its custom ids when its results come; several candidates are refused, never guessed.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { SkillOptError } from '../../errors';
import type { Logger } from '../../log';
import { writeJsonAtomic } from '../../store/atomic';
import { batchStateSchema, readRunJson, type BatchState } from '../../store/runSchemas';
import type { Accounting } from '../accounting';
import { batchProvider } from '../prices';
import { describeError, fixForError, sleep as abortableSleep } from '../retry';
import type { ChatRequest, Stage } from '../types';
import type { BatchApi, BatchOutcome, BatchStatus } from './types';

export interface BatchProgress extends BatchStatus {
  batchId: string;
  provider: string;
  /** True when this process picked up a batch an earlier one submitted. */
  resumed: boolean;
}

export interface BatchJob {
  api: BatchApi;
  stage: Stage;
  /** `provider_batch.json` of the evaluation folder. */
  statePath: string;
  items: ReadonlyArray<{ itemId: string; req: ChatRequest }>;
  /** Wait between status checks. */
  pollMs: number;
  signal: AbortSignal;
  accounting?: Accounting;
  logger?: Logger;
  onProgress?: (p: BatchProgress) => void;
  /** Injectable so tests need not wait. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface SettledItem {
  outcome: BatchOutcome;
  /**
   * Records the item's usage at the batch price (of a billed answer that could not be used too).
   * Call it once, right where the item's result row is written (no await between), so the ledger
   * and results.jsonl agree across any stop.
   */
  pay: () => void;
}

/** Submit or resume the batch for `job.items` and wait for it; one settled outcome per item id. */
export async function runBatch(job: BatchJob): Promise<Map<string, SettledItem>> {
  return runOnce(job, true);
}

async function runOnce(job: BatchJob, mayResend: boolean): Promise<Map<string, SettledItem>> {
  const { api } = job;
  const hashes = new Map(
    api
      .bodies(job.items.map((i) => ({ customId: i.itemId, req: i.req })))
      .map((body, n) => [job.items[n].itemId, sha256(body)] as const),
  );
  let state = await reusable(job, hashes);
  const resumed = state !== undefined;
  if (state) {
    job.logger?.log(
      'info',
      'batch',
      `${job.stage}: collecting ${api.provider} batch ${state.batch_id} submitted earlier`,
    );
  } else {
    state = await submit(job, hashes);
  }
  const batchId = state.batch_id;
  const wait = job.sleep ?? abortableSleep;
  for (;;) {
    const status = await manage(job, batchId, () => api.status(batchId, job.signal));
    job.onProgress?.({ ...status, batchId, provider: api.provider, resumed });
    if (status.state === 'failed') {
      // Nothing of a refused batch is billed; the next run submits afresh.
      rmSync(job.statePath, { force: true });
      throw new SkillOptError(
        'llm',
        `the ${api.provider} batch ${batchId} for the ${job.stage} evaluation was refused: ${status.detail}`,
        {
          key: 'evaluation.batch_api',
          fix: 'run again to submit a new batch, or set evaluation.batch_api: off to send the calls one by one',
        },
      );
    }
    if (status.state === 'ended') break;
    try {
      await wait(job.pollMs, job.signal);
    } catch {
      throw leftRunning(job, batchId);
    }
  }
  const outcomes = await manage(job, batchId, () => api.results(batchId, job.signal));
  if (resumed && mayResend && outcomes.size && !Object.keys(state.items).some((id) => outcomes.has(id))) {
    // A batch adopted after a crash answered other requests: it was not this one, which never
    // reached the provider. Send it now, once.
    job.logger?.log(
      'warn',
      'batch',
      `${job.stage}: the ${api.provider} batch ${batchId} found after a crash answered other requests; sending this evaluation's own batch`,
    );
    rmSync(job.statePath, { force: true });
    return runOnce(job, false);
  }
  const byItem = new Map<string, SettledItem>();
  const key = {
    stage: job.stage,
    role: 'target' as const,
    provider: batchProvider(api.provider),
    model: api.model,
  };
  for (const [customId, itemId] of Object.entries(state.items)) {
    if (!hashes.has(itemId)) continue;
    const outcome = outcomes.get(customId) ?? { ok: false, why: 'the batch returned no result for it' };
    byItem.set(itemId, {
      outcome,
      pay: () => {
        if (!outcome.ok) {
          // An answer that could not be used (an empty reply) was billed all the same.
          if (outcome.spent)
            job.accounting?.recordFailure(key, { seconds: 0, attempts: 1, ...outcome.spent });
          return;
        }
        const { usage } = outcome.reply;
        // The cache reads and writes a batch reply reports are priced at the cache rates, as a call's are.
        job.accounting?.recordCall(key, {
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          cachedTokens: usage.cachedTokens,
          cacheWriteTokens: usage.cacheWriteTokens,
          seconds: 0,
          attempts: 1,
        });
      },
    });
  }
  return byItem;
}

/** The earlier batch, when it was sent for exactly these requests (every pending item, same bodies). */
/** A state whose batch was sent and its id written. */
type Submitted = BatchState & { batch_id: string };

async function reusable(job: BatchJob, hashes: Map<string, string>): Promise<Submitted | undefined> {
  if (!existsSync(job.statePath)) return undefined;
  const state = readRunJson(job.statePath, batchStateSchema);
  if (!state) return undefined;
  const same =
    state.provider === job.api.provider &&
    state.model === job.api.model &&
    [...hashes].every(([id, h]) => state.item_sha256[id] === h);
  if (!same) {
    job.logger?.log(
      'warn',
      'batch',
      `${job.stage}: the ${state.provider} batch ${state.batch_id} recorded here was sent for other requests; cancelling it and sending a new one`,
    );
    // Its answers are of no use now: stop paying for the rest (an ended batch refuses, which is fine).
    if (state.provider === job.api.provider && state.batch_id)
      await job.api.cancel(state.batch_id).catch(() => undefined);
    return undefined;
  }
  if (state.batch_id) return { ...state, batch_id: state.batch_id };
  // The process that sent it died before writing its id: find it rather than pay again.
  const tag = state.submission;
  const found = tag
    ? await manage(job, undefined, () =>
        job.api.find(
          { tag, submittedAt: state.submitted_at, count: Object.keys(state.items).length },
          job.signal,
        ),
      )
    : [];
  if (found.length > 1) throw ambiguous(job, found, tag!);
  if (!found.length) {
    job.logger?.log(
      'warn',
      'batch',
      `${job.stage}: a batch sent earlier left no id and cannot be found; sending a new one`,
    );
    return undefined;
  }
  const adopted: Submitted = { ...state, batch_id: found[0] };
  writeJsonAtomic(job.statePath, adopted);
  return adopted;
}

/** Several batches could be the lost one: guessing could score another run's answers, so ask. */
function ambiguous(job: BatchJob, ids: string[], tag: string): SkillOptError {
  return new SkillOptError(
    'llm',
    `${job.stage}: the ${job.api.provider} batch sent for these requests by a process that stopped before writing its id could be any of ${ids.length} batches (${ids.join(', ')})`,
    {
      key: 'evaluation.batch_api',
      file: job.statePath,
      fix: `write the right one's id as "batch_id" in ${job.statePath} (its results' custom ids end in -${tagFragment(tag)}), or delete that file to send a new batch and pay for these requests again`,
    },
  );
}

/** A short piece of the submission tag, in every custom_id, so a batch's results show whose they are. */
function tagFragment(tag: string): string {
  return tag.replace(/[^A-Za-z0-9]/g, '').slice(0, 12);
}

async function submit(job: BatchJob, hashes: Map<string, string>): Promise<Submitted> {
  const { api } = job;
  // Written before sending, with the tag that goes with the batch: a crash before its id is
  // written leaves enough to find the batch instead of paying for it again.
  const submission = randomUUID();
  // custom_id must match [A-Za-z0-9_-]{1,64}; task ids need not, so the state maps them back. The
  // tag's fragment lets results prove a batch found after a crash is this one.
  const requests = job.items.map((item, n) => ({
    customId: `item-${n}-${tagFragment(submission)}`,
    req: item.req,
  }));
  const pending: BatchState = {
    provider: api.provider,
    model: api.model,
    stage: job.stage,
    submission,
    submitted_at: new Date().toISOString(),
    items: Object.fromEntries(requests.map((r, n) => [r.customId, job.items[n].itemId])),
    item_sha256: Object.fromEntries(hashes),
  };
  writeJsonAtomic(job.statePath, pending);
  const sent = await manage(job, undefined, () => api.submit(requests, pending.submission!, job.signal));
  const state: Submitted = {
    ...pending,
    batch_id: sent.batchId,
    ...(sent.inputFileId ? { input_file_id: sent.inputFileId } : {}),
  };
  writeJsonAtomic(job.statePath, state);
  job.logger?.log(
    'info',
    'batch',
    `${job.stage}: ${api.provider} batch ${sent.batchId} submitted (${requests.length} requests)`,
  );
  return state;
}

/** A batch-API call; its failures become one clear error, and a stop while waiting leaves the batch. */
async function manage<T>(job: BatchJob, batchId: string | undefined, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (job.signal.aborted) throw batchId ? leftRunning(job, batchId) : stopped(job);
    if (err instanceof SkillOptError) throw err;
    throw new SkillOptError(
      'llm',
      `${job.api.provider} batch API (${job.stage} evaluation${batchId ? `, batch ${batchId}` : ''}): ${describeError(err)}`,
      {
        key: 'evaluation.batch_api',
        fix: `${fixForError(err, {})}; or set evaluation.batch_api: off to send the calls one by one`,
      },
    );
  }
}

function leftRunning(job: BatchJob, batchId: string): SkillOptError {
  const what = `${job.api.provider} batch ${batchId} (${job.stage} evaluation)`;
  return new SkillOptError('cancelled', `Stopped waiting for ${what}`, {
    fix: `the ${what} is left running at the provider; resuming this folder collects it without paying twice`,
  });
}

function stopped(job: BatchJob): SkillOptError {
  return new SkillOptError('cancelled', `Submitting the ${job.stage} batch was cancelled`);
}

function sha256(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}
