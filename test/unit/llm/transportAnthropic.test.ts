import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AnthropicBackend, anthropicBody } from '../../../src/engine/llm/anthropic';
import type { ModelClientOptions } from '../../../src/engine/llm/client';
import { createModelClient } from '../../../src/engine/llm/client';
import type { ChatRequest } from '../../../src/engine/llm/types';
import type { Logger } from '../../../src/engine/log';
import type { LoopbackServer, Reply, Script } from '../../support/loopback/anthropicServer';
import {
  hang,
  lastUserText,
  reply,
  startAnthropicServer,
  status,
} from '../../support/loopback/anthropicServer';

const KEY = 'fake-anthropic-test-transport-0002';

function req(over: Partial<ChatRequest> = {}): ChatRequest {
  return {
    role: 'optimizer',
    stage: 'analyst',
    messages: [
      { role: 'system', content: 'You are an analyst.' },
      { role: 'system', content: 'Reply in JSON.' },
      { role: 'user', content: 'Trajectory 1' },
      { role: 'assistant', content: '{"draft": true}' },
      { role: 'user', content: 'Now the patch.' },
    ],
    ...over,
  };
}

describe('llm/anthropic transport (real SDK over loopback HTTP)', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('joins system messages, sends the default max_tokens, and reads text and usage', async () => {
    server = await startAnthropicServer([reply('{"patch": []}', { promptTokens: 120, completionTokens: 7 })]);
    const backend = new AnthropicBackend({ model: 'claude-haiku-4-5', apiKey: KEY, baseUrl: server.url });
    const result = await createModelClient({ role: 'optimizer', backend }).chat(req());
    assert.equal(result.text, '{"patch": []}');
    assert.deepEqual(result.usage, { promptTokens: 120, completionTokens: 7 });
    assert.equal(result.backend, 'anthropic');
    const [sent] = server.requests;
    assert.equal(sent.path, '/v1/messages');
    assert.deepEqual(sent.body, {
      model: 'claude-haiku-4-5',
      max_tokens: 16384,
      system: 'You are an analyst.\n\nReply in JSON.',
      messages: [
        { role: 'user', content: 'Trajectory 1' },
        { role: 'assistant', content: '{"draft": true}' },
        { role: 'user', content: 'Now the patch.' },
      ],
    });
    assert.equal(lastUserText(sent), 'Now the patch.');
    // The SDK authenticates with the key we passed (as x-api-key or a bearer token, by SDK version).
    const auth = sent.headers['x-api-key'] ?? sent.headers.authorization;
    assert.ok(auth === KEY || auth === `Bearer ${KEY}`, `unexpected auth header ${auth}`);
  });

  it('enables thinking with a budget and then omits temperature', async () => {
    server = await startAnthropicServer([
      {
        kind: 'reply',
        blocks: [
          { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
          { type: 'text', text: 'Part one, ' },
          { type: 'text', text: 'part two.' },
        ],
        usage: { promptTokens: 10, completionTokens: 900 },
      },
    ]);
    const backend = new AnthropicBackend({
      model: 'claude-opus-4-1',
      apiKey: KEY,
      baseUrl: server.url,
      sendTemperature: true,
    });
    const result = await backend.call(
      req({ thinkingBudget: 4000, maxTokens: 8000, temperature: 0 }),
      new AbortController().signal,
    );
    assert.equal(result.text, 'Part one, part two.');
    const body = server.requests[0].body as Record<string, unknown>;
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 4000 });
    assert.equal(body.max_tokens, 8000);
    assert.equal('temperature' in body, false);
  });

  it('sends temperature only when told the server takes it', async () => {
    server = await startAnthropicServer([reply('a'), reply('b')]);
    const plain = new AnthropicBackend({ model: 'claude-3-5-haiku', apiKey: KEY, baseUrl: server.url });
    const withTemp = new AnthropicBackend({
      model: 'claude-3-5-haiku',
      apiKey: KEY,
      baseUrl: server.url,
      sendTemperature: true,
    });
    await plain.call(req({ temperature: 0 }), new AbortController().signal);
    await withTemp.call(req({ temperature: 0 }), new AbortController().signal);
    const [a, b] = server.requests.map((r) => r.body as Record<string, unknown>);
    assert.equal('temperature' in a, false);
    assert.equal(b.temperature, 0);
  });

  it('keeps max_tokens above the thinking budget and raises tiny budgets to the API minimum', () => {
    const body = anthropicBody('claude-x', req({ thinkingBudget: 500, maxTokens: 1000 }));
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.equal(body.max_tokens, 2024);
    const roomy = anthropicBody('claude-x', req({ thinkingBudget: 2048 }), { maxTokens: 4096 });
    assert.equal(roomy.max_tokens, 4096);
  });

  it('turns a system-only request into one user turn', () => {
    const body = anthropicBody('claude-x', {
      role: 'target',
      stage: 'eval',
      messages: [{ role: 'system', content: 'Say hi.' }],
    });
    assert.deepEqual(body.messages, [{ role: 'user', content: 'Say hi.' }]);
    assert.equal(body.system, undefined);
  });

  it('rejects a reply without text as llm-reply and marks max_tokens stops', async () => {
    server = await startAnthropicServer([
      {
        kind: 'reply',
        blocks: [{ type: 'thinking', thinking: 'hmm', signature: 's' }],
        finishReason: 'max_tokens',
      },
      { kind: 'reply', text: 'cut', finishReason: 'max_tokens' },
    ]);
    const backend = new AnthropicBackend({ model: 'claude-x', apiKey: KEY, baseUrl: server.url });
    await assert.rejects(backend.call(req(), new AbortController().signal), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm-reply'));
      assert.equal(
        err.problem,
        'anthropic claude-x: the reply has no text (it stopped at max_tokens, possibly while thinking)',
      );
      return true;
    });
    const cut = await backend.call(req(), new AbortController().signal);
    assert.equal(cut.truncated, true);
  });

  it('names the base URL when a 200 carries a web page instead of a message', async () => {
    server = await startAnthropicServer([{ kind: 'status', status: 200, body: '<html>Proxy login</html>' }]);
    const backend = new AnthropicBackend({ model: 'claude-x', apiKey: KEY, baseUrl: server.url });
    await assert.rejects(backend.call(req(), new AbortController().signal), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'), String(err));
      assert.equal(
        err.problem,
        'anthropic claude-x: the server answered with something that is not an API reply ("<html>Proxy login</html>")',
      );
      assert.match(err.message, /Fix: check the base URL/);
      return true;
    });
  });

  it('retries an overloaded server (529) and gives up on 401 at once', async () => {
    server = await startAnthropicServer([
      status(529, 'Overloaded'),
      reply('fine'),
      status(401, 'invalid x-api-key'),
    ]);
    const waits: number[] = [];
    const backend = new AnthropicBackend({ model: 'claude-x', apiKey: KEY, baseUrl: server.url });
    const client = createModelClient({
      role: 'optimizer',
      backend,
      retry: { maxAttempts: 3, random: () => 0.5 },
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    const ok = await client.chat(req());
    assert.equal(ok.text, 'fine');
    assert.equal(ok.attempts, 2);
    assert.deepEqual(waits, [250]);
    await assert.rejects(client.chat(req()), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        'anthropic claude-x: 401 invalid x-api-key after 1 attempt. ' +
          'Fix: check the API key (ANTHROPIC_API_KEY or the "SkillOpt: Set API Key" command) and that it may use this model',
      );
      return true;
    });
    assert.equal(server.requests.length, 3);
  });

  it('refuses a missing key before any call', () => {
    assert.throws(
      () => new AnthropicBackend({ model: 'claude-haiku-4-5' }),
      (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'config'));
        assert.equal(
          err.message,
          'no API key for anthropic (model claude-haiku-4-5). Fix: set the ANTHROPIC_API_KEY environment variable, or run "SkillOpt: Set API Key" in VS Code',
        );
        return true;
      },
    );
  });
});

