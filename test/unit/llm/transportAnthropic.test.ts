import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import { AnthropicBackend, anthropicBody } from '../../../src/engine/llm/anthropic';
import { createModelClient } from '../../../src/engine/llm/client';
import type { ChatRequest } from '../../../src/engine/llm/types';
import type { LoopbackServer } from '../../support/loopback/anthropicServer';
import { lastUserText, reply, startAnthropicServer, status } from '../../support/loopback/anthropicServer';

const KEY = 'sk-ant-test-transport-0002';

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
