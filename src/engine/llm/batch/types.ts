/**
 * A provider's batch API as the engine uses it: submit many chat requests at once (half price, no
 * rate limits), poll until the batch ends, read one outcome per request. OpenAI's Files + Batches
 * and Anthropic's Message Batches implement it (openai.ts, anthropic.ts beside this file).
 */
import type { BackendReply, ChatRequest } from '../types';

export interface BatchRequest {
  /** Unique within the batch; `[A-Za-z0-9_-]{1,64}` (Anthropic's rule, which OpenAI's allows too). */
  customId: string;
  req: ChatRequest;
}

/** One request's outcome: the reply, or why the batch did not answer it (it is then asked again alone). */
export type BatchOutcome = { ok: true; reply: BackendReply } | { ok: false; why: string };

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

export interface BatchApi {
  /** Provider family, as the model client names it (`openai`, `anthropic`, …). */
  readonly provider: string;
  readonly model: string;
  /** The request bodies exactly as they would be sent (hashed so a restart only reuses a batch of the same requests). */
  bodies(requests: readonly BatchRequest[]): unknown[];
  /** `tag` goes with the batch where the provider keeps metadata, so `find` can recover a batch whose id was lost. */
  submit(
    requests: readonly BatchRequest[],
    tag: string,
    signal: AbortSignal,
  ): Promise<{ batchId: string; inputFileId?: string }>;
  /** The batch sent with `tag`, if the provider can search by it (OpenAI metadata; Anthropic cannot). */
  find?(tag: string, signal: AbortSignal): Promise<string | undefined>;
  status(batchId: string, signal: AbortSignal): Promise<BatchStatus>;
  results(batchId: string, signal: AbortSignal): Promise<Map<string, BatchOutcome>>;
  cancel(batchId: string): Promise<void>;
}
