import type { AnswerFn, RecordedRequest, RouteReply, Routes } from './core';

/**
 * The two providers' batch APIs over the loopback servers: OpenAI's Files + Batches and
 * Anthropic's Message Batches. Each item is answered by the server's own script (through the
 * completion endpoint's code) when the batch ends, so a batch scores exactly what the synchronous
 * path would. Pass `routes` in the server options:
 * `startOpenAiServer(script, { routes: new OpenAiBatchApi().routes })`.
 */
export interface BatchBehaviour {
  /** Status checks a batch answers "in progress" before it ends (default 2). */
  pollsToEnd?: number;
  /** Items the batch expires instead of answering (by custom_id). */
  expire?: (customId: string) => boolean;
}

interface BatchItem {
  customId: string;
  body: unknown;
}

/** One batch's life: created, polled `pollsToEnd` times, then ended with every item answered. */
interface LoopbackBatch {
  id: string;
  items: BatchItem[];
  polls: number;
  cancelled: boolean;
  /** Items answered when the cancel came (the first ones): a cancelled batch still returns their results. */
  answeredAtCancel?: number;
  createdAt: number;
  /** Set once it has ended: one result per item, in item order. */
  results?: Array<{ customId: string; status: number; body: unknown } | { customId: string; expired: true }>;
}

abstract class BatchApi {
  readonly batches = new Map<string, LoopbackBatch>();
  /** Every item any batch sent, in order (the synchronous endpoint's requests stay in `server.requests`). */
  readonly items: BatchItem[] = [];
  /** Batch ids a client asked to cancel. */
  readonly cancelRequests: string[] = [];
  private seq = 0;
  protected readonly pollsToEnd: number;
  readonly routes: Routes = (req, answer) => this.route(req, answer);

  constructor(protected readonly behaviour: BatchBehaviour = {}) {
    this.pollsToEnd = Math.max(0, behaviour.pollsToEnd ?? 2);
  }

  protected abstract route(
    req: RecordedRequest,
    answer: AnswerFn,
  ): RouteReply | undefined | Promise<RouteReply | undefined>;

  protected nextId(prefix: string): string {
    return `${prefix}${++this.seq}`;
  }

  protected create(prefix: string, items: BatchItem[]): LoopbackBatch {
    const batch: LoopbackBatch = {
      id: this.nextId(prefix),
      items,
      polls: 0,
      cancelled: false,
      createdAt: Date.now(),
    };
    this.items.push(...items);
    this.batches.set(batch.id, batch);
    return batch;
  }

  /** One status check: counts the poll and ends the batch when its time has come. */
  protected async advance(batch: LoopbackBatch, path: string, answer: AnswerFn): Promise<void> {
    if (batch.results) return;
    batch.polls++;
    if (!batch.cancelled && batch.polls <= this.pollsToEnd) return;
    const results: NonNullable<LoopbackBatch['results']> = [];
    for (const [n, item] of batch.items.entries()) {
      if ((batch.cancelled && n >= (batch.answeredAtCancel ?? 0)) || this.behaviour.expire?.(item.customId))
        results.push({ customId: item.customId, expired: true });
      else results.push({ customId: item.customId, ...(await answer(item.body, path)) });
    }
    batch.results = results;
  }

  /** A cancel keeps what the batch had answered by then, as the providers return it. */
  protected cancel(batch: LoopbackBatch): void {
    this.cancelRequests.push(batch.id);
    if (!batch.results && !batch.cancelled) batch.answeredAtCancel = this.progress(batch);
    batch.cancelled = true;
  }

  /** Items finished so far, for the request counts of a batch still in progress. */
  protected progress(batch: LoopbackBatch): number {
    if (batch.results) return batch.items.length;
    return Math.floor((batch.items.length * batch.polls) / (this.pollsToEnd + 1));
  }
}

const notFound = (what: string): RouteReply => ({
  status: 404,
  body: { error: { message: `no such ${what}`, type: 'invalid_request_error', param: null, code: null } },
});

/** OpenAI Files (`POST /v1/files`, `GET /v1/files/{id}/content`) and Batches (create, retrieve, cancel). */
export class OpenAiBatchApi extends BatchApi {
  private readonly extra = new Map<
    string,
    { inputFileId: string; metadata: Record<string, string> | null }
  >();
  readonly files = new Map<
    string,
    { filename: string; purpose: string; content: string; createdAt: number }
  >();

