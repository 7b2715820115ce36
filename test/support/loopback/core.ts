import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted HTTP server on 127.0.0.1 for driving the real provider SDKs in tests and benchmarks.
 * The wire format (OpenAI Chat Completions, Anthropic Messages) is supplied by the caller; see
 * openaiServer.ts and anthropicServer.ts.
 */

export interface RecordedRequest {
  /** 0-based arrival order. */
  index: number;
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
  rawBody: string;
}

export interface Usage {
  /** Every input token, cached ones included (Anthropic's `input_tokens` is sent without them). */
  promptTokens?: number;
  completionTokens?: number;
  /** Input tokens read from the prompt cache: OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`. */
  cachedTokens?: number;
  /** Input tokens written to the prompt cache: Anthropic `cache_creation_input_tokens`. */
  cacheWriteTokens?: number;
}

/** What the server does with one request. `delayMs` waits before acting (on top of the server's latency). */
export type Reply =
  /** A normal completion. `usage: null` leaves the usage object out; absent = estimated from the text. */
  | {
      kind: 'reply';
      text?: string;
      usage?: Usage | null;
      model?: string;
      /** finish_reason / stop_reason; default `stop` / `end_turn`. */
      finishReason?: string;
      /** Anthropic only: the raw content blocks instead of one text block. */
      blocks?: unknown[];
      /** Tool calls the model makes (after `text`, when both are given), in the wire's own shape. */
      toolCalls?: ToolCall[];
      headers?: Record<string, string>;
      delayMs?: number;
    }
  /** Any status with a JSON body (object), a raw body (string), or the wire's error shape built from `message`. */
  | {
      kind: 'status';
      status: number;
      body?: unknown;
      message?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  /** Never answer; the request stays open until the client gives up or the server closes. */
  | { kind: 'hang' }
  /**
   * A 200 whose JSON body is cut in half: `body` sends a complete HTTP message with a short body
   * (the SDK fails to parse it), `connection` promises the full length and then drops the socket.
   */
  | { kind: 'truncated'; cut?: 'body' | 'connection'; delayMs?: number }
  /** Drop the connection without a response. */
  | { kind: 'destroy'; delayMs?: number };

/** One tool call in a scripted reply; `id` defaults to a generated one. */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

export type Handler = (req: RecordedRequest) => Reply | Promise<Reply>;
/** A handler, or a queue of replies served in order (an exhausted queue answers 400). */
export type Script = Handler | Reply[];

export interface LoopbackOptions {
  /** Wait this long before every reply (not before a hang). */
  latencyMs?: number;
  /** Endpoints beyond the completion one (the batch APIs); undefined falls through to the usual 404. */
  routes?: Routes;
}

/** What an extra route answers: a JSON object, or text (JSONL files) when `body` is a string. */
export interface RouteReply {
  status: number;
  body: unknown;
}

/**
 * Runs one request body through the server's script as if it had been POSTed to `path`, and
 * returns what the completion endpoint would have answered (how the batch APIs answer each item).
 */
export type AnswerFn = (body: unknown, path: string) => Promise<{ status: number; body: unknown }>;

export type Routes = (
  req: RecordedRequest,
  answer: AnswerFn,
) => RouteReply | undefined | Promise<RouteReply | undefined>;

export interface LoopbackServer {
  /** What to pass to the SDK as its base URL. */
  url: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  /** Requests currently open. */
  readonly inFlight: number;
  /** Most requests ever open at once. */
  readonly maxInFlight: number;
  /** Responses completely written. */
  readonly answered: number;
  /** Resolves once at least `n` requests have arrived. */
  waitForRequests(n: number): Promise<void>;
  close(): Promise<void>;
}

export interface WireFormat {
  /** Whether a POST to this path is the completion endpoint. */
  isEndpoint(path: string): boolean;
  /** Path prefix appended to the origin to form `url`. */
  basePath: string;
  okBody(reply: Extract<Reply, { kind: 'reply' }>, req: RecordedRequest): Record<string, unknown>;
  errorBody(status: number, message: string): Record<string, unknown>;
  /**
   * What the real API answers 400 to, checked before the script is asked (a tool result that names
   * no call of the previous turn, a call left without its result); undefined = acceptable.
   */
  checkRequest?(req: RecordedRequest): string | undefined;
  /**
   * Server-sent events for a request that asked to stream (`"stream": true`), as the wire's
   * streaming format spells them; absent = the wire never streams.
   */
  streamEvents?(reply: Extract<Reply, { kind: 'reply' }>, req: RecordedRequest): SseEvent[];
}

/** One server-sent event: `event:` line when `event` is set, then `data:` (JSON unless a string). */
export interface SseEvent {
  event?: string;
  data: unknown;
}

function writeSse(
  res: ServerResponse,
  events: readonly SseEvent[],
  headers: Record<string, string> = {},
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  });
  for (const e of events) {
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
  }
  res.end();
}

