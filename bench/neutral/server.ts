/**
 * The neutral server of issue 15: OpenAI Chat Completions on 127.0.0.1 playing both models with the
 * scripted replies, every call answered exactly `latencyMs` after it arrived, with no concurrency
 * cap (a provider that never queues) and Nagle off on every socket, so the only time on the wire
 * that is not the fixed latency is the client's own. Each request is logged with its arrival and
 * reply times (epoch ms, sub-ms precision) and what it is: an optimizer stage read from the prompt,
 * or a target call on a train, selection or test item (from the question it carries).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TaskItem } from '../../src/engine/data/tasks';
import type { ChatMessage } from '../../src/engine/llm/types';
import { contentText } from '../../test/support/loopback/core';
import { scriptedModels, scriptedTargetModel, stageOf } from '../../test/support/loopback/scriptedModels';
import { completionBody } from '../server';

export type NeutralSplit = 'train' | 'val' | 'test';

/** One request as the server saw it. */
export interface NeutralRequest {
  /** `analyst`, `merge`, … for the optimizer; `target:train`, `target:val`, `target:test` for the target. */
  kind: string;
  arrivedAt: number;
  repliedAt: number;
  bytesIn: number;
}

export interface NeutralServer {
  url: string;
  /** Requests since the last reset, in arrival order. */
  log(): NeutralRequest[];
  reset(): void;
  close(): Promise<void>;
}

const now = (): number => performance.timeOrigin + performance.now();

export async function startNeutralServer(opts: {
  latencyMs: number;
  tasks: ReadonlyArray<TaskItem & { split: NeutralSplit }>;
}): Promise<NeutralServer> {
  const handler = scriptedModels(opts.tasks);
  let log: NeutralRequest[] = [];
  let n = 0;
  const timers = new Set<NodeJS.Timeout>();
  const splitOf = (user: string): NeutralSplit | undefined =>
    opts.tasks.find((t) => user.includes(t.input))?.split;

  const send = (res: ServerResponse, code: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const complete = async (req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> => {
    const arrivedAt = now();
    const body = JSON.parse(raw) as { model?: string; messages?: Array<{ role: string; content: unknown }> };
    const messages: ChatMessage[] = (body.messages ?? []).map((m) => ({
      role: m.role as ChatMessage['role'],
      content: contentText(m.content),
    }));
    const user = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const kind =
      body.model === scriptedTargetModel ? `target:${splitOf(user) ?? 'other'}` : stageOf(messages);
    const entry: NeutralRequest = { kind, arrivedAt, repliedAt: arrivedAt, bytesIn: Buffer.byteLength(raw) };
    log.push(entry);
    const reply = await handler({
      index: n++,
      method: 'POST',
      path: req.url ?? '',
      query: {},
      headers: {},
      body,
      rawBody: raw,
    });
    if (reply.kind !== 'reply') throw new Error(`scripted models answered ${reply.kind}`);
    const text = reply.text ?? '';
    const left = opts.latencyMs - (now() - arrivedAt);
    if (left > 0)
      await new Promise<void>((done) => {
        const t = setTimeout(() => {
          timers.delete(t);
          done();
        }, left);
        timers.add(t);
      });
    if (res.destroyed) return;
    const prompt = messages.map((m) => m.content).join('\n');
    send(res, 200, completionBody(body.model ?? 'scripted', text, prompt, n, 0));
    entry.repliedAt = now();
  };

  // noDelay: no Nagle on accepted sockets (Node's default too, set here so it never depends on it).
  const server = createServer({ noDelay: true, keepAliveTimeout: 5000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'POST' || !path.endsWith('/chat/completions'))
        return send(res, 404, {
          error: { message: `no route for ${req.method} ${path}`, type: 'not_found' },
        });
      complete(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, { error: { message: String(err), type: 'bench_error' } });
        else res.destroy();
      });
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    log: () => log,
    reset: () => {
      log = [];
    },
    close: () =>
      new Promise((done) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
