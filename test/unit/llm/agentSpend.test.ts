import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cancelledError, SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AgentRunError } from '../../../src/engine/llm/agents/errors';
import { makeTaskDirs, removeTaskDirs } from '../../../src/engine/llm/agents/isolation';
import { readFinishedRun } from '../../../src/engine/llm/agents/outcome';
import { PRESETS } from '../../../src/engine/llm/agents/presets';
import { parseClaude, parseCodexRollout } from '../../../src/engine/llm/agents/transcript';
import { createModelClient } from '../../../src/engine/llm/client';
import {
  spentBy,
  type BackendReply,
  type ChatBackend,
  type ChatRequest,
} from '../../../src/engine/llm/types';
import { processResult } from './processResult';
import { queuedClient } from './queuedBackend';

/**
 * An agent run that errored after the CLI had spent tokens still pays for them: the transcript
 * parsers read what a cut-short run reported, and the model client records it (the real CLIs do
 * this end to end in test/unit/agents/realClis.test.ts).
 */
const jsonl = (...events: unknown[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
const REQ: ChatRequest = { role: 'target', stage: 'rollout', messages: [{ role: 'user', content: 'Q?' }] };

describe('llm/agents: tokens of errored runs', () => {
  it('Claude Code cut short before its result event: the streamed usage of each reply, once per message', () => {
    const assistant = (id: string, block: unknown, usage: Record<string, number>): unknown => ({
      type: 'assistant',
      message: { id, content: [block], usage },
      parent_tool_use_id: null,
    });
    const t = parseClaude(
      jsonl(
        { type: 'system', subtype: 'init', model: 'm' },
        // One reply with two content blocks arrives as two events carrying the same usage.
        assistant('msg_1', { type: 'text', text: 'Loading.' }, { input_tokens: 100, output_tokens: 1 }),
        assistant(
          'msg_1',
          { type: 'tool_use', name: 'Skill', input: { skill: 'capitals' } },
          { input_tokens: 100, output_tokens: 1 },
        ),
        assistant(
          'msg_2',
          { type: 'text', text: 'Thinking' },
          {
            input_tokens: 20,
            cache_read_input_tokens: 300,
            cache_creation_input_tokens: 5,
            output_tokens: 1,
          },
        ),
      ),
      'capitals',
    );
    assert.equal(t.completed, false);
    assert.equal(t.answer, undefined);
    assert.deepEqual(t.usage, {
      inputTokens: 425,
      outputTokens: 2,
      cacheReadTokens: 300,
      cacheWriteTokens: 5,
    });
    // The result event, when it comes, is the total and wins.
    const done = parseClaude(
      jsonl(assistant('msg_1', { type: 'text', text: 'x' }, { input_tokens: 100, output_tokens: 1 }), {
        type: 'result',
        result: 'x',
        usage: { input_tokens: 100, output_tokens: 40 },
      }),
      'capitals',
    );
    assert.deepEqual(done.usage, {
      inputTokens: 100,
      outputTokens: 40,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it("Codex: the session file's last running total", () => {
    const count = (input: number, cached: number, output: number): unknown => ({
      type: 'event_msg',
      payload: {
        type: 'token_count',
        info: {
          total_token_usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output },
          last_token_usage: { input_tokens: 1, output_tokens: 1 },
        },
      },
    });
    assert.deepEqual(
      parseCodexRollout(
        jsonl(
          { type: 'session_meta', payload: {} },
          count(5000, 0, 50),
          { type: 'event_msg', payload: { type: 'token_count', info: null } },
          count(11000, 4000, 90),
        ),
      ),
      { inputTokens: 11000, outputTokens: 90, cacheReadTokens: 4000, cacheWriteTokens: 0 },
    );
    assert.equal(parseCodexRollout(jsonl({ type: 'session_meta', payload: {} })), undefined);
  });

  it('the model client records what failed attempts spent: on the final failure, and on a later success', async () => {
    const accounting = new Accounting();
    const { client, outcomes } = queuedClient(accounting);
    const crash = (promptTokens: number, completionTokens: number): AgentRunError =>
      new AgentRunError('crash', 'killed', { transient: true, spent: { promptTokens, completionTokens } });

    outcomes.push(
      crash(100, 10),
      new AgentRunError('timeout', 'no answer', { spent: { promptTokens: 50, completionTokens: 5 } }),
    );
    await assert.rejects(client.chat(REQ));
    let t = accounting.totals();
    assert.deepEqual([t.calls, t.failures, t.promptTokens, t.completionTokens], [0, 1, 150, 15]);

    outcomes.push(crash(30, 3), { text: 'ok', usage: { promptTokens: 7, completionTokens: 2 } });
    const reply = await client.chat(REQ);
    assert.equal(reply.text, 'ok');
    t = accounting.totals();
    assert.deepEqual(
      [t.calls, t.failures, t.retries, t.promptTokens, t.completionTokens],
      [1, 1, 2, 187, 20],
    );
  });

  it('a call the caller stops is cancelled at once, and what the run reports as it ends is paid, not failed', async () => {
    let end: (e: Error) => void = () => undefined;
    const backend: ChatBackend = {
      provider: 'command',
      model: 'agent',
      cacheParams: {},
      // Like an agent CLI: it ends only after its process exits, with what its transcript says it spent.
      call: () => new Promise<BackendReply>((_, reject) => (end = reject)),
    };
    const accounting = new Accounting();
    const client = createModelClient({ role: 'target', backend, accounting });
    const stop = new AbortController();
    const pending = client.chat(REQ, stop.signal);
    await new Promise((r) => setImmediate(r));
    stop.abort();
    await assert.rejects(pending, (e: unknown) => SkillOptError.is(e, 'cancelled'));
    const settled = accounting.settled(5_000);
    end(
      Object.assign(cancelledError('The target command'), {
        spent: { promptTokens: 900, completionTokens: 12 },
      }),
    );
    await settled;
    const t = accounting.totals();
    assert.deepEqual([t.calls, t.failures, t.promptTokens, t.completionTokens], [0, 0, 900, 12]);
  });

  it('an errored Claude Code run pays its provider prompt cache at the cache rates, like an answered one', () => {
    const dirs = makeTaskDirs(mkdtempSync(join(tmpdir(), 'skillopt-spend-')));
    try {
      const stdout = jsonl(
        { type: 'system', subtype: 'init', model: 'claude-x' },
        {
          type: 'assistant',
          parent_tool_use_id: null,
          message: {
            id: 'msg_1',
            content: [{ type: 'text', text: 'Reading.' }],
            usage: {
              input_tokens: 20,
              cache_read_input_tokens: 900,
              cache_creation_input_tokens: 40,
              output_tokens: 3,
            },
          },
        },
        { type: 'result', is_error: true, api_error_status: 400, result: 'API Error: 400 bad request' },
      );
      const finished = (out: string): Parameters<typeof readFinishedRun>[0] => ({
        run: processResult({ stdout: out, exitCode: 1 }),
        task: { taskId: 't1', skill: '# s', skillName: 'capitals', prompt: 'Q?' },
        prompt: 'Q?',
        dirs,
        skillFile: join(dirs.work, '.claude/skills/capitals/SKILL.md'),
        seeded: [],
        preset: PRESETS.claude,
        program: 'claude',
        label: 'Claude Code',
        model: 'claude-x',
        delivery: 'native',
      });
      assert.throws(
        () => readFinishedRun(finished(stdout)),
        (err: unknown) => {
          assert.ok(err instanceof AgentRunError);
          assert.deepEqual(spentBy(err), {
            promptTokens: 960,
            completionTokens: 3,
            cachedTokens: 900,
            cacheWriteTokens: 40,
          });
          return true;
        },
      );
    } finally {
      removeTaskDirs(dirs);
    }
  });
});