/** Resolves once `done()` holds, checking every few milliseconds (a hung condition fails by mocha's timeout). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('llm/anthropic retries, timeouts, cancellation and broken bodies (real SDK over loopback HTTP)', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  interface Harness {
    server: LoopbackServer;
    waits: number[];
    warnings: string[];
    accounting: Accounting;
    chat(
      signal?: AbortSignal,
      request?: ChatRequest,
    ): ReturnType<ReturnType<typeof createModelClient>['chat']>;
  }

  async function harness(script: Script, opts: Partial<ModelClientOptions> = {}): Promise<Harness> {
    server = await startAnthropicServer(script);
    const waits: number[] = [];
    const warnings: string[] = [];
    const accounting = new Accounting();
    const logger: Logger = {
      log: (level, _c, message) => {
        if (level === 'warn') warnings.push(message);
      },
    };
    const client = createModelClient({
      role: 'optimizer',
      backend: new AnthropicBackend({ model: 'claude-x', apiKey: KEY, baseUrl: server.url }),
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
    return {
      server: s,
      waits,
      warnings,
      accounting,
      chat: (signal, request = req()) => client.chat(request, signal),
    };
  }

  it('honours retry-after on a 429 and then succeeds', async () => {
    const h = await harness([
      status(429, 'Number of request tokens has exceeded your per-minute rate limit', { 'retry-after': '3' }),
      status(429, 'rate limited', { 'retry-after-ms': '1500', 'retry-after': '2' }),
      reply('ok', { promptTokens: 40, completionTokens: 2 }),
    ]);
    const result = await h.chat();
    assert.equal(result.text, 'ok');
    assert.equal(result.attempts, 3);
    assert.deepEqual(h.waits, [3000, 1500], 'the server-asked waits, not the 250/500 ms backoff');
    assert.equal(h.server.requests.length, 3);
    assert.deepEqual(h.warnings, [
      'analyst anthropic claude-x: 429 Number of request tokens has exceeded your per-minute rate limit; attempt 2/4 in 3.0 s',
      'analyst anthropic claude-x: 429 rate limited; attempt 3/4 in 1.5 s',
    ]);
    const [row] = h.accounting.snapshot().entries;
    assert.deepEqual(
      { calls: row.calls, retries: row.retries, failures: row.failures, promptTokens: row.promptTokens },
      { calls: 1, retries: 2, failures: 0, promptTokens: 40 },
    );
  });

  it('does not sleep after the last rate-limited attempt', async () => {
    const h = await harness(
      [
        status(429, 'rate limited', { 'retry-after': '2' }),
        status(429, 'rate limited', { 'retry-after': '4' }),
        status(429, 'rate limited', { 'retry-after': '8' }),
        reply('must not be asked'),
      ],
      { retry: { maxAttempts: 3, random: () => 0.5 } },
    );
    await assert.rejects(h.chat(), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        'anthropic claude-x: 429 rate limited after 3 attempts. ' +
          'Fix: the provider is rate-limiting: lower limits.provider_concurrency or wait and resume',
      );
      return true;
    });
    assert.deepEqual(h.waits, [2000, 4000], 'the third retry-after (8 s) is not slept');
    assert.equal(h.server.requests.length, 3);
    const totals = h.accounting.totals();
    assert.equal(totals.failures, 1);
    assert.equal(totals.retries, 2);
    assert.equal(totals.calls, 0);
  });

  it('really waits out retry-after before the next request', async () => {
    const arrivals: number[] = [];
    const script: Reply[] = [status(429, 'rate limited', { 'retry-after-ms': '300' }), reply('ok')];
    const h = await harness(
      (r) => {
        arrivals.push(performance.now());
        return script[r.index] ?? status(400, 'unexpected request');
      },
      // The real sleep, and no backoff jitter to hide behind.
      { sleep: undefined, retry: { maxAttempts: 2, random: () => 0 } },
    );
    const result = await h.chat();
    assert.equal(result.attempts, 2);
    assert.equal(arrivals.length, 2);
    // A lower bound only: the retry must not come before the server said it may.
    const gap = arrivals[1] - arrivals[0];
    assert.ok(gap >= 295, `retried after ${gap.toFixed(0)} ms`);
  });

  it('retries a 500 with jittered backoff, then succeeds, and accounts the retry', async () => {
    const h = await harness([
      status(500, 'Internal server error'),
      reply('fine', { promptTokens: 12, completionTokens: 3 }),
    ]);
    const result = await h.chat();
    assert.equal(result.text, 'fine');
    assert.equal(result.attempts, 2);
    assert.deepEqual(result.usage, { promptTokens: 12, completionTokens: 3 });
    assert.deepEqual(h.waits, [250]);
    assert.equal(h.server.requests.length, 2);
    assert.deepEqual(h.warnings, [
      'analyst anthropic claude-x: 500 Internal server error; attempt 2/4 in 0.3 s',
    ]);
    const [row] = h.accounting.snapshot().entries;
    assert.equal(row.calls, 1);
    assert.equal(row.retries, 1);
    assert.equal(row.failures, 0);
    assert.equal(row.promptTokens, 12);
  });

  it('gives up on repeated 500s after the last attempt with the fix', async () => {
    const h = await harness([status(500, 'boom'), status(500, 'boom'), reply('too late')], {
      retry: { maxAttempts: 2, random: () => 0.5 },
    });
    await assert.rejects(h.chat(), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(err.problem, 'anthropic claude-x: 500 boom after 2 attempts');
      assert.equal(err.place.fix, `the provider at ${h.server.url} is failing; resume the run later`);
      return true;
    });
    assert.deepEqual(h.waits, [250]);
    assert.equal(h.server.requests.length, 2);
  });

  it('times out a hanging reply and retries it', async () => {
    const h = await harness([hang(), reply('late but fine')], { timeoutMs: 200 });
    const result = await h.chat();
    assert.equal(result.text, 'late but fine');
    assert.equal(result.attempts, 2);
    assert.equal(h.server.requests.length, 2);
    assert.equal(h.server.answered, 1, 'the hung request never got an answer');
    assert.deepEqual(h.waits, [250]);
    assert.deepEqual(h.warnings, [
      'analyst anthropic claude-x: no reply within 200 ms; attempt 2/4 in 0.3 s',
    ]);
    // The timed-out attempt was aborted on the wire, not left open.
    await until(() => h.server.inFlight === 0);
  });

  it('reports a timeout after the last attempt with a fix', async () => {
    const h = await harness([hang(), hang(), reply('never')], {
      timeoutMs: 100,
      retry: { maxAttempts: 2, random: () => 0 },
    });
    await assert.rejects(h.chat(), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        `anthropic claude-x: no reply within 100 ms after 2 attempts. Fix: raise limits.request_timeout_s or check the server at ${h.server.url}`,
      );
      return true;
    });
    assert.equal(h.server.requests.length, 2);
    assert.equal(h.server.answered, 0);
    assert.equal(h.accounting.totals().failures, 1);
  });

  it('cancels mid-call through the AbortSignal and closes the request', async () => {
    const h = await harness([hang(), reply('must not be asked')]);
    const controller = new AbortController();
    const pending = h.chat(controller.signal);
    await h.server.waitForRequests(1);
    controller.abort();
    await assert.rejects(pending, (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'cancelled'));
      assert.equal(err.message, 'The analyst call to anthropic claude-x was cancelled');
      return true;
    });
    // The abort reached the SDK: the open request is torn down, not abandoned.
    await until(() => h.server.inFlight === 0);
    assert.equal(h.server.answered, 0);
    assert.equal(h.server.requests.length, 1, 'no retry after cancellation');
    assert.deepEqual(h.waits, []);
    assert.equal(h.accounting.totals().failures, 0, 'a cancelled call is not a failure');
  });

  it('cancels while waiting out a retry-after', async () => {
    const controller = new AbortController();
    const h = await harness([status(429, 'slow down', { 'retry-after': '30' }), reply('must not be asked')], {
      // The real, abortable sleep: the 30 s wait must end as soon as the signal fires.
      sleep: undefined,
      logger: { log: (level) => level === 'warn' && setImmediate(() => controller.abort()) },
    });
    await assert.rejects(h.chat(controller.signal), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'cancelled'));
      assert.equal(err.message, 'The analyst call to anthropic claude-x was cancelled');
      return true;
    });
    assert.equal(h.server.requests.length, 1);
  });

  const MALFORMED_BODY = '{"type": "message", "content": [{"type": "text", text: oops}]}';
  const MALFORMED: Reply = {
    kind: 'status',
    status: 200,
    body: MALFORMED_BODY,
    headers: { 'content-type': 'application/json' },
  };
  /** What this Node's JSON.parse says about the malformed body (the wording differs between versions). */
  const malformedReason = ((): string => {
    try {
      JSON.parse(MALFORMED_BODY);
    } catch (err) {
      return (err as SyntaxError).message;
    }
    throw new Error('MALFORMED_BODY parses');
  })();

  for (const [label, broken, warning] of [
    // The cut falls at a place that depends on the generated message id, so only the kind is fixed here.
    ['a truncated JSON body', { kind: 'truncated', cut: 'body' }, /^malformed reply body \(.+\)$/],
    [
      'a connection dropped mid-body',
      { kind: 'truncated', cut: 'connection' },
      'connection closed mid-reply',
    ],
    ['a malformed JSON body', MALFORMED, `malformed reply body (${malformedReason})`],
    ['a socket destroyed before any reply', { kind: 'destroy' }, 'connection failed (UND_ERR_SOCKET)'],
  ] as Array<[string, Reply, string | RegExp]>) {
    it(`retries ${label} and then succeeds`, async () => {
      const h = await harness([broken, reply('recovered')]);
      const result = await h.chat();
      assert.equal(result.text, 'recovered');
      assert.equal(result.attempts, 2);
      assert.deepEqual(h.waits, [250]);
      assert.equal(h.server.requests.length, 2);
      assert.equal(h.warnings.length, 1);
      const match = /^analyst anthropic claude-x: (.+); attempt 2\/4 in 0\.3 s$/.exec(h.warnings[0]);
      assert.ok(match, h.warnings[0]);
      if (typeof warning === 'string') assert.equal(match[1], warning);
      else assert.match(match[1], warning);
    });
  }

  it('reports a body that stays malformed after the last attempt', async () => {
    const h = await harness([MALFORMED, MALFORMED, reply('too late')], {
      retry: { maxAttempts: 2, random: () => 0.5 },
    });
    await assert.rejects(h.chat(), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        `anthropic claude-x: malformed reply body (${malformedReason}) ` +
          `after 2 attempts. Fix: check that the server at ${h.server.url} is reachable`,
      );
      return true;
    });
    assert.equal(h.server.requests.length, 2);
    assert.deepEqual(h.waits, [250]);
  });
});
