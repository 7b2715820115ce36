import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import type { ModelClientOptions } from '../../../src/engine/llm/client';
import { createModelClient } from '../../../src/engine/llm/client';
import { RunLedger } from '../../../src/engine/llm/ledger';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import type { BackendReply, ChatBackend, ChatRequest } from '../../../src/engine/llm/types';
import type { Logger } from '../../../src/engine/log';
import type { LoopbackServer, Reply } from '../../support/loopback/openaiServer';
import { hang, reply, startOpenAiServer, status } from '../../support/loopback/openaiServer';

const KEY = 'fake-test-client-retries-0003';
const REQ: ChatRequest = { role: 'target', stage: 'rollout', messages: [{ role: 'user', content: 'Q?' }] };

interface Harness {
  server: LoopbackServer;
  waits: number[];
  logs: string[];
  accounting: Accounting;
  chat(signal?: AbortSignal, req?: ChatRequest): ReturnType<ReturnType<typeof createModelClient>['chat']>;
}

describe('llm/client retries, timeouts and cancellation', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function harness(script: Reply[], opts: Partial<ModelClientOptions> = {}): Promise<Harness> {
    server = await startOpenAiServer(script);
    const waits: number[] = [];
    const logs: string[] = [];
    const accounting = new Accounting();
    const logger: Logger = { log: (level, _c, message) => logs.push(`${level}: ${message}`) };
    const client = createModelClient({
      role: 'target',
      backend: new OpenAiBackend({ model: 'gpt-4o', apiKey: KEY, baseUrl: server.url }),
      retry: { maxAttempts: 4, random: () => 0.5 },
      timeoutMs: 60_000,
      accounting,
      logger,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
      ...opts,
    });
    const s = server;
    return { server: s, waits, logs, accounting, chat: (signal, req = REQ) => client.chat(req, signal) };
  }

  it('honours retry-after on a 429 (seconds) and retry-after-ms', async () => {
    const h = await harness([
      status(429, 'Rate limit reached', { 'retry-after': '3' }),
      status(429, 'Rate limit reached', { 'retry-after-ms': '1500' }),
      reply('ok'),
    ]);
    const result = await h.chat();
    assert.equal(result.text, 'ok');
    assert.equal(result.attempts, 3);
    assert.deepEqual(h.waits, [3000, 1500]);
    assert.deepEqual(
      h.logs.filter((l) => l.startsWith('warn')),
      [
        'warn: rollout openai_compatible gpt-4o: 429 Rate limit reached; attempt 2/4 in 3.0 s',
        'warn: rollout openai_compatible gpt-4o: 429 Rate limit reached; attempt 3/4 in 1.5 s',
      ],
    );
  });

  it('caps an excessive retry-after', async () => {
    const h = await harness([status(503, 'busy', { 'retry-after': '3600' }), reply('ok')], {
      retry: { maxAttempts: 2, retryAfterCapMs: 10_000 },
    });
    await h.chat();
    assert.deepEqual(h.waits, [10_000]);
  });

  it('retries a 500 with jittered backoff, then succeeds, and accounts the retry', async () => {
    const h = await harness([status(500, 'boom'), reply('ok', { promptTokens: 10, completionTokens: 2 })]);
    const result = await h.chat();
    assert.equal(result.attempts, 2);
    assert.deepEqual(h.waits, [250]);
    const [row] = h.accounting.snapshot().entries;
    assert.equal(row.calls, 1);
    assert.equal(row.retries, 1);
    assert.equal(row.promptTokens, 10);
    assert.equal(row.failures, 0);
  });

  it('does not retry a 400 and does not sleep', async () => {
    const h = await harness([status(400, "Unsupported parameter: 'max_tokens'"), reply('never')]);
    await assert.rejects(h.chat(), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        "openai_compatible gpt-4o: 400 Unsupported parameter: 'max_tokens' after 1 attempt. " +
          'Fix: the provider rejected the request; check the model options in the config',
      );
      return true;
    });
    assert.equal(h.server.requests.length, 1);
    assert.deepEqual(h.waits, []);
    assert.equal(h.accounting.totals().failures, 1);
  });

  it('exhausts its attempts with exponential backoff and no sleep after the last one', async () => {
    const h = await harness([
      status(503, 'down'),
      status(503, 'down'),
      status(503, 'down'),
      status(503, 'down'),
    ]);
    await assert.rejects(h.chat(), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(err.problem, 'openai_compatible gpt-4o: 503 down after 4 attempts');
      assert.equal(err.place.fix, `the provider at ${h.server.url} is failing; resume the run later`);
      return true;
    });
    assert.deepEqual(h.waits, [250, 500, 1000]);
    assert.equal(h.server.requests.length, 4);
    const totals = h.accounting.totals();
    assert.equal(totals.failures, 1);
    assert.equal(totals.retries, 3);
    assert.equal(totals.calls, 0);
  });

  it('times out a hanging reply and retries it', async () => {
    const h = await harness([hang(), reply('late but fine')], { timeoutMs: 200 });
    const result = await h.chat();
    assert.equal(result.text, 'late but fine');
    assert.equal(result.attempts, 2);
    assert.equal(h.server.requests.length, 2);
    assert.equal(h.server.answered, 1, 'the hung request never got an answer');
    assert.match(
      h.logs.find((l) => l.startsWith('warn'))!,
      /no reply within 200 ms; attempt 2\/4/,
    );
  });

  it('reports a timeout after the last attempt with a fix', async () => {
    const h = await harness([hang(), hang()], { timeoutMs: 100, retry: { maxAttempts: 2, random: () => 0 } });
    await assert.rejects(h.chat(), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        `openai_compatible gpt-4o: no reply within 100 ms after 2 attempts. Fix: raise limits.request_timeout_s or check the server at ${h.server.url}`,
      );
      return true;
    });
  });

  it('honours a per-request timeout over the client default', async () => {
    const h = await harness([hang(), reply('ok')], { timeoutMs: 60_000 });
    const result = await h.chat(undefined, { ...REQ, timeoutMs: 150 });
    assert.equal(result.attempts, 2);
  });

  it('cancels mid-call against a hanging server', async () => {
    const h = await harness([hang(), reply('must not be asked')]);
    const controller = new AbortController();
    const pending = h.chat(controller.signal);
    await h.server.waitForRequests(1);
    controller.abort();
    await assert.rejects(pending, (err: unknown) => SkillOptError.is(err, 'cancelled'));
    assert.equal(h.server.answered, 0);
    assert.equal(h.server.requests.length, 1, 'no retry after cancellation');
    assert.equal(h.accounting.totals().failures, 0, 'a cancelled call is not a failure');
  });

  it('counts the requests a timeout or a stop cut off before their reply (their tokens are unknown, their bill may not be)', async () => {
    const timedOut = await harness([hang(), reply('late but fine')], { timeoutMs: 200 });
    await timedOut.chat();
    await timedOut.accounting.settled(1000);
    let totals = timedOut.accounting.totals();
    assert.equal(totals.cutOff, 1, 'the timed-out attempt');
    assert.equal(totals.calls, 1);
    assert.equal(totals.retries, 1);
    await server?.close();

    const stopped = await harness([hang(), reply('must not be asked')]);
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-cutoff-'));
    const detach = new RunLedger(join(dir, 'ledger.jsonl')).attach(stopped.accounting);
    const controller = new AbortController();
    const pending = stopped.chat(controller.signal);
    await stopped.server.waitForRequests(1);
    controller.abort();
    await assert.rejects(pending, (err: unknown) => SkillOptError.is(err, 'cancelled'));
    await stopped.accounting.settled(1000);
    totals = stopped.accounting.totals();
    assert.deepEqual([totals.cutOff, totals.calls, totals.failures, totals.promptTokens], [1, 0, 0, 0]);
    // One per request sent: a stop while waiting to retry cuts nothing off.
    const entry = stopped.accounting.snapshot().entries.find((e) => e.cutOff);
    assert.equal(entry?.stage, 'rollout');
    // In the ledger, so a resumed run still says its totals are a lower bound.
    detach();
    const resumed = new Accounting();
    new RunLedger(join(dir, 'ledger.jsonl')).attach(resumed)();
    assert.equal(resumed.totals().cutOff, 1);
    rmSync(dir, { recursive: true, force: true });
  });

  it('cancels while waiting to retry', async () => {
    const controller = new AbortController();
    const h = await harness([status(429, 'slow down', { 'retry-after': '30' }), reply('must not be asked')], {
      // The real, abortable sleep: the 30 s wait must end as soon as the signal fires.
      sleep: undefined,
      logger: { log: (level) => level === 'warn' && setImmediate(() => controller.abort()) },
    });
    await assert.rejects(h.chat(controller.signal), (err: unknown) => SkillOptError.is(err, 'cancelled'));
    assert.equal(h.server.requests.length, 1);
  });

  it('rejects at once when the signal has already fired', async () => {
    const h = await harness([reply('never')]);
    await assert.rejects(h.chat(AbortSignal.abort()), (err: unknown) => SkillOptError.is(err, 'cancelled'));
    assert.equal(h.server.requests.length, 0);
  });

  for (const [label, broken] of [
    ['a truncated JSON body', { kind: 'truncated', cut: 'body' }],
    ['a connection dropped mid-body', { kind: 'truncated', cut: 'connection' }],
    ['a socket destroyed before any reply', { kind: 'destroy' }],
  ] as Array<[string, Reply]>) {
    it(`treats ${label} as transient`, async () => {
      const h = await harness([broken, reply('recovered')]);
      const result = await h.chat();
      assert.equal(result.text, 'recovered');
      assert.equal(result.attempts, 2);
      assert.deepEqual(h.waits, [250]);
    });
  }

  it('stays prompt with a backend that ignores its signal', async () => {
    const calls: number[] = [];
    const deaf: ChatBackend = {
      provider: 'deaf',
      model: 'never-answers',
      cacheParams: {},
      call: (): Promise<BackendReply> => {
        calls.push(calls.length);
        return new Promise<BackendReply>(() => undefined);
      },
    };
    const timed = createModelClient({
      role: 'target',
      backend: deaf,
      timeoutMs: 50,
      retry: { maxAttempts: 2 },
      sleep: () => Promise.resolve(),
    });
    await assert.rejects(timed.chat(REQ), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(err.problem, 'deaf never-answers: no reply within 50 ms after 2 attempts');
      return true;
    });
    assert.equal(calls.length, 2);
    const controller = new AbortController();
    const pending = createModelClient({ role: 'target', backend: deaf, timeoutMs: 60_000 }).chat(
      REQ,
      controller.signal,
    );
    setImmediate(() => controller.abort());
    await assert.rejects(pending, (err: unknown) => SkillOptError.is(err, 'cancelled'));
  });

  it('names the endpoint when nothing listens there', async () => {
    const h = await harness([]);
    const url = h.server.url;
    await h.server.close();
    server = undefined;
    const client = createModelClient({
      role: 'target',
      backend: new OpenAiBackend({ model: 'llama3', baseUrl: url }),
      retry: { maxAttempts: 2, random: () => 0 },
      sleep: () => Promise.resolve(),
    });
    await assert.rejects(client.chat(REQ), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        `openai_compatible llama3: connection failed (ECONNREFUSED) after 2 attempts. Fix: check that the server at ${url} is reachable`,
      );
      return true;
    });
  });
});