  protected async route(req: RecordedRequest, answer: AnswerFn): Promise<RouteReply | undefined> {
    const { method, path } = req;
    if (method === 'POST' && path === '/v1/files') return this.upload(req);
    const file = /^\/v1\/files\/([^/]+)(\/content)?$/.exec(path);
    if (method === 'GET' && file) {
      const f = this.files.get(file[1]);
      if (!f) return notFound('file');
      return { status: 200, body: file[2] ? f.content : this.fileObject(file[1]) };
    }
    if (method === 'POST' && path === '/v1/batches') return this.createBatch(req);
    if (method === 'GET' && path === '/v1/batches') {
      // Newest first, one page, as the SDK's cursor pagination reads it.
      const data = [...this.batches.values()].reverse().map((b) => this.batchObject(b));
      return { status: 200, body: { object: 'list', data, has_more: false } };
    }
    const one = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (!one) return undefined;
    const batch = this.batches.get(one[1]);
    if (!batch) return notFound('batch');
    if (method === 'POST' && one[2]) {
      this.cancel(batch);
      return { status: 200, body: { ...this.batchObject(batch), status: 'cancelling' } };
    }
    if (method !== 'GET' || one[2]) return undefined;
    await this.advance(batch, '/v1/chat/completions', answer);
    return { status: 200, body: this.batchObject(batch) };
  }

  private async upload(req: RecordedRequest): Promise<RouteReply> {
    const form = await new Response(Buffer.from(req.rawBody, 'utf8'), {
      headers: { 'content-type': req.headers['content-type'] ?? '' },
    }).formData();
    const file = form.get('file');
    const purpose = form.get('purpose');
    if (!(file instanceof Blob) || typeof purpose !== 'string')
      return {
        status: 400,
        body: { error: { message: 'file and purpose are required', type: 'invalid_request_error' } },
      };
    const id = this.nextId('file-loopback-');
    this.files.set(id, {
      filename: 'name' in file && typeof file.name === 'string' ? file.name : 'upload',
      purpose,
      content: await file.text(),
      createdAt: Math.floor(Date.now() / 1000),
    });
    return { status: 200, body: this.fileObject(id) };
  }

  private createBatch(req: RecordedRequest): RouteReply {
    const body = req.body as {
      input_file_id?: string;
      endpoint?: string;
      completion_window?: string;
      metadata?: Record<string, string>;
    };
    const input = body.input_file_id ? this.files.get(body.input_file_id) : undefined;
    if (!input || input.purpose !== 'batch') return notFound('batch input file');
    if (body.endpoint !== '/v1/chat/completions' || body.completion_window !== '24h')
      return {
        status: 400,
        body: { error: { message: 'unsupported endpoint or window', type: 'invalid_request_error' } },
      };
    const items: BatchItem[] = [];
    for (const line of input.content.split('\n')) {
      if (!line.trim()) continue;
      const row = JSON.parse(line) as { custom_id: string; method: string; url: string; body: unknown };
      if (row.method !== 'POST' || row.url !== body.endpoint)
        return {
          status: 400,
          body: { error: { message: `bad line ${row.custom_id}`, type: 'invalid_request_error' } },
        };
      items.push({ customId: row.custom_id, body: row.body });
    }
    const batch = this.create('batch_loopback_', items);
    this.extra.set(batch.id, { inputFileId: body.input_file_id!, metadata: body.metadata ?? null });
    return { status: 200, body: this.batchObject(batch) };
  }

  private fileObject(id: string): Record<string, unknown> {
    const f = this.files.get(id)!;
    return {
      id,
      object: 'file',
      bytes: Buffer.byteLength(f.content),
      created_at: f.createdAt,
      filename: f.filename,
      purpose: f.purpose,
      status: 'processed',
    };
  }

  /** Writes the output and error files the first time an ended batch is described. */
  private batchObject(batch: LoopbackBatch): Record<string, unknown> {
    const total = batch.items.length;
    const base = {
      id: batch.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      input_file_id: this.extra.get(batch.id)?.inputFileId ?? '',
      metadata: this.extra.get(batch.id)?.metadata ?? null,
      completion_window: '24h',
      created_at: Math.floor(batch.createdAt / 1000),
    };
    if (!batch.results) {
      return {
        ...base,
        status: batch.polls <= 1 ? 'validating' : 'in_progress',
        request_counts: { total, completed: this.progress(batch), failed: 0 },
      };
    }
    const outId = `${batch.id}-output`;
    const errId = `${batch.id}-errors`;
    const ok: string[] = [];
    const bad: string[] = [];
    for (const r of batch.results) {
      const id = `batch_req_${batch.id}_${r.customId}`;
      if ('expired' in r) {
        bad.push(
          JSON.stringify({
            id,
            custom_id: r.customId,
            response: null,
            error: {
              code: batch.cancelled ? 'batch_cancelled' : 'batch_expired',
              message: 'This request could not be executed before the batch ended.',
            },
          }),
        );
      } else {
        const line = JSON.stringify({
          id,
          custom_id: r.customId,
          response: { status_code: r.status, request_id: `req_${id}`, body: r.body },
          error: null,
        });
        (r.status === 200 ? ok : bad).push(line);
      }
    }
    const now = Math.floor(Date.now() / 1000);
    if (!this.files.has(outId) && ok.length)
      this.files.set(outId, {
        filename: 'output.jsonl',
        purpose: 'batch_output',
        content: ok.join('\n') + '\n',
        createdAt: now,
      });
    if (!this.files.has(errId) && bad.length)
      this.files.set(errId, {
        filename: 'errors.jsonl',
        purpose: 'batch_output',
        content: bad.join('\n') + '\n',
        createdAt: now,
      });
    return {
      ...base,
      status: batch.cancelled ? 'cancelled' : 'completed',
      request_counts: { total, completed: ok.length, failed: bad.length },
      ...(ok.length ? { output_file_id: outId } : {}),
      ...(bad.length ? { error_file_id: errId } : {}),
    };
  }
}

