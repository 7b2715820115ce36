import assert from 'node:assert/strict';
import { cancelledError, SkillOptError } from '../../../src/engine/errors';
import type { Logger } from '../../../src/engine/log';
import type { LogLevel } from '../../../src/protocol/vocabulary';
import { analystContract } from '../../../src/engine/llm/contracts/reflect';
import { rankingContract } from '../../../src/engine/llm/contracts/update';
import { reaskMessage, structuredCall } from '../../../src/engine/llm/structured';
import type { ChatRequest, ChatResult, ModelClient } from '../../../src/engine/llm/types';

/** A ModelClient that answers from a script and remembers every request. */
class ScriptedClient implements ModelClient {
  readonly role = 'optimizer' as const;
  readonly backend = 'scripted';
  readonly model = 'script-1';
  readonly requests: ChatRequest[] = [];
  constructor(private readonly replies: Array<string | Error>) {}

  chat(req: ChatRequest): Promise<ChatResult> {
    this.requests.push(req);
    const next = this.replies.shift();
    if (next === undefined) return Promise.reject(new Error('script exhausted'));
    if (next instanceof Error) return Promise.reject(next);
    return Promise.resolve({
      text: next,
      usage: { promptTokens: 10, completionTokens: 5 },
      backend: this.backend,
      model: this.model,
      seconds: 0,
      attempts: 1,
      cached: false,
    });
  }
}

class MemoryLogger implements Logger {
  readonly lines: string[] = [];
  log(level: LogLevel, component: string, message: string): void {
    this.lines.push(`${level} ${component} ${message}`);
  }
}

class Fallbacks {
  readonly records: Array<[string, string]> = [];
  recordFallback(stage: string, reason: string): void {
    this.records.push([stage, reason]);
  }
}

const request: ChatRequest = {
  role: 'optimizer',
  stage: 'ranking',
  messages: [
    { role: 'system', content: 'rank things' },
    { role: 'user', content: 'pool: ...' },
  ],
  maxTokens: 100,
};

describe('llm/structured structuredCall', () => {
  it('returns a valid first reply without re-asking', async () => {
    const client = new ScriptedClient(['```json\n{"reasoning": "r", "selected_indices": [1, 0]}\n```']);
    const out = await structuredCall(client, request, rankingContract());
    assert.equal(out.ok, true);
    assert.ok(out.ok);
    assert.deepEqual(out.value, { reasoning: 'r', selected_indices: [1, 0] });
    assert.equal(out.reasked, false);
    assert.equal(out.result.model, 'script-1');
    assert.equal(client.requests.length, 1);
  });

  it('re-asks once with the validation error and the expected shape', async () => {
    const bad = '{"reasoning": "r", "selected_indices": []}';
    const good = '{"reasoning": "r2", "selected_indices": [2]}';
    const client = new ScriptedClient([bad, good]);
    const logger = new MemoryLogger();
    const fallbacks = new Fallbacks();
    const out = await structuredCall(client, request, rankingContract(), { logger, accounting: fallbacks });
    assert.ok(out.ok);
    assert.deepEqual(out.value, { reasoning: 'r2', selected_indices: [2] });
    assert.equal(out.reasked, true);
    assert.equal(out.raw, good);
    assert.equal(client.requests.length, 2);
    const second = client.requests[1];
    assert.equal(second.stage, 'ranking');
    assert.equal(second.maxTokens, 100);
    assert.deepEqual(second.messages.slice(0, 3), [...request.messages, { role: 'assistant', content: bad }]);
    const error = 'does not match the expected shape: selected_indices: select at least one index';
    assert.deepEqual(second.messages[3], { role: 'user', content: reaskMessage(rankingContract(), error) });
    assert.match(second.messages[3].content, /select at least one index/);
    assert.match(second.messages[3].content, /"selected_indices": \[int, \.\.\.\]/);
    assert.deepEqual(fallbacks.records, []);
    assert.deepEqual(logger.lines, [
      `info llm ranking (ranking): reply unusable (${error}); asking once more`,
      'info llm ranking (ranking): the second reply was usable',
    ]);
  });

  it('gives up after one re-ask, records the fallback and logs it', async () => {
    const client = new ScriptedClient([
      'I think items 1 and 2.',
      '{"patch": {"reasoning": "r", "edits": [{"op": "replace", "content": "x"}]}}',
    ]);
    const logger = new MemoryLogger();
    const fallbacks = new Fallbacks();
    const out = await structuredCall(
      client,
      { ...request, stage: 'analyst' },
      analystContract('patch', 'failure'),
      { logger, accounting: fallbacks },
    );
    const error =
      'after one re-ask: does not match the expected shape: patch.edits[0].target: op "replace" needs a non-empty target (exact text to replace) (first reply: no JSON object found)';
    assert.deepEqual(out, {
      ok: false,
      error,
      raw: '{"patch": {"reasoning": "r", "edits": [{"op": "replace", "content": "x"}]}}',
      reasked: true,
    });
    assert.deepEqual(fallbacks.records, [['analyst', error]]);
    assert.equal(logger.lines.at(-1), `warn llm analyst (analyst): falling back: ${error}`);
    assert.equal(client.requests.length, 2);
  });

  it('lets transport errors propagate without a re-ask', async () => {
    const client = new ScriptedClient([new SkillOptError('llm', 'provider down')]);
    const fallbacks = new Fallbacks();
    await assert.rejects(
      structuredCall(client, request, rankingContract(), { accounting: fallbacks }),
      (e: unknown) => SkillOptError.is(e, 'llm'),
    );
    assert.equal(client.requests.length, 1);
    assert.deepEqual(fallbacks.records, []);
  });

  it('lets a cancellation during the re-ask propagate', async () => {
    const client = new ScriptedClient(['not json', cancelledError('Call')]);
    const fallbacks = new Fallbacks();
    await assert.rejects(
      structuredCall(client, request, rankingContract(), { accounting: fallbacks }),
      (e: unknown) => SkillOptError.is(e, 'cancelled'),
    );
    assert.equal(client.requests.length, 2);
    assert.deepEqual(fallbacks.records, []);
  });

  it('can skip the re-ask to reproduce the reference', async () => {
    const client = new ScriptedClient(['no json here', '{"selected_indices": [0]}']);
    const fallbacks = new Fallbacks();
    const out = await structuredCall(client, request, rankingContract(), {
      accounting: fallbacks,
      reask: false,
    });
    assert.deepEqual(out, { ok: false, error: 'no JSON object found', raw: 'no json here', reasked: false });
    assert.deepEqual(fallbacks.records, [['ranking', 'no JSON object found']]);
    assert.equal(client.requests.length, 1);
  });

  it('quotes at most four issues in the error', async () => {
    const edits = Array.from({ length: 6 }, () => ({ op: 'delete' }));
    const reply = JSON.stringify({ patch: { reasoning: '', edits } });
    const client = new ScriptedClient([reply, reply]);
    const out = await structuredCall(
      client,
      { ...request, stage: 'analyst' },
      analystContract('patch', 'failure'),
    );
    assert.equal(out.ok, false);
    assert.ok(!out.ok);
    assert.match(out.error, /patch\.edits\[3\]\.target: [^;]*; and 2 more \(first reply/);
  });
});
