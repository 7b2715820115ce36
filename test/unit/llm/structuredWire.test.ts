import assert from 'node:assert/strict';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AnthropicBackend } from '../../../src/engine/llm/anthropic';
import { createModelClient } from '../../../src/engine/llm/client';
import { analystContract } from '../../../src/engine/llm/contracts/reflect';
import { CONSOLIDATE_SYSTEM, consolidateUserMessage } from '../../../src/engine/prompts/skillAware';
import { replaceAppendix } from '../../../src/engine/skill/document';
import type { RunContext } from '../../../src/engine/train/context';
import { defaultTrainSettings } from '../../../src/engine/train/settings';
import { flushAppendix } from '../../../src/engine/train/step/appendix';
import { rankingContract } from '../../../src/engine/llm/contracts/update';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import { reaskMessage, structuredCall } from '../../../src/engine/llm/structured';
import type { ChatBackend, ChatMessage, ChatRequest, ModelClient } from '../../../src/engine/llm/types';
import type { Logger } from '../../../src/engine/log';
import { anthropicMessages, startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { LoopbackServer, RecordedRequest, Reply } from '../../support/loopback/core';
import { contentText, reply } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer } from '../../support/loopback/openaiServer';

/** One wire format: how to start its server, build its backend, and read a request back as chat messages. */
interface Wire {
  name: string;
  start(script: Reply[]): Promise<LoopbackServer>;
  backend(url: string): ChatBackend;
  /** Truncation as the wire reports it. */
  cutAtCap: string;
  /** The conversation a recorded request carried, system prompt first. */
  conversation(req: RecordedRequest): ChatMessage[];
}

const asMessage = (m: { role: string; content: unknown }): ChatMessage => ({
  role: m.role as ChatMessage['role'],
  content: contentText(m.content),
});

const WIRES: Wire[] = [
  {
    name: 'OpenAI Chat Completions',
    start: (script) => startOpenAiServer(script),
    backend: (url) =>
      new OpenAiBackend({ model: 'gpt-4o', apiKey: 'fake-test-structured-wire-0004', baseUrl: url }),
    cutAtCap: 'length',
    conversation: (req) => openAiMessages(req).map(asMessage),
  },
  {
    name: 'Anthropic Messages',
    start: (script) => startAnthropicServer(script),
    backend: (url) =>
      new AnthropicBackend({
        model: 'claude-x',
        apiKey: 'fake-anthropic-test-structured-wire-0005',
        baseUrl: url,
      }),
    cutAtCap: 'max_tokens',
    conversation: (req) => {
      const system = (req.body as { system?: unknown } | undefined)?.system;
      const head: ChatMessage[] =
        system === undefined ? [] : [{ role: 'system', content: contentText(system) }];
      return [...head, ...anthropicMessages(req).map(asMessage)];
    },
  },
];

function request(stage: ChatRequest['stage']): ChatRequest {
  return {
    role: 'optimizer',
    stage,
    messages: [
      { role: 'system', content: 'Rank the candidate edits.' },
      { role: 'user', content: 'Pool: [0] add a rule, [1] drop a rule, [2] reword.' },
    ],
    maxTokens: 100,
  };
}

