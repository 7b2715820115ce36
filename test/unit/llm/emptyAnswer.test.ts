import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { agentEnv, emptyAnswerRetries } from '../../../src/engine/llm/agents/envFallbacks';
import { CommandBackend } from '../../../src/engine/llm/command';
import { defaultConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import type { ChatRequest } from '../../../src/engine/llm/types';

/**
 * An agent run with an empty final answer is run again with a reminder, as the reference does
 * (EXEC_EMPTY_RESPONSE_RETRIES, default 1), and every run is paid.
 */
const fakeAgent = resolve(__dirname, '../../fixtures/fakecli/fakeAgent.cjs');
const REQ: ChatRequest = {
  role: 'target',
  stage: 'rollout',
  messages: [{ role: 'user', content: 'Capital of France?' }],
  task: { taskId: 't1', skill: '# s', skillName: 'capitals', prompt: 'Capital of France?' },
};

describe('llm/agents: an empty answer is run again', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'skillopt-empty-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const run = async (empties: number, retries: number) => {
    const counter = join(root, 'runs.txt');
    const backend = new CommandBackend({
      command: [process.execPath, fakeAgent, 'empty-then', counter, String(empties), '{prompt}'],
      trusted: true,
      workspaceRoot: join(root, 'agents'),
      emptyAnswerRetries: retries,
    });
    const reply = await backend.call(REQ, new AbortController().signal);
    return { reply, runs: readFileSync(counter, 'utf8').trim().split('\n') };
  };

  it('runs it once more with a reminder, and the reply pays for both runs', async () => {
    const once = await run(0, 1);
    assert.deepEqual(once.runs, ['first']);
    rmSync(join(root, 'runs.txt'));
    const again = await run(1, 1);
    assert.match(again.reply.text, /PARIS/);
    assert.deepEqual(again.runs, ['first', 'reminded']);
    assert.equal(again.reply.trace?.emptyAnswerReruns, 1);
    // Two runs of the same prompt (plus the reminder): more than one run's tokens.
    assert.ok(
      again.reply.usage.promptTokens > once.reply.usage.promptTokens,
      JSON.stringify(again.reply.usage),
    );
  });

  it('gives up after the set number of runs again, and 0 never runs again', async () => {
    const stays = await run(5, 2);
    assert.equal(stays.reply.text.trim(), '');
    assert.deepEqual(stays.runs, ['first', 'reminded', 'reminded']);
    rmSync(join(root, 'runs.txt'));
    const never = await run(5, 0);
    assert.deepEqual(never.runs, ['first']);
    assert.equal(never.reply.trace?.emptyAnswerReruns, undefined);
  });

  it('reads EXEC_EMPTY_RESPONSE_RETRIES (default 1, as the reference) and refuses a value that is not a count', () => {
    assert.equal(emptyAnswerRetries({}), 1);
    assert.equal(emptyAnswerRetries({ EXEC_EMPTY_RESPONSE_RETRIES: '0' }), 0);
    assert.equal(emptyAnswerRetries({ EXEC_EMPTY_RESPONSE_RETRIES: '3' }), 3);
    assert.throws(
      () => emptyAnswerRetries({ EXEC_EMPTY_RESPONSE_RETRIES: 'two' }),
      (e: unknown) => SkillOptError.is(e, 'config') && /not a whole number/.test(e.message),
    );
    const { notices } = agentEnv(defaultConfig().model, 'codex', { EXEC_EMPTY_RESPONSE_RETRIES: '2' });
    assert.deepEqual(notices, [
      'EXEC_EMPTY_RESPONSE_RETRIES=2: an agent run with an empty answer is run again up to 2 time(s), with a reminder to answer, as in the reference (default 1)',
    ]);
  });
});
