import type { AnthropicBatchWire } from '../anthropic';
import type { BatchApi, BatchOutcome, BatchRequest, BatchStatus, LostBatch } from './types';
import { unusable } from './types';

/** Status checks and downloads are cheap and idempotent: let the SDK retry a passing fault. */
const MANAGE = { maxRetries: 3 } as const;
/** How far the provider's clock may run behind ours when matching a lost batch by its creation time. */
const CLOCK_SKEW_MS = 10 * 60_000;

/** Anthropic's Message Batches: every request in one create call, results as JSONL when it has ended. */
export class AnthropicBatchApi implements BatchApi {
  readonly provider = 'anthropic';

  constructor(
    private readonly wire: AnthropicBatchWire,
    readonly model: string,
  ) {}

  bodies(requests: readonly BatchRequest[]): unknown[] {
    return requests.map((r) => this.wire.body(r.req));
  }

  async submit(
    requests: readonly BatchRequest[],
    _tag: string,
    signal: AbortSignal,
  ): Promise<{ batchId: string }> {
    const batch = await this.wire.sdk.messages.batches.create(
      { requests: requests.map((r) => ({ custom_id: r.customId, params: this.wire.body(r.req) })) },
      { signal },
    );
    return { batchId: batch.id };
  }

  /**
   * Message Batches carry no metadata, so a lost batch is matched by what the list shows: created
   * since shortly before the send (the list is newest first, so the walk stops at the first older
   * one), with as many requests as were sent, and not cancelled. The runner adopts a single match
   * (and checks its custom ids when its results arrive) and refuses to guess among several.
   */
  async find(lost: LostBatch, signal: AbortSignal): Promise<string[]> {
    const since = Date.parse(lost.submittedAt) - CLOCK_SKEW_MS;
    const out: string[] = [];
    let seen = 0;
    for await (const b of this.wire.sdk.messages.batches.list({ limit: 100 }, { signal, ...MANAGE })) {
      if (Date.parse(b.created_at) < since || ++seen > 1000) break;
      const c = b.request_counts;
      const total = c.processing + c.succeeded + c.errored + c.canceled + c.expired;
      if (total === lost.count && !b.cancel_initiated_at) out.push(b.id);
    }
    return out;
  }

  async status(batchId: string, signal: AbortSignal): Promise<BatchStatus> {
    const b = await this.wire.sdk.messages.batches.retrieve(batchId, {}, { signal, ...MANAGE });
    const c = b.request_counts;
    const total = c.processing + c.succeeded + c.errored + c.canceled + c.expired;
    return {
      state: b.processing_status === 'ended' ? 'ended' : 'running',
      detail: b.processing_status,
      total,
      done: c.succeeded,
      failed: c.errored + c.canceled + c.expired,
    };
  }

  async results(batchId: string, signal: AbortSignal): Promise<Map<string, BatchOutcome>> {
    const out = new Map<string, BatchOutcome>();
    const stream = await this.wire.sdk.messages.batches.results(batchId, {}, { signal, ...MANAGE });
    for await (const line of stream) {
      const r = line.result;
      if (r.type === 'succeeded') {
        try {
          out.set(line.custom_id, { ok: true, reply: this.wire.parse(r.message) });
        } catch (err) {
          out.set(line.custom_id, unusable(err));
        }
      } else if (r.type === 'errored') {
        const e = r.error?.error as { type?: string; message?: string } | undefined;
        out.set(line.custom_id, { ok: false, why: `${e?.type ?? 'error'}: ${e?.message ?? 'no message'}` });
      } else {
        out.set(line.custom_id, {
          ok: false,
          why: `the batch ${r.type === 'expired' ? 'expired' : 'was canceled'} before answering it`,
        });
      }
    }
    return out;
  }

  async cancel(batchId: string): Promise<void> {
    await this.wire.sdk.messages.batches.cancel(batchId, {}, MANAGE);
  }
}
