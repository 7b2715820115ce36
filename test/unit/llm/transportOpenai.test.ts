import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import { createModelClient } from '../../../src/engine/llm/client';
import { AzureOpenAiBackend, isReasoningModel, OpenAiBackend } from '../../../src/engine/llm/openai';
import type { ChatRequest } from '../../../src/engine/llm/types';
import type { LoopbackServer } from '../../support/loopback/openaiServer';
import { lastUserText, reply, startOpenAiServer, status } from '../../support/loopback/openaiServer';

const KEY = 'fake-test-openai-transport-0001';

function req(over: Partial<ChatRequest> = {}): ChatRequest {
  return {
    role: 'target',
    stage: 'rollout',
    messages: [
      { role: 'system', content: 'You answer briefly.' },
      { role: 'user', content: 'Capital of France?' },
    ],
    ...over,
  };
}

/** A gpt-4o client that would retry up to four times, without really sleeping. */
function retryingClient(baseUrl: string): ReturnType<typeof createModelClient> {
  const backend = new OpenAiBackend({ model: 'gpt-4o', apiKey: KEY, baseUrl });
  return createModelClient({
    role: 'target',
    backend,
    retry: { maxAttempts: 4 },
    sleep: () => Promise.resolve(),
  });
}

describe('llm/openai transport (real SDK over loopback HTTP)', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('returns the reply text, usage and reported model', async () => {
    server = await startOpenAiServer([
      {
        kind: 'reply',
        text: 'Paris',
        usage: { promptTokens: 21, completionTokens: 3 },
        model: 'gpt-4o-2024-08-06',
      },
    ]);
    const backend = new OpenAiBackend({ model: 'gpt-4o', apiKey: KEY, baseUrl: server.url });
    const client = createModelClient({ role: 'target', backend });
    const result = await client.chat(req());
    assert.deepEqual(result, {
      text: 'Paris',
      usage: { promptTokens: 21, completionTokens: 3 },
      model: 'gpt-4o-2024-08-06',
      backend: 'openai_compatible',
      seconds: result.seconds,
      attempts: 1,
      cached: false,
    });
    assert.ok(result.seconds > 0);
    const [sent] = server.requests;
    assert.equal(sent.path, '/v1/chat/completions');
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    assert.equal(lastUserText(sent), 'Capital of France?');
  });

  it('counts usage as 0 when the server sends none', async () => {
    server = await startOpenAiServer([{ kind: 'reply', text: 'Paris', usage: null }]);
    const backend = new OpenAiBackend({ model: 'llama3.1:8b', baseUrl: server.url });
    const result = await backend.call(req(), new AbortController().signal);
    assert.deepEqual(result.usage, { promptTokens: 0, completionTokens: 0 });
  });

  it('sends max_tokens and temperature to a compatible server, and no reasoning_effort for other models', async () => {
    server = await startOpenAiServer([reply('a')]);
    const backend = new OpenAiBackend({ model: 'Qwen/Qwen3-4B', apiKey: KEY, baseUrl: server.url });
    await backend.call(
      req({ maxTokens: 512, temperature: 0.7, reasoningEffort: 'high' }),
      new AbortController().signal,
    );
    assert.deepEqual(server.requests[0].body, {
      model: 'Qwen/Qwen3-4B',
      messages: [
        { role: 'system', content: 'You answer briefly.' },
        { role: 'user', content: 'Capital of France?' },
      ],
      max_tokens: 512,
      temperature: 0.7,
    });
  });

  it('sends max_completion_tokens and reasoning_effort for a reasoning model, without temperature', async () => {
    server = await startOpenAiServer([reply('a'), reply('b')]);
    const logs: string[] = [];
    const backend = new OpenAiBackend({
      model: 'gpt-5-mini',
      apiKey: KEY,
      baseUrl: server.url,
      tokenField: 'max_completion_tokens',
      logger: { log: (_l, _c, m) => logs.push(m) },
    });
    await backend.call(
      req({ maxTokens: 16384, temperature: 0, reasoningEffort: 'medium' }),
      new AbortController().signal,
    );
    await backend.call(req({ maxTokens: 100, temperature: 0 }), new AbortController().signal);
    const [first, second] = server.requests.map((r) => r.body as Record<string, unknown>);
    assert.equal(first.max_completion_tokens, 16384);
    assert.equal(first.max_tokens, undefined);
    assert.equal(first.reasoning_effort, 'medium');
    assert.equal(first.temperature, undefined);
    assert.equal(second.reasoning_effort, undefined, 'no effort asked, none sent');
    assert.deepEqual(logs, ['gpt-5-mini takes no temperature; sending none (asked for 0)']);
  });

  it('forces reasoning_effort on or off, and falls back to the backend defaults', async () => {
    server = await startOpenAiServer([reply('a'), reply('b')]);
    const on = new OpenAiBackend({
      model: 'my-reasoner',
      apiKey: KEY,
      baseUrl: server.url,
      reasoning: 'on',
      reasoningEffort: 'high',
      temperature: 0.2,
      maxTokensCap: 8000,
    });
    const off = new OpenAiBackend({ model: 'o3', apiKey: KEY, baseUrl: server.url, reasoning: 'off' });
    await on.call(req({ maxTokens: 64000 }), new AbortController().signal);
    await off.call(req({ reasoningEffort: 'low' }), new AbortController().signal);
    const [a, b] = server.requests.map((r) => r.body as Record<string, unknown>);
    assert.equal(a.reasoning_effort, 'high');
    assert.equal(a.temperature, 0.2);
    assert.equal(a.max_tokens, 8000, 'clipped to the server cap');
    assert.equal(b.reasoning_effort, undefined);
  });

  it('recognises reasoning models by name', () => {
    const names = [
      'o1',
      'o3-mini',
      'o4-mini-2025-04-16',
      'gpt-5',
      'gpt-5.5',
      'openai/gpt-5',
      'gpt-5-chat-latest',
      'gpt-4o',
      'qwen3',
    ];
    assert.deepEqual(
      names.map((n) => isReasoningModel(n)),
      [true, true, true, true, true, true, false, false, false],
    );
  });

  it('rejects empty choices and empty content as llm-reply without retrying', async () => {
    server = await startOpenAiServer([
      { kind: 'status', status: 200, body: { id: 'x', object: 'chat.completion', model: 'm', choices: [] } },
      { kind: 'reply', text: '', finishReason: 'length' },
    ]);
    const client = retryingClient(server.url);
    await assert.rejects(client.chat(req()), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm-reply'));
      assert.match(err.message, /^openai_compatible gpt-4o: the reply has no choices\. Fix: /);
      return true;
    });
    await assert.rejects(client.chat(req()), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm-reply'));
      assert.match(err.problem, /the reply is empty \(it stopped at the completion-token cap\)$/);
      return true;
    });
    assert.equal(server.requests.length, 2, 'one request each: reply errors are not retried');
  });

  it('names the base URL when a 200 carries a web page instead of a reply, without retrying', async () => {
    server = await startOpenAiServer([
      { kind: 'status', status: 200, body: '<!doctype html><html><body>Sign in to the proxy</body></html>' },
    ]);
    const client = retryingClient(server.url);
    await assert.rejects(client.chat(req()), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'), String(err));
      assert.equal(
        err.message,
        'openai_compatible gpt-4o: the server answered with something that is not an API reply ("<!doctype html><html><body>Sign in to the proxy</body></html>"). Fix: check the base URL (model.optimizer_base_url / model.target_base_url): it must point at the API itself, often ending in /v1, not at a web page or a proxy sign-in',
      );
      return true;
    });
    assert.equal(server.requests.length, 1);
  });

  it('marks a reply cut at the token cap as truncated', async () => {
    server = await startOpenAiServer([{ kind: 'reply', text: 'Par', finishReason: 'length' }]);
    const backend = new OpenAiBackend({ model: 'gpt-4o', apiKey: KEY, baseUrl: server.url });
    const result = await backend.call(req(), new AbortController().signal);
    assert.equal(result.text, 'Par');
    assert.equal(result.truncated, true);
  });

  it('talks to Azure OpenAI through the deployment path with api-key and api-version', async () => {
    server = await startOpenAiServer([reply('Paris', { promptTokens: 5, completionTokens: 1 })]);
    const backend = new AzureOpenAiBackend({
      endpoint: server.origin,
      deployment: 'gpt-5.5',
      apiKey: KEY,
      reasoningEffort: 'medium',
    });
    assert.equal(backend.provider, 'azure_openai');
    const result = await createModelClient({ role: 'optimizer', backend }).chat(
      req({ role: 'optimizer', stage: 'analyst', maxTokens: 16384 }),
    );
    assert.equal(result.text, 'Paris');
    const [sent] = server.requests;
    assert.equal(sent.path, '/openai/deployments/gpt-5.5/chat/completions');
    assert.equal(sent.query['api-version'], '2024-12-01-preview');
    assert.equal(sent.headers['api-key'], KEY);
    const body = sent.body as Record<string, unknown>;
    assert.equal(body.max_completion_tokens, 16384);
    assert.equal(body.reasoning_effort, 'medium');
  });

  it('refuses a missing key before any call, naming the variable and the command', async () => {
    server = await startOpenAiServer([reply('never')]);
    assert.throws(
      () => new OpenAiBackend({ model: 'gpt-4o', apiKey: '' }),
      (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'config'));
        assert.equal(
          err.message,
          'no API key for openai (model gpt-4o). Fix: set the OPENAI_API_KEY environment variable, or run "SkillOpt: Set API Key" in VS Code',
        );
        return true;
      },
    );
    assert.throws(
      () => new AzureOpenAiBackend({ endpoint: 'https://example.openai.azure.com', deployment: 'gpt-4o' }),
      /AZURE_OPENAI_API_KEY/,
    );
    assert.throws(
      () => new OpenAiBackend({ model: 'x', baseUrl: 'https://openrouter.ai/api/v1' }),
      /OPENAI_API_KEY/,
    );
    assert.equal(server.requests.length, 0);
  });

  it('lets a local server run keyless with a placeholder key', async () => {
    server = await startOpenAiServer([reply('hi')]);
    const backend = new OpenAiBackend({ model: 'llama3', baseUrl: server.url });
    assert.deepEqual(backend.secrets(), []);
    await backend.call(req(), new AbortController().signal);
    assert.equal(server.requests[0].headers.authorization, 'Bearer no-key');
  });

  it('keeps the key out of JSON and the cache parameters', () => {
    const backend = new OpenAiBackend({ model: 'gpt-4o', apiKey: KEY });
    assert.ok(!JSON.stringify(backend).includes(KEY));
    assert.deepEqual(backend.cacheParams, {
      api: 'chat.completions',
      baseUrl: null,
      tokenField: 'max_completion_tokens',
      reasoning: 'auto',
      defaultReasoningEffort: null,
      defaultTemperature: null,
      maxTokensCap: null,
    });
    assert.equal(backend.provider, 'openai');
    assert.equal(backend.endpoint, 'https://api.openai.com/v1');
  });

  it('reports a non-retryable HTTP error with status and server message', async () => {
    server = await startOpenAiServer([status(404, 'The model `gpt-9` does not exist')]);
    const backend = new OpenAiBackend({ model: 'gpt-9', apiKey: KEY, baseUrl: server.url, provider: 'vllm' });
    const client = createModelClient({ role: 'target', backend, sleep: () => Promise.resolve() });
    await assert.rejects(client.chat(req()), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.equal(
        err.message,
        `vllm gpt-9: 404 The model \`gpt-9\` does not exist after 1 attempt. Fix: check the model or deployment name and the base URL at ${server!.url}`,
      );
      return true;
    });
  });
});