/** Whether a recorded request asked for a streamed reply. */
export function wantsStream(req: RecordedRequest): boolean {
  return (req.body as { stream?: unknown } | undefined)?.stream === true;
}

/** Rough token count (4 characters per token), used when a reply does not script its usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

let toolCallCounter = 0;

/** A fresh tool-call id with the wire's prefix (`toolu_`, `call_`, ...). */
export function toolCallId(prefix: string, call: ToolCall): string {
  return call.id ?? `${prefix}loopback_${++toolCallCounter}`;
}

export const reply = (text: string, usage?: Usage | null): Reply => ({ kind: 'reply', text, usage });
export const status = (code: number, message?: string, headers?: Record<string, string>): Reply => ({
  kind: 'status',
  status: code,
  message: message ?? `scripted ${code}`,
  headers,
});
export const hang = (): Reply => ({ kind: 'hang' });

export async function startLoopback(
  format: WireFormat,
  script: Script,
  opts: LoopbackOptions = {},
): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let answered = 0;
  let closed = false;
  const queue = Array.isArray(script) ? [...script] : undefined;
  const handler: Handler = Array.isArray(script)
    ? () => queue!.shift() ?? status(400, 'loopback script has no reply left for this request')
    : script;

  const delay = (ms: number): Promise<void> =>
    ms > 0
      ? new Promise((resolve) => {
          const t = setTimeout(() => {
            timers.delete(t);
            resolve();
          }, ms);
          timers.add(t);
        })
      : Promise.resolve();

  const send = (
    res: ServerResponse,
    code: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(code, {
      'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };

  const answer: AnswerFn = async (body, path) => {
    const rec: RecordedRequest = {
      index: -1,
      method: 'POST',
      path,
      query: {},
      headers: {},
      body,
      rawBody: JSON.stringify(body),
    };
    const action = await handler(rec);
    if (action.kind === 'reply') return { status: 200, body: format.okBody(action, rec) };
    if (action.kind === 'status')
      return {
        status: action.status,
        body: action.body ?? format.errorBody(action.status, action.message ?? `scripted ${action.status}`),
      };
    return { status: 500, body: format.errorBody(500, `loopback: a batch item cannot ${action.kind}`) };
  };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    const recorded: RecordedRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
      rawBody,
    };
    requests.push(recorded);
    for (const w of [...waiters]) {
      if (requests.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }

    const routed = await opts.routes?.(recorded, answer);
    if (routed) {
      send(res, routed.status, routed.body);
      return;
    }
    if (recorded.method !== 'POST' || !format.isEndpoint(recorded.path)) {
      send(res, 404, format.errorBody(404, `no route for ${recorded.method} ${recorded.path}`));
      return;
    }
    const refused = format.checkRequest?.(recorded);
    if (refused) {
      send(res, 400, format.errorBody(400, refused));
      return;
    }
    const action = await handler(recorded);
    if (action.kind === 'hang') return;
    await delay((opts.latencyMs ?? 0) + (action.delayMs ?? 0));
    if (closed || res.destroyed || req.socket.destroyed) return;

    switch (action.kind) {
      case 'reply':
        if (format.streamEvents && wantsStream(recorded)) {
          writeSse(res, format.streamEvents(action, recorded), action.headers);
        } else {
          send(res, 200, format.okBody(action, recorded), action.headers);
        }
        return;
      case 'status': {
        const payload =
          action.body ?? format.errorBody(action.status, action.message ?? `scripted ${action.status}`);
        send(res, action.status, payload, action.headers);
        return;
      }
      case 'truncated': {
        const full = JSON.stringify(
          format.okBody({ kind: 'reply', text: 'this reply is cut short' }, recorded),
        );
        const half = full.slice(0, Math.floor(full.length / 2));
        if (action.cut === 'connection') {
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(full),
          });
          res.write(half, () => req.socket.destroy());
        } else {
          send(res, 200, half, { 'content-type': 'application/json' });
        }
        return;
      }
      case 'destroy':
        req.socket.destroy();
        return;
    }
  };

  const server: Server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('finish', () => answered++);
    res.on('close', () => inFlight--);
    serve(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, format.errorBody(500, `loopback handler failed: ${String(err)}`));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 1000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}${format.basePath}`,
    origin,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get answered() {
      return answered;
    },
    waitForRequests(n: number): Promise<void> {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    close(): Promise<void> {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      return new Promise((resolve) => {
        server.close(() => resolve());
        // Hanging and keep-alive connections would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
  };
}

/** Text of every `content` in a message list, whatever the wire's content shape. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return (content as unknown[])
      .map((b) => {
        const text = b && typeof b === 'object' ? (b as { text?: unknown }).text : undefined;
        return typeof text === 'string' ? text : '';
      })
      .join('');
  }
  return '';
}

/** An image as a server received it: decoded bytes, media type and (OpenAI) detail. */
export interface ReceivedImage {
  mediaType: string;
  bytes: Buffer;
  detail?: string;
}
