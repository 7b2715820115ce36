import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Accounting } from '../../../src/engine/llm/accounting';
import { cacheKey, canonicalJson, ResponseCache, shouldCache } from '../../../src/engine/llm/cache';
import { createModelClient } from '../../../src/engine/llm/client';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import type { ChatBackend, ChatRequest } from '../../../src/engine/llm/types';
import type { LoopbackServer } from '../../support/loopback/openaiServer';
import { lastUserText, startOpenAiServer } from '../../support/loopback/openaiServer';

const BASE_REQ: ChatRequest = {
  role: 'target',
  stage: 'rollout',
  messages: [
    { role: 'system', content: 'skill v1' },
    { role: 'user', content: 'Q1' },
  ],
  maxTokens: 1000,
  temperature: 0,
};
const BACKEND: Pick<ChatBackend, 'provider' | 'model' | 'cacheParams'> = {
  provider: 'openai',
  model: 'gpt-4o',
  cacheParams: { api: 'chat.completions', baseUrl: null },
};

describe('llm/cache', () => {
  it('writes canonical JSON: sorted keys, undefined members dropped', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined }], c: null } }),
      '{"a":{"c":null,"d":[2,{"z":1}]},"b":1}',
    );
  });

  it('changes the key with every reply-affecting parameter and nothing else', () => {
    const base = cacheKey(BACKEND, BASE_REQ);
    assert.match(base, /^[0-9a-f]{64}$/);
    const variants: Array<[string, string]> = [
      ['provider', cacheKey({ ...BACKEND, provider: 'azure_openai' }, BASE_REQ)],
      ['model', cacheKey({ ...BACKEND, model: 'gpt-4o-mini' }, BASE_REQ)],
      [
        'cacheParams',
        cacheKey({ ...BACKEND, cacheParams: { api: 'chat.completions', baseUrl: 'http://x' } }, BASE_REQ),
      ],
      ['maxTokens', cacheKey(BACKEND, { ...BASE_REQ, maxTokens: 1001 })],
      ['temperature', cacheKey(BACKEND, { ...BASE_REQ, temperature: 0.1 })],
      ['reasoningEffort', cacheKey(BACKEND, { ...BASE_REQ, reasoningEffort: 'low' })],
      ['thinkingBudget', cacheKey(BACKEND, { ...BASE_REQ, thinkingBudget: 2048 })],
      [
        'message text',
        cacheKey(BACKEND, {
          ...BASE_REQ,
          messages: [BASE_REQ.messages[0], { role: 'user', content: 'Q2' }],
        }),
      ],
      [
        'message role',
        cacheKey(BACKEND, {
          ...BASE_REQ,
          messages: [BASE_REQ.messages[0], { role: 'assistant', content: 'Q1' }],
        }),
      ],
      [
        'task',
        cacheKey(BACKEND, {
          ...BASE_REQ,
          task: { taskId: 't1', skill: 's', skillName: 'skill', prompt: 'p' },
        }),
      ],
    ];
    const keys = new Set([base, ...variants.map(([, k]) => k)]);
    assert.equal(keys.size, variants.length + 1, 'every variant has its own key');
    // Stage, role, timeout and the order of cacheParams keys do not matter.
    assert.equal(cacheKey(BACKEND, { ...BASE_REQ, stage: 'test', role: 'optimizer', timeoutMs: 5 }), base);
    assert.equal(
      cacheKey({ ...BACKEND, cacheParams: { baseUrl: null, api: 'chat.completions' } }, BASE_REQ),
      base,
    );
  });

  it('caches target calls at temperature 0 by default, everything with allRoles, nothing when disabled', () => {
    const cases: Array<[Partial<ChatRequest>, Parameters<typeof shouldCache>[1], boolean]> = [
      [{}, undefined, true],
      [{ temperature: 0.7 }, {}, false],
      [{ temperature: undefined }, {}, false],
      [{ role: 'optimizer' }, {}, false],
      [{ role: 'optimizer', temperature: 1 }, { allRoles: true }, true],
      [{}, { enabled: false }, false],
      [{}, { enabled: false, allRoles: true }, false],
    ];
    for (const [over, policy, expected] of cases) {
      assert.equal(shouldCache({ ...BASE_REQ, ...over }, policy), expected, JSON.stringify([over, policy]));
    }
  });

  describe('through the client', () => {
    let server: LoopbackServer | undefined;
    let dir = '';
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'skillopt-cache-'));
      // Reply with the question and the arrival number, so a cached reply is recognisable.
      server = await startOpenAiServer((r) => ({
        kind: 'reply',
        text: `${lastUserText(r)}#${r.index}`,
        usage: { promptTokens: 10, completionTokens: 2 },
      }));
    });
    afterEach(async () => {
      await server?.close();
      server = undefined;
      rmSync(dir, { recursive: true, force: true });
    });

    function client(opts: { allRoles?: boolean; model?: string; warn?: string[] } = {}) {
      const accounting = new Accounting();
      const warn = opts.warn ?? [];
      const cache = new ResponseCache(dir, { logger: { log: (l, _c, m) => l === 'warn' && warn.push(m) } });
      const c = createModelClient({
        role: 'target',
        backend: new OpenAiBackend({
          model: opts.model ?? 'gpt-4o',
          apiKey: 'fake-cache-test-key-0004',
          baseUrl: server!.url,
        }),
        cache,
        cachePolicy: { allRoles: opts.allRoles },
        accounting,
      });
      return { c, cache, accounting };
    }

    it('misses, then hits on the identical request, across client instances', async () => {
      const first = client();
      const a = await first.c.chat(BASE_REQ);
      assert.equal(a.cached, false);
      assert.equal(a.text, 'Q1#0');
      const second = client();
      const b = await second.c.chat({ ...BASE_REQ, stage: 'test' });
      assert.deepEqual(b, {
        text: 'Q1#0',
        usage: { promptTokens: 10, completionTokens: 2 },
        model: 'gpt-4o',
        backend: 'openai_compatible',
        seconds: 0,
        attempts: 0,
        cached: true,
      });
      assert.equal(server!.requests.length, 1);
      assert.deepEqual(second.cache.stats, { hits: 1, misses: 0, corrupt: 0, writes: 0, writeErrors: 0 });
      const t = second.accounting.totals();
      assert.equal(t.cacheHits, 1);
      assert.equal(t.calls, 0);
      assert.equal(t.promptTokens, 0, 'a hit costs no tokens');
    });

    it('misses on every parameter change', async () => {
      const { c } = client({ allRoles: true });
      const changes: Array<Partial<ChatRequest>> = [
        {},
        { maxTokens: 999 },
        { temperature: 0.5 },
        { reasoningEffort: 'high' },
        { thinkingBudget: 1024 },
        { messages: [{ role: 'user', content: 'Q1' }] },
        { role: 'optimizer', stage: 'analyst', messages: [{ role: 'user', content: 'other' }] },
      ];
      for (const over of changes) assert.equal((await c.chat({ ...BASE_REQ, ...over })).cached, false);
      for (const over of changes) assert.equal((await c.chat({ ...BASE_REQ, ...over })).cached, true);
      assert.equal(server!.requests.length, changes.length);
      const other = client({ allRoles: true, model: 'gpt-4o-mini' });
      assert.equal((await other.c.chat(BASE_REQ)).cached, false, 'another model');
    });

    it('does not cache optimizer calls or sampled target calls by default', async () => {
      const { c } = client();
      await c.chat({ ...BASE_REQ, role: 'optimizer', stage: 'analyst' });
      await c.chat({ ...BASE_REQ, role: 'optimizer', stage: 'analyst' });
      await c.chat({ ...BASE_REQ, temperature: 1 });
      await c.chat({ ...BASE_REQ, temperature: 1 });
      assert.equal(server!.requests.length, 4);
    });

    it('ignores a corrupted entry, makes the real call and rewrites it', async () => {
      const warn: string[] = [];
      const { c, cache } = client({ warn });
      await c.chat(BASE_REQ);
      const path = cache.pathFor(
        cacheKey(
          new OpenAiBackend({ model: 'gpt-4o', apiKey: 'fake-cache-test-key-0004', baseUrl: server!.url }),
          BASE_REQ,
        ),
      );
      assert.equal(
        dirname(path),
        join(dir, path.slice(dir.length + 1, dir.length + 3)),
        'two-character fan-out',
      );
      writeFileSync(path, '{"format": 1, "key": "trunc');
      const again = await c.chat(BASE_REQ);
      assert.equal(again.cached, false);
      assert.equal(again.text, 'Q1#1');
      assert.equal(cache.stats.corrupt, 1);
      assert.match(warn[0], /^ignoring cache entry .*: not valid JSON; it will be rewritten$/);
      assert.equal(JSON.parse(readFileSync(path, 'utf8')).reply.text, 'Q1#1');
      const third = await c.chat(BASE_REQ);
      assert.equal(third.cached, true);
      assert.equal(third.text, 'Q1#1');

      // Valid JSON of the wrong shape, and an entry filed under another key, are ignored too.
      writeFileSync(path, JSON.stringify({ format: 1, key: 'x', reply: 'nope' }));
      assert.equal((await c.chat(BASE_REQ)).cached, false);
      const entry = JSON.parse(readFileSync(path, 'utf8'));
      writeFileSync(path, JSON.stringify({ ...entry, key: 'f'.repeat(64) }));
      assert.equal((await c.chat(BASE_REQ)).cached, false);
      assert.equal(cache.stats.corrupt, 3);
      assert.equal(server!.requests.length, 4);
    });

    it('warns once when entries cannot be written at all (a full disk), and logs the rest at debug', () => {
      const lines: string[] = [];
      const blocked = join(dir, 'a-file');
      writeFileSync(blocked, '');
      const cache = new ResponseCache(join(blocked, 'cache'), {
        logger: { log: (level, _c, m) => lines.push(`${level} ${m}`) },
      });
      const reply = { text: 'x', usage: { promptTokens: 1, completionTokens: 1 } };
      for (const key of ['a1', 'b2', 'c3']) cache.put(key.repeat(32), { provider: 'p', model: 'm' }, reply);
      assert.equal(cache.stats.writeErrors, 3);
      assert.deepEqual(
        lines.map((l) => l.split(' ')[0]),
        ['warn', 'debug', 'debug'],
      );
      assert.match(lines[0]!, /the run goes on without keeping its replies there/);
    });

    it('survives an unreadable entry that cannot be rewritten', async () => {
      const warn: string[] = [];
      const { c, cache } = client({ warn });
      const key = cacheKey(
        new OpenAiBackend({ model: 'gpt-4o', apiKey: 'fake-cache-test-key-0004', baseUrl: server!.url }),
        BASE_REQ,
      );
      // A directory where the file should be: reading fails (EISDIR) and so does the atomic rename.
      mkdirSync(cache.pathFor(key), { recursive: true });
      const result = await c.chat(BASE_REQ);
      assert.equal(result.text, 'Q1#0');
      assert.equal(cache.stats.corrupt, 1);
      assert.equal(cache.stats.writeErrors, 1);
      assert.equal(warn.length, 2);
      assert.match(warn[1], /^could not write cache entry /);
    });
  });
});
