import assert from 'node:assert/strict';
import { defaultConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { targetBatchApi } from '../../../src/engine/llm/batch/fromConfig';
import { createModelClient } from '../../../src/engine/llm/client';
import { AzureOpenAiBackend, OpenAiBackend } from '../../../src/engine/llm/openai';
import { needsResponsesApi } from '../../../src/engine/llm/openaiResponses';
import type { ChatRequest } from '../../../src/engine/llm/types';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import type { LoopbackServer, RecordedRequest } from '../../support/loopback/responsesServer';
import { startResponsesServer } from '../../support/loopback/responsesServer';

const KEY = 'fake-test-openai-responses-0001';

const req = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  role: 'target',
  stage: 'rollout',
  messages: [
    { role: 'system', content: 'You answer briefly.' },
    { role: 'user', content: 'Capital of France?' },
  ],
  maxTokens: 256,
  ...over,
});

const bodyOf = (r: RecordedRequest): Record<string, unknown> => r.body as Record<string, unknown>;

/**
 * The models that serve only the Responses API reach it (the reference switches for gpt-5.x-codex,
 * codex-mini and gpt-5.4-pro), through the real `openai` SDK against a loopback server speaking
 * the Responses wire; `model.openai_api` forces either API.
 */
describe('llm/openai: the Responses API (real SDK over loopback HTTP)', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('knows the Responses-only models by name, provider prefixes included', () => {
    for (const m of [
      'gpt-5.4-pro',
      'gpt-5.1-codex',
      'gpt-5-codex-mini',
      'codex-mini-latest',
      'openai/o3-pro',
    ])
      assert.equal(needsResponsesApi(m), true, m);
    for (const m of ['gpt-5.4', 'gpt-5-mini', 'gpt-4o', 'o3', 'process-model'])
      assert.equal(needsResponsesApi(m), false, m);
  });

  it('sends a gpt-5.4-pro call to /responses: instructions, input, cap, effort, nothing stored; reads text and cached usage', async () => {
    server = await startResponsesServer([
      { kind: 'reply', text: 'Paris', usage: { promptTokens: 900, completionTokens: 12, cachedTokens: 640 } },
    ]);
    const backend = new OpenAiBackend({
      model: 'gpt-5.4-pro',
      apiKey: KEY,
      baseUrl: server.url,
      reasoningEffort: 'high',
      temperature: 0,
    });
    const result = await createModelClient({ role: 'target', backend }).chat(req());
    assert.equal(result.text, 'Paris');
    assert.deepEqual(result.usage, { promptTokens: 900, completionTokens: 12, cachedTokens: 640 });
    assert.equal(server.requests.length, 1);
    assert.match(server.requests[0].path, /\/responses$/);
    const body = bodyOf(server.requests[0]);
    assert.equal(body.instructions, 'You answer briefly.');
    assert.deepEqual(body.input, [{ role: 'user', content: 'Capital of France?' }]);
    assert.equal(body.max_output_tokens, 256);
    assert.deepEqual(body.reasoning, { effort: 'high' });
    assert.equal(body.store, false);
    assert.equal('temperature' in body, false, 'a reasoning model gets no temperature');
    assert.equal(backend.cacheParams.api, 'responses', 'cached replies of the two APIs never mix');
  });

  it('reads a reply cut at the cap as truncated, and an empty one as a reply error', async () => {
    server = await startResponsesServer([
      { kind: 'reply', text: 'Par', finishReason: 'length' },
      { kind: 'reply', text: '' },
    ]);
    const backend = new OpenAiBackend({ model: 'codex-mini-latest', apiKey: KEY, baseUrl: server.url });
    const cut = await backend.call(req(), new AbortController().signal);
    assert.equal(cut.truncated, true);
    await assert.rejects(
      backend.call(req(), new AbortController().signal),
      (e: unknown) => SkillOptError.is(e, 'llm-reply') && /empty/.test(e.problem),
    );
  });

  it('model.openai_api forces either API: responses for any model, chat_completions for a codex model', async () => {
    server = await startResponsesServer([{ kind: 'reply', text: 'Paris' }]);
    const forced = new OpenAiBackend({
      model: 'gpt-4o',
      apiKey: KEY,
      baseUrl: server.url,
      api: 'responses',
      temperature: 0.2,
    });
    assert.equal((await forced.call(req(), new AbortController().signal)).text, 'Paris');
    assert.equal(bodyOf(server.requests[0]).temperature, 0.2, 'a non-reasoning model keeps its temperature');
    const chat = await startOpenAiServer([{ kind: 'reply', text: 'Lyon' }]);
    try {
      const codex = new OpenAiBackend({
        model: 'gpt-5.1-codex',
        apiKey: KEY,
        baseUrl: chat.url,
        api: 'chat_completions',
      });
      assert.equal((await codex.call(req(), new AbortController().signal)).text, 'Lyon');
      assert.match(chat.requests[0].path, /\/chat\/completions$/);
    } finally {
      await chat.close();
    }
  });

  it('Azure OpenAI sends a Responses-only deployment through the Responses API too', async () => {
    server = await startResponsesServer([{ kind: 'reply', text: 'Paris' }]);
    const backend = new AzureOpenAiBackend({
      endpoint: server.origin,
      deployment: 'gpt-5.4-pro',
      apiKey: KEY,
    });
    assert.equal((await backend.call(req(), new AbortController().signal)).text, 'Paris');
    assert.match(server.requests[0].path, /\/openai\/(v1\/)?responses$/);
    assert.equal(bodyOf(server.requests[0]).model, 'gpt-5.4-pro');
  });

  it('refuses a batch evaluation of a Responses model before anything is sent', () => {
    const backend = new OpenAiBackend({ model: 'gpt-5.4-pro', apiKey: KEY });
    assert.throws(
      () => targetBatchApi(defaultConfig(), backend),
      (e: unknown) => SkillOptError.is(e, 'config') && /Responses API/.test(e.problem),
    );
  });
});
