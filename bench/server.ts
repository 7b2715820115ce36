/**
 * The latency server: OpenAI Chat Completions on 127.0.0.1 that plays both models with the
 * scripted replies of test/support/loopback/scriptedModels.ts, adding what a benchmark needs:
 * a fixed latency plus deterministic jitter (bench/latency.ts), a concurrency cap per role that
 * queues (a provider's capacity: a request waits for a slot, then takes its full service time),
 * a request log, and its own CPU use. Run alone with `npm run bench:server -- --port P
 * --latency-ms L --concurrency C` to measure any OpenAI-compatible client against it; the bench
 * runner starts it as a child process so its CPU never counts as the engine's.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSplitDir } from '../src/engine/data/splits';
import { loadTasks, type TaskItem } from '../src/engine/data/tasks';
import { Semaphore } from '../src/engine/llm/limiter';
import type { ChatMessage } from '../src/engine/llm/types';
import { contentText, estimateTokens, type RecordedRequest } from '../test/support/loopback/core';
import { OpenAiPrefixCache } from '../test/support/loopback/promptCache';
import { scriptedModels, scriptedTargetModel, stageOf } from '../test/support/loopback/scriptedModels';
import { parseServerArgs, SERVER_USAGE, UsageError } from './args';
import { withBusyNote } from './busy';
import { fnv1a, latencyFor, requestKey, type LatencyProfile } from './latency';

export type Role = 'optimizer' | 'target';

export interface BenchServerOptions extends LatencyProfile {
  /** 0 picks a free port. */
  port: number;
  concurrency: Record<Role, number>;
  tasks: readonly TaskItem[];
  busy: boolean;
  /** Pad every target reply to about this many characters (long trajectories); 0 = as scripted. */
  targetReplyChars?: number;
}

/** Settings that `POST /bench/config` can change while the server runs. */
export interface LiveSettings {
  targetReplyChars: number;
}

/** One request as the server saw it; times are epoch milliseconds with sub-ms precision. */
export interface ServedRequest {
  role: Role;
  /** Optimizer stage read from the prompt, or `target`. */
  stage: string;
  arrivedAt: number;
  /** When a role slot was free and the service time started. */
  startedAt: number;
  endedAt: number;
  serviceMs: number;
  /** false when the client went away before the reply was written. */
  answered: boolean;
  /** FNV-1a of the request's message texts: equal requests, equal hash (to spot paying twice). */
  hash: number;
  promptChars: number;
}

export interface ServerStats {
  requests: number;
  answered: number;
  byRole: Record<Role, { requests: number; maxInFlight: number; maxQueued: number; serviceMs: number }>;
  /** CPU of the server process since it started, in ms. */
  cpuMs: number;
}

export interface BenchServer {
  url: string;
  port: number;
  log: ServedRequest[];
  stats(): ServerStats;
  reset(): void;
  close(): Promise<void>;
}

const now = (): number => performance.timeOrigin + performance.now();

const FILLER = 'Working through the task one step at a time before giving the answer. ';

/** A long reply (a model that thinks aloud), with the scripted answer kept at the end. */
export function padReply(text: string, chars: number): string {
  const need = Math.max(0, chars - text.length - 1);
  return FILLER.repeat(Math.ceil(need / FILLER.length)).slice(0, need) + '\n' + text;
}

