import assert from 'node:assert/strict';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import { RUN_FILE, RunLayout } from '../../../src/engine/store/layout';
import type { RolloutResult } from '../../../src/protocol/records';
import { anthropicMessages } from '../../support/loopback/anthropicServer';
import type { LoopbackServer, RecordedRequest, Reply, Script } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer } from '../../support/loopback/openaiServer';
import { responsesInput } from '../../support/loopback/responsesServer';
import { startWireServer } from '../../support/loopback/agentModel';
import { renderTrajectory } from '../../../src/engine/train/trajectories';
import { evaluateTrain, Scratch, trainConversations, trainRows } from './evalOnlyHelpers';

/**
 * OfficeQA as the reference runs it offline, through the real `openai` and `@anthropic-ai/sdk` SDKs
 * over the loopback servers: the oracle pages and candidate files in the task, glob/read/grep as
 * function calls on each wire (Chat Completions tool_calls, Responses function_call items, Messages
 * tool_use blocks), every turn in the ledger, the tool calls in conversation.json and the rows.
 */
const fixture = join(__dirname, '..', '..', 'fixtures', 'benchmarks', 'officeqa-docs');
const root = realpathSync(join(fixture, 'docs', 'transformed'));
const MODEL = 'loopback-officeqa';
const USAGE = { promptTokens: 100, completionTokens: 10 };

type Wire = 'chat' | 'responses' | 'anthropic';

/** What a request of each wire carries: the task text, the tool results so far, the declared tools. */
function seen(wire: Wire, req: RecordedRequest): { task: string; results: string[]; tools: string[] } {
  const body = req.body as { tools?: Array<{ name?: string; function?: { name: string } }> };
  const tools = (body.tools ?? []).map((t) => t.function?.name ?? t.name ?? '');
  const text = (c: unknown): string =>
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? c.map((b: { text?: string }) => b.text ?? '').join('')
        : '';
  if (wire === 'chat') {
    const msgs = openAiMessages(req) as Array<{ role: string; content: unknown }>;
    return {
      task: text(msgs.find((m) => m.role === 'user')?.content),
      results: msgs.filter((m) => m.role === 'tool').map((m) => text(m.content)),
      tools,
    };
  }
  if (wire === 'responses') {
    const items = responsesInput(req);
    return {
      task: text(items.find((i) => i.role === 'user')?.content),
      results: items.filter((i) => i.type === 'function_call_output').map((i) => String(i.output)),
      tools,
    };
  }
  const msgs = anthropicMessages(req);
  const blocks = msgs.flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Array<{ type: string; content?: unknown }>) : [],
  );
  return {
    task: text(msgs[0]?.content),
    results: blocks.filter((b) => b.type === 'tool_result').map((b) => text(b.content)),
    tools,
  };
}

const GOLD: Record<string, { file: string; grep: string; answer: string }> = {
  'net deficit': { file: 'treasury_bulletin_1944_01.txt', grep: 'deficit', answer: '55,897' },
  'tax receipts': { file: 'older/treasury_bulletin_1942_07.txt', grep: 'series E', answer: '12165' },
  'average interest': { file: 'treasury_bulletin_1950_02.txt', grep: 'percent', answer: '2.207' },
};

/** A model that greps, reads, then answers: three turns per item, each reply scripted on the wire. */
function researcher(wire: Wire, onTurn?: (req: RecordedRequest, turn: number) => Reply | undefined): Script {
  return (req) => {
    const s = seen(wire, req);
    const key = Object.keys(GOLD).find((k) => s.task.includes(k))!;
    const gold = GOLD[key];
    const turn = s.results.length + 1;
    const forced = onTurn?.(req, turn);
    if (forced) return forced;
    const path = join(root, gold.file);
    if (turn === 1)
      return {
        kind: 'reply',
        usage: USAGE,
        toolCalls: [{ name: 'grep', input: { pattern: gold.grep, path } }],
      };
    if (turn === 2)
      return {
        kind: 'reply',
        text: 'Reading around the match.',
        usage: USAGE,
        toolCalls: [{ name: 'read', input: { path, start: 1, limit: 5 } }],
      };
    return { kind: 'reply', text: `The figure is <answer>${gold.answer}</answer>`, usage: USAGE };
  };
}

