import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AnthropicBackend } from '../../../src/engine/llm/anthropic';
import { createModelClient } from '../../../src/engine/llm/client';
import { RunLedger, type LedgerRow } from '../../../src/engine/llm/ledger';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import { promptCacheKeyNotice, sendsPromptCacheKey } from '../../../src/engine/llm/promptCacheConfig';
import { configSchema } from '../../../src/engine/config/schema';
import type { ChatBackend, ChatRequest } from '../../../src/engine/llm/types';
import type { Scorer } from '../../../src/engine/scoring/scorers';
import { analystUserMessage } from '../../../src/engine/train/reflect';
import { rollout } from '../../../src/engine/train/rollout';
import { reply, startAnthropicServer, type LoopbackServer } from '../../support/loopback/anthropicServer';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { OpenAiPrefixCache, withPromptCache } from '../../support/loopback/promptCache';

const KEY = 'fake-test-prompt-caching-0001';
const SKILL = '# Skill\n' + 'Check the units before answering. '.repeat(40);

const scorer: Scorer = { name: 'exact', score: () => Promise.resolve({ hard: 1, soft: 1, reason: 'ok' }) };

function analystRequest(skill: string, trajectories: string): ChatRequest {
  const user = analystUserMessage('patch', 'failure', skill, 3, '', undefined, trajectories, 2);
  return {
    role: 'optimizer',
    stage: 'analyst',
    cacheSkill: skill,
    messages: [
      { role: 'system', content: 'You are the optimizer.' },
      { role: 'user', content: user.text, stablePrefix: user.stablePrefix },
    ],
  };
}

function targetRequest(skill: string, task: string): ChatRequest {
  return {
    role: 'target',
    stage: 'rollout',
    messages: [
      { role: 'system', content: `Solve it.\n\n## Skill\n${skill}` },
      { role: 'user', content: task },
    ],
    task: { taskId: task, skill, skillName: 'skill', prompt: task },
  };
}

type Body = { system?: unknown; messages: Array<{ content: unknown }>; prompt_cache_key?: string };
const bodyOf = (server: LoopbackServer, i: number): Body => server.requests[i].body as Body;