/** A Chat Completions reply body with token usage estimated from the texts. */
export function completionBody(
  model: string,
  text: string,
  prompt: string,
  n: number,
  cachedTokens: number,
): Record<string, unknown> {
  const promptTokens = estimateTokens(prompt);
  const completionTokens = estimateTokens(text);
  return {
    id: `chatcmpl-bench-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: cachedTokens },
    },
  };
}

export async function startBenchServer(opts: BenchServerOptions): Promise<BenchServer> {
  const handler = scriptedModels(opts.tasks);
  // OpenAI's prompt cache, played deterministically: shared prefixes under one prompt_cache_key.
  let promptCache = new OpenAiPrefixCache();
  const slots: Record<Role, Semaphore> = {
    optimizer: new Semaphore(opts.concurrency.optimizer),
    target: new Semaphore(opts.concurrency.target),
  };
  const cpu0 = process.cpuUsage();
  let log: ServedRequest[] = [];
  const fresh = (): ServerStats['byRole'] => ({
    optimizer: { requests: 0, maxInFlight: 0, maxQueued: 0, serviceMs: 0 },
    target: { requests: 0, maxInFlight: 0, maxQueued: 0, serviceMs: 0 },
  });
  let byRole = fresh();
  let counter = 0;
  const live: LiveSettings = { targetReplyChars: opts.targetReplyChars ?? 0 };
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number): Promise<void> =>
    new Promise((done) => {
      const t = setTimeout(() => {
        timers.delete(t);
        done();
      }, ms);
      timers.add(t);
    });

  const send = (res: ServerResponse, code: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const stats = (): ServerStats => {
    const c = process.cpuUsage(cpu0);
    return {
      requests: log.length,
      answered: log.filter((r) => r.answered).length,
      byRole: JSON.parse(JSON.stringify(byRole)) as ServerStats['byRole'],
      cpuMs: (c.user + c.system) / 1000,
    };
  };

  const complete = async (req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> => {
    const arrivedAt = now();
    let body: { model?: string; messages?: Array<{ role: string; content: unknown }> };
    try {
      body = JSON.parse(rawBody) as typeof body;
    } catch {
      send(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
      return;
    }
    const messages: ChatMessage[] = (body.messages ?? []).map((m) => ({
      role: m.role as ChatMessage['role'],
      content: contentText(m.content),
    }));
    const role: Role = body.model === scriptedTargetModel ? 'target' : 'optimizer';
    const key = requestKey(messages.map((m) => m.content));
    const recorded: RecordedRequest = {
      index: counter,
      method: req.method ?? 'POST',
      path: req.url ?? '',
      query: {},
      headers: {},
      body,
      rawBody,
    };
    const n = ++counter;
    const entry: ServedRequest = {
      role,
      stage: role === 'target' ? 'target' : stageOf(messages),
      arrivedAt,
      startedAt: arrivedAt,
      endedAt: arrivedAt,
      serviceMs: latencyFor(key, opts),
      answered: false,
      hash: fnv1a(key),
      promptChars: key.length,
    };
    log.push(entry);
    const r = byRole[role];
    r.requests++;
    const slot = slots[role];
    if (slot.active >= slot.limit || slot.waiting > 0) r.maxQueued = Math.max(r.maxQueued, slot.waiting + 1);
    const release = await slots[role].acquire();
    try {
      entry.startedAt = now();
      r.maxInFlight = Math.max(r.maxInFlight, slots[role].active);
      const reply = await handler(recorded);
      if (reply.kind !== 'reply') throw new Error(`scripted models answered ${reply.kind}`);
      let text = reply.text ?? '';
      if (opts.busy && entry.stage === 'analyst') {
        const user = messages.find((m) => m.role === 'user')?.content ?? '';
        text = withBusyNote(text, key, user);
      }
      if (role === 'target' && live.targetReplyChars > text.length)
        text = padReply(text, live.targetReplyChars);
      // The service time counts from the slot, as with a provider that queues at capacity.
      const left = entry.serviceMs - (now() - entry.startedAt);
      if (left > 0) await sleep(left);
      r.serviceMs += entry.serviceMs;
      if (res.destroyed || req.socket.destroyed) return;
      const prompt = messages.map((m) => m.content).join('\n');
      const cached = promptCache.read((body as { prompt_cache_key?: unknown }).prompt_cache_key, prompt);
      send(res, 200, completionBody(body.model ?? 'scripted', text, prompt, n, cached));
      entry.answered = true;
    } finally {
      entry.endedAt = now();
      release();
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0];
      const route = `${req.method ?? 'GET'} ${path}`;
      const done = (p: Promise<void> | void): void => {
        Promise.resolve(p).catch((err: unknown) => {
          if (!res.headersSent) send(res, 500, { error: { message: String(err), type: 'bench_error' } });
          else res.destroy();
        });
      };
      if (req.method === 'POST' && path.endsWith('/chat/completions'))
        return done(complete(req, res, rawBody));
      if (route === 'GET /bench/stats') return done(send(res, 200, stats()));
      if (route === 'GET /bench/log') return done(send(res, 200, log));
      if (route === 'POST /bench/config') {
        const patch = JSON.parse(rawBody || '{}') as Partial<LiveSettings>;
        if (typeof patch.targetReplyChars === 'number')
          live.targetReplyChars = Math.max(0, patch.targetReplyChars);
        return done(send(res, 200, live));
      }
      if (route === 'POST /bench/reset') {
        log = [];
        byRole = fresh();
        promptCache = new OpenAiPrefixCache();
        return done(send(res, 200, { ok: true }));
      }
      done(send(res, 404, { error: { message: `no route for ${route}`, type: 'not_found' } }));
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    get log() {
      return log;
    },
    stats,
    reset: () => {
      log = [];
      byRole = fresh();
      promptCache = new OpenAiPrefixCache();
    },
    close: () =>
      new Promise((done) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

export const benchFixtureDir = join(__dirname, 'fixtures');

/** Tasks from a split folder (train/ val/ test/) or one task file. */
export function loadBenchTasks(path = join(benchFixtureDir, 'tasks')): TaskItem[] {
  const full = resolve(path);
  if (!existsSync(full)) throw new UsageError(`--tasks: ${full} does not exist`);
  if (statSync(full).isDirectory()) {
    const s = loadSplitDir({ splitDir: full });
    return [...s.train, ...s.val, ...s.test.unsealForEvaluation()];
  }
  return loadTasks(full);
}

async function main(): Promise<void> {
  const args = parseServerArgs(process.argv.slice(2));
  const tasks = loadBenchTasks(args.tasks);
  const server = await startBenchServer({
    port: args.port,
    latencyMs: args.latencyMs,
    jitterMs: args.jitterMs,
    seed: args.seed,
    concurrency: { optimizer: args.optimizerConcurrency, target: args.targetConcurrency },
    tasks,
    busy: args.busy,
  });
  if (args.json) {
    console.log(JSON.stringify({ event: 'listening', url: server.url, port: server.port, pid: process.pid }));
  } else {
    console.log(`bench server on ${server.url} (pid ${process.pid})`);
    console.log(
      `  latency ${args.latencyMs} ms + jitter up to ${args.jitterMs} ms; concurrency optimizer ${args.optimizerConcurrency}, target ${args.targetConcurrency}; ${tasks.length} tasks`,
    );
    console.log(
      `  models: scripted-optimizer, scripted-target (any API key); stats: GET ${server.url.replace(/\/v1$/, '')}/bench/stats`,
    );
  }
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // The bench runner closes stdin to stop a child server it started.
  if (args.json) process.stdin.on('end', stop).resume();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    if (err instanceof UsageError)
      console.error(err.message === SERVER_USAGE ? SERVER_USAGE : `${err.message}\n\nusage: ${SERVER_USAGE}`);
    else console.error(err);
    process.exit(2);
  });
}