describe('officeqa: the document tool loop over the real SDK wires', function () {
  this.timeout(60_000);
  const scratch = new Scratch();
  after(() => scratch.close());

  function prepare(server: LoopbackServer, wire: Wire | 'sim', extra: string[] = []): PreparedRun {
    const d = { path: scratch.dir('skillopt-officeqa-') };
    writeFileSync(
      join(d.path, 'SKILL.md'),
      '---\nname: officeqa\ndescription: Answer Treasury bulletin questions.\n---\nQuote figures exactly.\n',
    );
    const config = join(d.path, 'skillopt.yaml');
    const backend = wire === 'anthropic' ? 'anthropic' : wire === 'sim' ? 'sim' : 'openai';
    writeFileSync(
      config,
      [
        'model:',
        '  optimizer_backend: openai_compatible',
        `  target_backend: ${backend}`,
        '  optimizer: loopback-optimizer',
        `  target: ${MODEL}`,
        `  optimizer_base_url: ${server.url}`,
        `  target_base_url: ${wire === 'anthropic' ? server.origin : server.url}`,
        ...(wire === 'responses' ? ['  openai_api: responses'] : []),
        'env:',
        '  name: officeqa',
        '  skill_init: SKILL.md',
        '  split_mode: split_dir',
        `  split_dir: ${join(fixture, 'split')}`,
        '  data_dirs:',
        `    - ${join(fixture, 'docs')}`,
        '  max_tool_turns: 4',
        'cache:',
        '  enabled: false',
        'limits:',
        '  max_retries: 0',
        'prices:',
        `  ${MODEL}:`,
        '    input_per_mtok: 2',
        '    output_per_mtok: 8',
      ].join('\n'),
    );
    return prepareRun({ configPath: config, outDir: join(d.path, 'run'), overrides: extra });
  }

  for (const wire of ['chat', 'responses', 'anthropic'] as const) {
    it(`answers every item through grep and read on the ${wire} wire, each turn paid once`, async () => {
      const server = await startWireServer(wire, researcher(wire));
      scratch.track(server);
      const prepared = prepare(server, wire);
      assert.ok(
        prepared.warnings.some((w) =>
          /officeqa: offline.*up to 4 target calls per item with glob\/read\/grep/.test(w),
        ),
        prepared.warnings.join('\n'),
      );
      const summary = await evaluateTrain(prepared);
      assert.equal(summary.n_items, 3);
      assert.equal(summary.hard, 1, 'every item answered right from its documents');
      assert.equal(server.requests.length, 9, 'three turns per item');
      assert.equal(summary.model_calls, 9);
      assert.equal(summary.prompt_tokens, 900);
      assert.equal(summary.completion_tokens, 90);
      const ledger = readFileSync(new RunLayout(prepared.outDir).file(RUN_FILE.ledger), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LedgerRow)
        .filter((r) => r.kind === 'usage' && r.calls);
      assert.equal(
        ledger.reduce((n, r) => n + (r.calls ?? 0), 0),
        9,
        'every turn in the ledger once',
      );

      for (const req of server.requests) assert.deepEqual(seen(wire, req).tools, ['glob', 'read', 'grep']);
      const first = server.requests.map((r) => seen(wire, r)).find((s) => s.task.includes('net deficit'))!;
      assert.match(first.task, /## Oracle pages[\s\S]*\| 1943 \| 22,282 \| 55,897 \\\| est\. \|/);
      assert.ok(
        first.task.includes(`- ${join(root, 'treasury_bulletin_1944_01.txt')}`),
        'the candidate file',
      );
      assert.match(first.task, /## Source pages\n- https:\/\/fraser.stlouisfed.org\/.*\?page=18/);
      const later = server.requests.map((r) => seen(wire, r)).filter((s) => s.task.includes('net deficit'));
      assert.ok(
        later.some(
          (s) => s.results[0] === '7: Fiscal year    Total receipts    Total expenditures    Net deficit',
        ),
        'the grep observation went back as the tool result',
      );

      const results = trainRows(summary);
      for (const r of results) {
        assert.equal(r.n_turns, 3);
        assert.deepEqual(
          r.steps?.filter((s) => s.cmd).map((s) => s.cmd!.split('(')[0]),
          ['grep', 'read'],
        );
      }
      // The analysts read each turn: the action, what it returned, the replies.
      const shown = renderTrajectory(
        results.find((r) => r.task_description.includes('net deficit'))!,
        1,
        2000,
      );
      assert.match(
        shown,
        /turns \(3\):\n\[turn 1 action\] grep\(pattern="deficit"[^\n]*\n\[obs\] 7: Fiscal year/,
      );
      assert.match(shown, /\[turn 2 reply\] Reading around the match\.\n\[turn 2 action\] read\(/);
      const conv = trainConversations(summary).find((c) => JSON.stringify(c).includes('net deficit'))!;
      const calls = conv.filter((r) => (r as { type?: string }).type === 'tool_call') as Array<{
        cmd: string;
        obs: string;
      }>;
      assert.equal(calls.length, 2);
      assert.match(calls[0].cmd, /^grep\(pattern="deficit"/);
      assert.match(calls[1].obs, /^TREASURY BULLETIN\nJanuary 1944/);
    });
  }

  it('an item whose call fails is errored (its paid turns kept); one that never answers is a failure', async () => {
    const server = await startOpenAiServer(
      researcher('chat', (req, turn) => {
        const task = seen('chat', req).task;
        if (task.includes('tax receipts') && turn === 2)
          return { kind: 'status', status: 400, message: 'bad request' };
        if (task.includes('average interest'))
          return { kind: 'reply', usage: USAGE, toolCalls: [{ name: 'glob', input: { pattern: '*' } }] };
        return undefined;
      }),
    );
    scratch.track(server);
    const summary = await evaluateTrain(prepare(server, 'chat'));
    const byQuestion = (q: string): RolloutResult =>
      trainRows(summary).find((r) => r.task_description.includes(q))!;
    const errored = byQuestion('tax receipts');
    assert.equal(errored.outcome, 'errored');
    assert.equal(errored.n_turns, 1, 'the turn before the failure');
    const silent = byQuestion('average interest');
    assert.equal(silent.outcome, undefined);
    assert.equal(silent.hard, 0);
    assert.equal(silent.predicted_answer, '');
    assert.match(silent.fail_reason ?? '', /env\.max_tool_turns 4\) ran out/);
    assert.equal(silent.n_turns, 4);
    assert.deepEqual(summary.errored, [errored.id]);
    assert.equal(summary.n_items, 3);
    const conv = trainConversations(summary).find((c) => JSON.stringify(c).includes('tax receipts'))!;
    assert.ok(
      conv.some((r) => (r as { type?: string }).type === 'tool_call'),
      'the paid turn stays readable',
    );
    assert.match(JSON.stringify(conv.at(-1)), /TARGET ERROR/);
    // 3 (answered) + 1 (errored item's first turn) + 4 (budget spent) paid calls.
    assert.equal(summary.model_calls, 8);
  });

  it('refuses before any call: web search modes, a target without function calls, a provider batch', async () => {
    const server = await startOpenAiServer(researcher('chat'));
    scratch.track(server);
    const refused = (extra: string[], key: string, wire: Wire | 'sim' = 'chat'): void =>
      assert.throws(
        () => prepare(server, wire, extra),
        (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === key && !!e.place.fix,
      );
    refused(['env.search_mode=custom'], 'env.search_mode');
    refused(['env.search_mode=azure_search'], 'env.search_mode');
    refused(['env.search_mode=online'], 'env.search_mode');
    refused([], 'model.target_backend', 'sim');
    refused(['env.data_dirs=[]'], 'env.data_dirs');
    refused(['evaluation.batch_api=final'], 'evaluation.batch_api');
    assert.equal(server.requests.length, 0);
    // Without local tools any chat target answers in one call, from the oracle pages.
    const plain = prepare(server, 'sim', ['env.use_local_tools=false']);
    assert.equal(plain.turns?.tools, undefined);
    assert.match(plain.turns!.taskMessage!(plain.splits.train[0]), /## Oracle pages/);
  });
});