describe('provider prompt caching (real SDKs over loopback HTTP)', () => {
  let server: LoopbackServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('puts the analyst stable prefix first and ends it before the trajectories', () => {
    const user = analystUserMessage(
      'patch',
      'failure',
      SKILL,
      3,
      'step 1: added a rule',
      'meta',
      'T1\nT2',
      2,
    );
    const stable = user.text.slice(0, user.stablePrefix);
    assert.ok(stable.startsWith('## Current Skill'));
    assert.ok(stable.includes('step 1: added a rule') && stable.includes('meta'));
    assert.ok(!stable.includes('Failed Trajectories'));
    assert.ok(user.text.slice(user.stablePrefix).includes('## Failed Trajectories (2 total)\n\nT1\nT2'));
    const other = analystUserMessage('patch', 'failure', SKILL, 3, 'step 1: added a rule', 'meta', 'T9', 1);
    assert.equal(other.text.slice(0, other.stablePrefix), stable, 'analysts of a step share the prefix');
  });

  it('Anthropic: cache_control on the skill block and the optimizer prefix; texts unchanged', async () => {
    server = await startAnthropicServer([reply('ok'), reply('ok')]);
    const backend = new AnthropicBackend({
      model: 'claude-haiku-4-5',
      apiKey: KEY,
      baseUrl: server.url,
      promptCaching: true,
    });
    const client = createModelClient({ role: 'optimizer', backend });
    await client.chat(targetRequest(SKILL, 'What is 2+2?'));
    const analyst = analystRequest(SKILL, 'T1 failed');
    await client.chat(analyst);

    const target = bodyOf(server, 0);
    assert.deepEqual(target.system, [
      { type: 'text', text: `Solve it.\n\n## Skill\n${SKILL}`, cache_control: { type: 'ephemeral' } },
    ]);
    assert.deepEqual(target.messages, [{ role: 'user', content: 'What is 2+2?' }]);

    const sent = bodyOf(server, 1);
    const [blockA, blockB] = sent.messages[0].content as Array<{ text: string; cache_control?: unknown }>;
    assert.deepEqual(blockA.cache_control, { type: 'ephemeral' });
    assert.equal(blockB.cache_control, undefined);
    assert.equal(blockA.text + blockB.text, analyst.messages[1].content, 'the prompt text is unchanged');
    assert.ok(blockA.text.includes(SKILL.trim()) && blockB.text.includes('T1 failed'));
  });

  it('Anthropic: never more than 4 breakpoints, keeping the longest prefixes', async () => {
    server = await startAnthropicServer([reply('ok')]);
    const backend = new AnthropicBackend({
      model: 'm',
      apiKey: KEY,
      baseUrl: server.url,
      promptCaching: true,
    });
    const turns = ['a', 'b', 'c', 'd', 'e'].flatMap((t) => [
      { role: 'user' as const, content: `${t}-stable ${t}-rest`, stablePrefix: 8 },
      { role: 'assistant' as const, content: 'noted' },
    ]);
    await createModelClient({ role: 'optimizer', backend }).chat({
      role: 'optimizer',
      stage: 'deep_reflect',
      messages: [{ role: 'system', content: 'sys' }, ...turns.slice(0, -1)],
    });
    const text = JSON.stringify(bodyOf(server, 0));
    assert.equal(text.split('"cache_control"').length - 1, 4);
    const marked = bodyOf(server, 0).messages.map((m) => Array.isArray(m.content));
    assert.deepEqual(marked, [false, false, false, false, true, false, true, false, true]);
  });

  it('Anthropic: cache reads and writes land in the ledger and are priced at cache rates', async () => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-pcache-'));
    const sim = withPromptCache('anthropic', () => reply('<answer>4</answer>', { completionTokens: 10 }));
    server = await startAnthropicServer(sim.handler);
    const accounting = new Accounting();
    const ledger = new RunLedger(join(dir, 'ledger.jsonl'));
    ledger.attach(accounting);
    const backend = new AnthropicBackend({
      model: 'claude-haiku-4-5',
      apiKey: KEY,
      baseUrl: server.url,
      promptCaching: true,
    });
    const client = createModelClient({ role: 'target', backend, accounting });
    await rollout({
      items: ['1', '2', '3'].map((id) => ({ id, input: `task ${id}`, answers: ['4'], fields: {} })),
      skill: SKILL,
      dir: join(dir, 'rollout'),
      client,
      scorer,
      stage: 'rollout',
      answerTag: 'answer',
      signal: new AbortController().signal,
    });
    const rows = readFileSync(join(dir, 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerRow)
      .filter((r) => r.kind === 'usage');
    const wrote = rows.filter((r) => r.cache_write_tokens);
    const read = rows.filter((r) => r.cached_tokens);
    // Rollouts run concurrently: at least one writes the skill prefix; the ones after it read it.
    assert.ok(wrote.length >= 1 && read.length + wrote.length >= 2, JSON.stringify(rows));
    for (const r of rows) {
      const p = r.prompt_tokens!;
      const c = r.cached_tokens ?? 0;
      const w = r.cache_write_tokens ?? 0;
      const expected = ((p - c - w) * 1 + c * 0.1 + w * 1.25 + r.completion_tokens! * 5) / 1e6;
      assert.ok(Math.abs(r.dollars! - expected) < 1e-12, `row priced at cache rates: ${JSON.stringify(r)}`);
    }
    const t = accounting.totals();
    assert.equal(t.cachedTokens, sum(rows, 'cached_tokens'));
    assert.equal(t.cacheWriteTokens, sum(rows, 'cache_write_tokens'));
    const expectedSaved = (t.cachedTokens * 0.9 - t.cacheWriteTokens * 0.25) / 1e6;
    assert.ok(Math.abs(t.cacheSavedDollars! - expectedSaved) < 1e-12);

    // A resumed process reads the cache counts back from the ledger.
    const again = new Accounting();
    new RunLedger(join(dir, 'ledger.jsonl')).attach(again);
    assert.equal(again.totals().cachedTokens, t.cachedTokens);
    assert.equal(again.totals().cacheWriteTokens, t.cacheWriteTokens);
    assert.ok(Math.abs(again.totals().dollars! - t.dollars!) < 1e-12);
  });

  it('OpenAI: prompt_cache_key per skill version and role, cached_tokens read and priced', async () => {
    const sim = withPromptCache('openai', () => reply('<answer>4</answer>', { completionTokens: 10 }));
    server = await startOpenAiServer(sim.handler);
    const accounting = new Accounting();
    // Priced as OpenAI's own API: the provider is named, the base URL is the loopback server.
    const official = new OpenAiBackend({
      model: 'gpt-4.1-mini',
      apiKey: KEY,
      baseUrl: server.url,
      provider: 'openai',
      promptCacheKey: true,
    });
    const client = createModelClient({ role: 'target', backend: official, accounting });
    await client.chat(targetRequest(SKILL, 'task one'));
    await client.chat(targetRequest(SKILL, 'task two'));
    await client.chat(targetRequest(`${SKILL}\nA new rule.`, 'task one'));
    await client.chat(analystRequest(SKILL, 'T1'));
    const keys = server.requests.map((r) => (r.body as Body).prompt_cache_key);
    assert.match(keys[0]!, /^skillopt-target-[0-9a-f]{32}$/);
    assert.equal(keys[1], keys[0], 'stable for one skill version');
    assert.notEqual(keys[2], keys[0], 'a new skill version gets a new key');
    assert.match(keys[3]!, /^skillopt-optimizer-/);

    const t = accounting.totals();
    assert.ok(t.cachedTokens > 0, 'the second call with the same skill read the cache');
    const [row] = accounting.snapshot().entries;
    const expected =
      ((row.promptTokens - row.cachedTokens) * 0.4 + row.cachedTokens * 0.1 + row.completionTokens * 1.6) /
      1e6;
    assert.ok(Math.abs(row.dollars! - expected) < 1e-12);
    assert.ok(Math.abs(t.cacheSavedDollars! - (t.cachedTokens * 0.3) / 1e6) < 1e-12);
  });

  it('caching off sends neither cache_control nor prompt_cache_key, and nothing is cached', async () => {
    const anthropicSim = withPromptCache('anthropic', () => reply('ok'));
    server = await startAnthropicServer(anthropicSim.handler);
    const openAiSim = withPromptCache('openai', () => reply('ok'));
    const openAiServer = await startOpenAiServer(openAiSim.handler);
    try {
      const backends: ChatBackend[] = [
        new AnthropicBackend({ model: 'claude-haiku-4-5', apiKey: KEY, baseUrl: server.url }),
        new OpenAiBackend({
          model: 'gpt-4.1-mini',
          apiKey: KEY,
          baseUrl: openAiServer.url,
          provider: 'openai',
        }),
      ];
      for (const backend of backends) {
        const accounting = new Accounting();
        const client = createModelClient({ role: 'target', backend, accounting });
        for (const task of ['a', 'b']) await client.chat(targetRequest(SKILL, task));
        await client.chat(analystRequest(SKILL, 'T1'));
        assert.equal(accounting.totals().cachedTokens, 0);
        assert.equal(accounting.totals().cacheWriteTokens, 0);
      }
      const sent = JSON.stringify([...server.requests, ...openAiServer.requests].map((r) => r.body));
      assert.ok(!sent.includes('cache_control') && !sent.includes('prompt_cache_key'), sent);
    } finally {
      await openAiServer.close();
    }
  });

  it('the loopback streams carry the cache counts where the real APIs put them', async () => {
    server = await startAnthropicServer([
      reply('ok', { promptTokens: 100, completionTokens: 5, cachedTokens: 60, cacheWriteTokens: 30 }),
    ]);
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    const sdk = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
    const message = await sdk.messages
      .stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    assert.equal(message.usage.input_tokens, 10);
    assert.equal(message.usage.cache_read_input_tokens, 60);
    assert.equal(message.usage.cache_creation_input_tokens, 30);

    const openAiServer = await startOpenAiServer([
      reply('ok', { promptTokens: 100, completionTokens: 5, cachedTokens: 64 }),
    ]);
    try {
      const { default: OpenAI } = await import('openai');
      const openai = new OpenAI({ apiKey: KEY, baseURL: openAiServer.url, maxRetries: 0 });
      const stream = await openai.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let cached: number | undefined;
      for await (const chunk of stream) cached = chunk.usage?.prompt_tokens_details?.cached_tokens ?? cached;
      assert.equal(cached, 64);
    } finally {
      await openAiServer.close();
    }
  });
});

