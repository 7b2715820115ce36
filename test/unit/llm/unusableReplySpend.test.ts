import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AnthropicBackend } from '../../../src/engine/llm/anthropic';
import { createModelClient } from '../../../src/engine/llm/client';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import type { ModelPrice } from '../../../src/engine/llm/prices';
import type { ChatBackend, ChatRequest } from '../../../src/engine/llm/types';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnthropicBatchApi } from '../../../src/engine/llm/batch/anthropic';
import { runBatch } from '../../../src/engine/llm/batch/runner';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import { AnthropicBatchApi as LoopbackAnthropicBatches } from '../../support/loopback/batchApis';
import type { LoopbackServer, Reply } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { startResponsesServer } from '../../support/loopback/responsesServer';

const KEY = 'fake-test-unusable-reply-0001';
const REQ: ChatRequest = {
  role: 'target',
  stage: 'rollout',
  messages: [
    { role: 'system', content: 'You answer briefly.' },
    { role: 'user', content: 'Capital of France?' },
  ],
  maxTokens: 900,
};

/**
 * A reply the provider answered and billed but that cannot be used (empty because a reasoning model
 * spent its whole completion cap thinking, a refusal) fails the call as `llm-reply`; its tokens
 * are paid all the same, so the ledger and the caps must count them, at the cache rates where the
 * reply says so. Real SDKs over the loopback wire servers.
 */
describe('llm: the tokens of a billed reply that cannot be used are paid', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function failOnce(
    backend: ChatBackend,
    prices: Record<string, ModelPrice> = {},
  ): Promise<Accounting> {
    const accounting = new Accounting({ prices });
    const client = createModelClient({ role: 'target', backend, accounting, retry: { maxAttempts: 3 } });
    await assert.rejects(client.chat(REQ), (err: unknown) => SkillOptError.is(err, 'llm-reply'));
    return accounting;
  }

  const spent = (a: Accounting): number[] => {
    const t = a.totals();
    return [t.calls, t.failures, t.promptTokens, t.completionTokens, t.cachedTokens, t.cacheWriteTokens];
  };

  it('Chat Completions: an empty reply cut at the completion cap, with cached input', async () => {
    const empty: Reply = {
      kind: 'reply',
      text: '',
      finishReason: 'length',
      usage: { promptTokens: 2000, completionTokens: 900, cachedTokens: 1024 },
    };
    server = await startOpenAiServer([empty]);
    // A loopback server is no OpenAI: the config's prices apply (gpt-5-mini's list prices).
    const price = { input_per_mtok: 0.25, cached_input_per_mtok: 0.025, output_per_mtok: 2 };
    const backend = new OpenAiBackend({ model: 'gpt-5-mini', apiKey: KEY, baseUrl: server.url });
    const a = await failOnce(backend, { 'gpt-5-mini': price });
    assert.equal(server.requests.length, 1);
    assert.deepEqual(spent(a), [0, 1, 2000, 900, 1024, 0]);
    const dollars = (976 * 0.25 + 1024 * 0.025 + 900 * 2) / 1e6;
    assert.ok(Math.abs((a.totals().dollars ?? NaN) - dollars) < 1e-12, String(a.totals().dollars));
  });

  it('Responses API: an empty incomplete response', async () => {
    server = await startResponsesServer([
      {
        kind: 'reply',
        text: '',
        finishReason: 'length',
        usage: { promptTokens: 300, completionTokens: 900 },
      },
    ]);
    const backend = new OpenAiBackend({ model: 'codex-mini-latest', apiKey: KEY, baseUrl: server.url });
    assert.deepEqual(spent(await failOnce(backend)), [0, 1, 300, 900, 0, 0]);
  });

  it('Anthropic: a reply that stopped at max_tokens while thinking, with cache reads and writes', async () => {
    server = await startAnthropicServer([
      {
        kind: 'reply',
        blocks: [{ type: 'thinking', thinking: 'hmm', signature: 's' }],
        finishReason: 'max_tokens',
        usage: { promptTokens: 5000, completionTokens: 900, cachedTokens: 3000, cacheWriteTokens: 1500 },
      },
    ]);
    const backend = new AnthropicBackend({ model: 'claude-haiku-4-5', apiKey: KEY, baseUrl: server.url });
    const a = await failOnce(backend);
    assert.deepEqual(spent(a), [0, 1, 5000, 900, 3000, 1500]);
    // Haiku 4.5: $1 input, $0.1 cache read, $1.25 cache write, $5 output per M.
    const dollars = (500 * 1 + 3000 * 0.1 + 1500 * 1.25 + 900 * 5) / 1e6;
    assert.ok(Math.abs((a.totals().dollars ?? NaN) - dollars) < 1e-12, String(a.totals().dollars));
  });

  it('Message Batches: an item answered with no text is paid at the batch price where its row is written', async () => {
    const batches = new LoopbackAnthropicBatches({ pollsToEnd: 0 });
    server = await startAnthropicServer(
      () => ({
        kind: 'reply',
        blocks: [{ type: 'thinking', thinking: 'hmm', signature: 's' }],
        finishReason: 'max_tokens',
        usage: { promptTokens: 400, completionTokens: 900, cachedTokens: 300 },
      }),
      { routes: batches.routes },
    );
    const backend = new AnthropicBackend({ model: 'claude-haiku-4-5', apiKey: KEY, baseUrl: server.origin });
    const accounting = new Accounting();
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-unusable-batch-'));
    try {
      const settled = await runBatch({
        api: new AnthropicBatchApi(backend.batchWire(), backend.model),
        stage: 'eval',
        statePath: join(dir, 'provider_batch.json'),
        items: [{ itemId: 'q1', req: REQ }],
        pollMs: 1,
        signal: new AbortController().signal,
        accounting,
      });
      const item = settled.get('q1')!;
      assert.equal(item.outcome.ok, false);
      assert.deepEqual(spent(accounting), [0, 0, 0, 0, 0, 0], 'nothing is paid before the row is written');
      item.pay();
      assert.deepEqual(spent(accounting), [0, 1, 400, 900, 300, 0]);
      // Half of Haiku 4.5's $1 input, $0.1 cache read, $5 output per M.
      const dollars = (100 * 1 + 300 * 0.1 + 900 * 5) / 1e6 / 2;
      assert.ok(Math.abs((accounting.totals().dollars ?? NaN) - dollars) < 1e-12);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
