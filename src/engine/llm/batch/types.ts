/**
 * A provider's batch API as the engine uses it: submit many chat requests at once (half price, no
 * rate limits), poll until the batch ends, read one outcome per request. OpenAI's Files + Batches
 * and Anthropic's Message Batches implement it (openai.ts, anthropic.ts beside this file).
 */
import type { BackendReply, ChatRequest, Usage } from '../types';
import { spentBy } from '../types';
import { messageOf } from '../../errors';

export interface BatchRequest {
  /** Unique within the batch; `[A-Za-z0-9_-]{1,64}` (Anthropic's rule, which OpenAI's allows too). */
  customId: string;
  req: ChatRequest;
}

/**
 * One request's outcome: the reply, or why the batch did not answer it (it is then asked again
 * alone), with what the provider billed for an answer that could not be used (an empty reply).
 */
export type BatchOutcome = { ok: true; reply: BackendReply } | { ok: false; why: string; spent?: Usage };

export interface BatchStatus {
  /** `ended`: results can be read; `failed`: the provider refused the whole batch. */
  state: 'running' | 'ended' | 'failed';
  /** The provider's own word for it (`validating`, `in_progress`, `finalizing`, …). */
  detail: string;
  total: number;
  /** Requests answered so far, and requests that failed so far. */
  done: number;
  failed: number;
}

/** What the run folder knows of a batch whose id a crash kept from being written. */
export interface LostBatch {
  tag: string;
  /** When the intent was written, just before the send (ISO time). */
  submittedAt: string;
  /** Requests the batch was sent with. */
  count: number;
}

export interface BatchApi {
  /** Provider family, as the model client names it (`openai`, `anthropic`, …). */
  readonly provider: string;
  readonly model: string;
  /** The request bodies exactly as they would be sent (hashed so a restart only reuses a batch of the same requests). */
  bodies(requests: readonly BatchRequest[]): unknown[];
  /** `tag` goes with the batch where the provider keeps metadata (OpenAI), so `find` can recover a batch whose id was lost. */
  submit(
    requests: readonly BatchRequest[],
    tag: string,
    signal: AbortSignal,
  ): Promise<{ batchId: string; inputFileId?: string }>;
  /**
   * Batches that may be the one a process sent and died before writing its id: OpenAI finds it by
   * the tag in its metadata (one at most); Anthropic keeps no metadata, so every batch of the same
   * request count created since shortly before the send is a candidate.
   */
  find(lost: LostBatch, signal: AbortSignal): Promise<string[]>;
  status(batchId: string, signal: AbortSignal): Promise<BatchStatus>;
  results(batchId: string, signal: AbortSignal): Promise<Map<string, BatchOutcome>>;
  cancel(batchId: string): Promise<void>;
}

/** The outcome of a result that could not be read as a reply, with what its error says was billed. */
export function unusable(err: unknown): BatchOutcome {
  const spent = spentBy(err);
  return { ok: false, why: messageOf(err), ...(spent ? { spent } : {}) };
}