for (const wire of WIRES) {
  describe(`llm/structured over the ${wire.name} wire format (real SDK, loopback HTTP)`, () => {
    let server: LoopbackServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    async function setup(script: Reply[]): Promise<{
      server: LoopbackServer;
      client: ModelClient;
      accounting: Accounting;
      logs: string[];
      logger: Logger;
    }> {
      server = await wire.start(script);
      const accounting = new Accounting();
      const logs: string[] = [];
      const logger: Logger = {
        log: (level, component, message) => logs.push(`${level} ${component} ${message}`),
      };
      const client = createModelClient({
        role: 'optimizer',
        backend: wire.backend(server.url),
        accounting,
        retry: { maxAttempts: 3, random: () => 0 },
        sleep: () => Promise.resolve(),
      });
      return { server, client, accounting, logs, logger };
    }

    it('re-asks once when the JSON is malformed, then uses the second reply', async () => {
      const bad = '```json\n{"reasoning": "the rule matters most", "selected_indices": [0 1]}\n```';
      const good = '{"reasoning": "the rule matters most", "selected_indices": [0, 1]}';
      const h = await setup([reply(bad), reply(good), reply('never asked')]);
      const out = await structuredCall(h.client, request('ranking'), rankingContract(), {
        accounting: h.accounting,
        logger: h.logger,
      });
      assert.ok(out.ok);
      assert.deepEqual(out.value, { reasoning: 'the rule matters most', selected_indices: [0, 1] });
      assert.equal(out.reasked, true);
      assert.equal(out.raw, good);
      assert.equal(out.result.attempts, 1, 'a re-ask is a new call, not a transport retry');
      assert.equal(h.server.requests.length, 2);

      const error =
        'invalid JSON: expected "," or "]" after an array element but found character "1" at line 2 col 63';
      const [first, second] = h.server.requests.map((r) => wire.conversation(r));
      assert.deepEqual(first, request('ranking').messages);
      assert.deepEqual(second, [
        ...request('ranking').messages,
        { role: 'assistant', content: bad },
        { role: 'user', content: reaskMessage(rankingContract(), error) },
      ]);
      assert.deepEqual(h.logs, [
        `info llm ranking (ranking): reply unusable (${error}); asking once more`,
        'info llm ranking (ranking): the second reply was usable',
      ]);
      const snapshot = h.accounting.snapshot();
      assert.deepEqual(snapshot.fallbacks, {}, 'a usable second reply is no fallback');
      assert.equal(snapshot.entries.length, 1);
      assert.equal(snapshot.entries[0].stage, 'ranking');
      assert.equal(snapshot.entries[0].calls, 2);
      assert.equal(snapshot.entries[0].retries, 0);
    });

    it('skill-aware: sends the consolidation prompt, reads notes back, and takes a lapse-only analyst reply', async () => {
      const h = await setup([
        reply(
          '{"appendix_notes": ["Zero-pad month and day (existing date rule).", {"note": "Name the unit."}]}',
        ),
        reply('```json\n{"batch_size": 2, "appendix_notes": "Apply the existing date rule."}\n```'),
        reply('{"batch_size": 2, "appendix_notes": "Apply the existing date rule."}'),
        reply('{"batch_size": 2}'),
      ]);
      const fallbacks: string[] = [];
      const ctx = {
        settings: defaultTrainSettings,
        optimizer: h.client,
        signal: new AbortController().signal,
        logger: h.logger,
        recordFallback: (stage: string) => fallbacks.push(stage),
      } as unknown as RunContext;
      const skill = replaceAppendix('# S\n\n- Dates are YYYY-MM-DD.\n', ['Pad dates.', 'Name units.']);
      const out = await flushAppendix(ctx, skill, ['pad the dates'], 2);
      assert.deepEqual(out, {
        step_notes: ['pad the dates'],
        appendix_after: ['Zero-pad month and day (existing date rule).', 'Name the unit.'],
        n_added: 1,
        consolidated_from: 3,
      });
      assert.deepEqual(wire.conversation(h.server.requests[0]), [
        { role: 'system', content: CONSOLIDATE_SYSTEM },
        { role: 'user', content: consolidateUserMessage(['Pad dates.', 'Name units.', 'pad the dates']) },
      ]);

      const analyst: ChatRequest = {
        role: 'optimizer',
        stage: 'analyst',
        messages: [
          { role: 'system', content: 'Analyse the failures.' },
          { role: 'user', content: '## Failed Trajectories (2 total)' },
        ],
        maxTokens: 100,
      };
      const aware = await structuredCall(
        h.client,
        analyst,
        analystContract('patch', 'failure', { appendixNotes: true }),
        { logger: h.logger },
      );
      assert.ok(aware.ok);
      assert.deepEqual(aware.value.appendix_notes, ['Apply the existing date rule.']);
      assert.equal(aware.value.patch, undefined);
      // Without skill-aware reflection a reply with no patch is unusable (re-asked, then a fallback).
      const plain = await structuredCall(h.client, analyst, analystContract('patch', 'failure'), {
        logger: h.logger,
      });
      assert.equal(plain.ok, false);
      assert.equal(h.server.requests.length, 4);
      assert.deepEqual(fallbacks, []);
    });

    it('re-asks once when the reply was cut off at the token cap', async () => {
      const cut = '{"reasoning": "the rule matters most", "selected_indices": [0, ';
      const h = await setup([
        { kind: 'reply', text: cut, finishReason: wire.cutAtCap },
        reply('{"reasoning": "short", "selected_indices": [0]}'),
      ]);
      const out = await structuredCall(h.client, request('ranking'), rankingContract(), {
        accounting: h.accounting,
      });
      assert.ok(out.ok);
      assert.deepEqual(out.value, { reasoning: 'short', selected_indices: [0] });
      assert.equal(out.reasked, true);
      assert.equal(h.server.requests.length, 2);
      const reask = wire.conversation(h.server.requests[1]).at(-1);
      assert.deepEqual(reask, {
        role: 'user',
        content: reaskMessage(
          rankingContract(),
          'unterminated JSON object starting at line 1 col 1 (the reply may have been cut off)',
        ),
      });
      assert.deepEqual(h.accounting.snapshot().fallbacks, {});
    });

    it('falls back when the reply is still bad after the re-ask, and records the fallback', async () => {
      const first = 'Edit 1 looks right to me; I would keep it.';
      const second = '{"patch": {"reasoning": "r", "edits": [{"op": "replace", "content": "x"}]}}';
      const h = await setup([reply(first), reply(second), reply('{"patch": {"edits": []}} never asked')]);
      const seen: number[] = [];
      h.accounting.onChange(() => seen.push(h.accounting.totals().fallbacks));

      const out = await structuredCall(h.client, request('analyst'), analystContract('patch', 'failure'), {
        accounting: h.accounting,
        logger: h.logger,
      });

      const error =
        'after one re-ask: does not match the expected shape: patch.edits[0].target: op "replace" needs a non-empty target (exact text to replace) (first reply: no JSON object found)';
      assert.deepEqual(out, { ok: false, error, raw: second, reasked: true });
      assert.equal(h.server.requests.length, 2, 'exactly one re-ask reaches the server');
      assert.equal(h.server.answered, 2);
      const reask = wire.conversation(h.server.requests[1]);
      assert.deepEqual(reask.slice(-2), [
        { role: 'assistant', content: first },
        {
          role: 'user',
          content: reaskMessage(analystContract('patch', 'failure'), 'no JSON object found'),
        },
      ]);

      // Recorded where the engine keeps it: the run's Accounting, per stage, with the reason.
      const snapshot = h.accounting.snapshot();
      assert.deepEqual(snapshot.fallbacks, { analyst: 1 });
      assert.equal(snapshot.totals.fallbacks, 1);
      assert.deepEqual(h.accounting.recentFallbacks(), [{ stage: 'analyst', reason: error }]);
      assert.equal(snapshot.entries.length, 1);
      assert.equal(snapshot.entries[0].stage, 'analyst');
      assert.equal(snapshot.entries[0].calls, 2, 'both calls are paid for and counted');
      assert.equal(snapshot.entries[0].failures, 0, 'a fallback is not a transport failure');
      assert.equal(seen.at(-1), 1, 'listeners hear about the fallback');
      // And logged, never silent.
      assert.deepEqual(h.logs, [
        'info llm analyst (analyst): reply unusable (no JSON object found); asking once more',
        `warn llm analyst (analyst): falling back: ${error}`,
      ]);
    });

    it('keeps transport retries apart from the re-ask: two calls, four requests, one fallback', async () => {
      const h = await setup([
        { kind: 'truncated', cut: 'body' },
        reply('not json'),
        { kind: 'status', status: 503, message: 'busy' },
        reply('still not json'),
        reply('never asked'),
      ]);
      const out = await structuredCall(h.client, request('ranking'), rankingContract(), {
        accounting: h.accounting,
      });
      assert.deepEqual(out, {
        ok: false,
        error: 'after one re-ask: no JSON object found (first reply: no JSON object found)',
        raw: 'still not json',
        reasked: true,
      });
      assert.equal(h.server.requests.length, 4, 'two calls, each retried once on the wire');
      const snapshot = h.accounting.snapshot();
      assert.deepEqual(snapshot.fallbacks, { ranking: 1 });
      assert.equal(snapshot.entries[0].calls, 2);
      assert.equal(snapshot.entries[0].retries, 2);
    });
  });
}