describe('the loopback prompt cache (tests and bench)', () => {
  it('reports the shared prefix under one key, deterministically, and nothing without a key', () => {
    const cache = new OpenAiPrefixCache();
    const skill = 'S'.repeat(400);
    assert.equal(cache.read('k', `${skill}\ntask 1`), 0, 'the first prompt under a key is not cached');
    assert.equal(cache.read('k', `${skill}\ntask 2`), Math.floor((skill.length + 6) / 4));
    assert.equal(cache.read('other', `${skill}\ntask 3`), 0, 'keys do not share');
    assert.equal(cache.read(undefined, `${skill}\ntask 4`), 0);
    assert.equal(new OpenAiPrefixCache(1024).read('k', skill), 0);
  });
});

describe('model.prompt_caching and model.prompt_cache_key', () => {
  const cfg = (model: Record<string, unknown>) => configSchema.parse({ model });
  const compatible = new OpenAiBackend({ model: 'm', apiKey: KEY, baseUrl: 'http://127.0.0.1:9/v1' });

  it('sends prompt_cache_key to OpenAI by default, to other servers only when asked, never when off', () => {
    assert.equal(sendsPromptCacheKey(cfg({}), 'openai', undefined), true);
    assert.equal(sendsPromptCacheKey(cfg({}), 'openai', 'https://api.openai.com/v1/'), true);
    assert.equal(sendsPromptCacheKey(cfg({}), 'openai', 'http://127.0.0.1:9/v1'), false);
    assert.equal(sendsPromptCacheKey(cfg({}), 'azure_openai', undefined), false);
    assert.equal(sendsPromptCacheKey(cfg({ prompt_cache_key: 'on' }), 'azure_openai', undefined), true);
    assert.equal(sendsPromptCacheKey(cfg({ prompt_cache_key: 'off' }), 'openai', undefined), false);
    assert.equal(
      sendsPromptCacheKey(cfg({ prompt_caching: false, prompt_cache_key: 'on' }), 'openai', undefined),
      false,
    );
  });

  it('says in one line when a server does not get the key under auto', () => {
    assert.match(
      promptCacheKeyNotice(cfg({}), compatible) ?? '',
      /prompt_cache_key is not sent to http:\/\/127\.0\.0\.1:9\/v1.*model\.prompt_cache_key: on/,
    );
    assert.equal(promptCacheKeyNotice(cfg({ prompt_cache_key: 'on' }), compatible), undefined);
    assert.equal(promptCacheKeyNotice(cfg({ prompt_caching: false }), compatible), undefined);
  });
});

function sum(rows: LedgerRow[], field: 'cached_tokens' | 'cache_write_tokens'): number {
  return rows.reduce((n, r) => n + (r[field] ?? 0), 0);
}