/** Anthropic Message Batches: create, retrieve, results (JSONL at `results_url`), cancel. */
export class AnthropicBatchApi extends BatchApi {
  protected async route(req: RecordedRequest, answer: AnswerFn): Promise<RouteReply | undefined> {
    const { method, path } = req;
    if (method === 'POST' && path === '/v1/messages/batches') {
      const body = req.body as { requests?: Array<{ custom_id: string; params: unknown }> };
      if (!Array.isArray(body.requests) || body.requests.length === 0)
        return {
          status: 400,
          body: errorBody('invalid_request_error', 'requests: at least one is required'),
        };
      const batch = this.create(
        'msgbatch_loopback_',
        body.requests.map((r) => ({ customId: r.custom_id, body: r.params })),
      );
      return { status: 200, body: this.batchObject(batch, req) };
    }
    if (method === 'GET' && path === '/v1/messages/batches') {
      // Newest first, one page, as the SDK's id-cursor pagination reads it.
      const data = [...this.batches.values()].reverse().map((b) => this.batchObject(b, req));
      const ids = data.map((b) => b.id as string);
      return {
        status: 200,
        body: { data, has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null },
      };
    }
    const one = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
    if (!one) return undefined;
    const batch = this.batches.get(one[1]);
    if (!batch) return { status: 404, body: errorBody('not_found_error', 'no such batch') };
    if (method === 'POST' && one[2] === '/cancel') {
      this.cancel(batch);
      return { status: 200, body: { ...this.batchObject(batch, req), processing_status: 'canceling' } };
    }
    if (method !== 'GET') return undefined;
    if (one[2] === '/results') {
      if (!batch.results)
        return { status: 400, body: errorBody('invalid_request_error', 'batch has not ended') };
      return {
        status: 200,
        body: batch.results.map((r) => JSON.stringify(resultLine(r, batch))).join('\n') + '\n',
      };
    }
    await this.advance(batch, '/v1/messages', answer);
    return { status: 200, body: this.batchObject(batch, req) };
  }

  private batchObject(batch: LoopbackBatch, req: RecordedRequest): Record<string, unknown> {
    const created = new Date(batch.createdAt);
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (batch.results) {
      for (const r of batch.results) counts[resultLine(r, batch).result.type]++;
    } else {
      counts.processing = batch.items.length - this.progress(batch);
      counts.succeeded = this.progress(batch);
    }
    const host = req.headers.host ?? '127.0.0.1';
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.results ? 'ended' : 'in_progress',
      request_counts: counts,
      created_at: created.toISOString(),
      expires_at: new Date(batch.createdAt + 86_400_000).toISOString(),
      ended_at: batch.results ? new Date().toISOString() : null,
      archived_at: null,
      cancel_initiated_at: batch.cancelled ? new Date().toISOString() : null,
      results_url: batch.results ? `http://${host}/v1/messages/batches/${batch.id}/results` : null,
    };
  }
}

function errorBody(type: string, message: string): Record<string, unknown> {
  return { type: 'error', error: { type, message } };
}

type ResultType = 'succeeded' | 'errored' | 'canceled' | 'expired';

function resultLine(
  r: NonNullable<LoopbackBatch['results']>[number],
  batch: LoopbackBatch,
): { custom_id: string; result: { type: ResultType } & Record<string, unknown> } {
  if ('expired' in r)
    return { custom_id: r.customId, result: { type: batch.cancelled ? 'canceled' : 'expired' } };
  if (r.status === 200) return { custom_id: r.customId, result: { type: 'succeeded', message: r.body } };
  return { custom_id: r.customId, result: { type: 'errored', error: r.body } };
}
