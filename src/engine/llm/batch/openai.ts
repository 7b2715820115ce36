import { toFile } from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { OpenAiBatchWire } from '../openai';
import type { BatchApi, BatchOutcome, BatchRequest, BatchStatus, LostBatch } from './types';
import { unusable } from './types';

const ENDPOINT = '/v1/chat/completions';
/** Status checks and downloads are cheap and idempotent: let the SDK retry a passing fault. */
const MANAGE = { maxRetries: 3 } as const;

interface OutputLine {
  custom_id?: string;
  response?: { status_code?: number; body?: unknown } | null;
  error?: { code?: string | null; message?: string | null } | null;
}

/** OpenAI's Batch API: the requests as a JSONL file (`purpose: batch`), then one batch over it. */
export class OpenAiBatchApi implements BatchApi {
  constructor(
    private readonly wire: OpenAiBatchWire,
    readonly provider: string,
    readonly model: string,
  ) {}

  bodies(requests: readonly BatchRequest[]): unknown[] {
    return requests.map((r) => this.wire.body(r.req));
  }

  async submit(
    requests: readonly BatchRequest[],
    tag: string,
    signal: AbortSignal,
  ): Promise<{ batchId: string; inputFileId: string }> {
    const lines = requests.map((r) =>
      JSON.stringify({ custom_id: r.customId, method: 'POST', url: ENDPOINT, body: this.wire.body(r.req) }),
    );
    const file = await this.wire.sdk.files.create(
      {
        file: await toFile(Buffer.from(lines.join('\n') + '\n', 'utf8'), 'skillopt-batch.jsonl'),
        purpose: 'batch',
      },
      { signal },
    );
    const batch = await this.wire.sdk.batches.create(
      {
        input_file_id: file.id,
        endpoint: ENDPOINT,
        completion_window: '24h',
        metadata: { source: 'skillopt', skillopt_submission: tag },
      },
      { signal },
    );
    return { batchId: batch.id, inputFileId: file.id };
  }

  async find(lost: LostBatch, signal: AbortSignal): Promise<string[]> {
    let seen = 0;
    // Newest first: the batch sought was created moments before the process that sent it died.
    for await (const b of this.wire.sdk.batches.list({ limit: 100 }, { signal, ...MANAGE })) {
      if (b.metadata?.skillopt_submission === lost.tag) return [b.id];
      if (++seen >= 500) break;
    }
    return [];
  }

  async status(batchId: string, signal: AbortSignal): Promise<BatchStatus> {
    const b = await this.wire.sdk.batches.retrieve(batchId, { signal, ...MANAGE });
    const counts = b.request_counts ?? { total: 0, completed: 0, failed: 0 };
    const ended = b.status === 'completed' || b.status === 'expired' || b.status === 'cancelled';
    const why = b.errors?.data
      ?.map((e) => e.message)
      .filter(Boolean)
      .join('; ');
    return {
      state: b.status === 'failed' ? 'failed' : ended ? 'ended' : 'running',
      detail: b.status === 'failed' && why ? `failed: ${why}` : b.status,
      total: counts.total,
      done: counts.completed,
      failed: counts.failed,
    };
  }

  async results(batchId: string, signal: AbortSignal): Promise<Map<string, BatchOutcome>> {
    const b = await this.wire.sdk.batches.retrieve(batchId, { signal, ...MANAGE });
    const out = new Map<string, BatchOutcome>();
    for (const fileId of [b.output_file_id, b.error_file_id]) {
      if (!fileId) continue;
      const text = await (await this.wire.sdk.files.content(fileId, { signal, ...MANAGE })).text();
      for (const raw of text.split('\n')) {
        if (!raw.trim()) continue;
        const line = JSON.parse(raw) as OutputLine;
        if (line.custom_id) out.set(line.custom_id, this.outcome(line));
      }
    }
    return out;
  }

  async cancel(batchId: string): Promise<void> {
    await this.wire.sdk.batches.cancel(batchId, MANAGE);
  }

  private outcome(line: OutputLine): BatchOutcome {
    const status = line.response?.status_code;
    if (line.error || !line.response || status !== 200) {
      const body = line.response?.body as { error?: { message?: string } } | undefined;
      const why =
        line.error?.message ?? line.error?.code ?? body?.error?.message ?? `HTTP ${status ?? 'no response'}`;
      return { ok: false, why: status ? `${status} ${why}` : why };
    }
    try {
      return { ok: true, reply: this.wire.parse(line.response.body as ChatCompletion) };
    } catch (err) {
      return unusable(err);
    }
  }
}
