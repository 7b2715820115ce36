import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { AnthropicBackend } from '../../../src/engine/llm/anthropic';
import { createModelClient } from '../../../src/engine/llm/client';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import { runRefineTurns } from '../../../src/engine/train/turns/loops';
import { refineStyleFor } from '../../../src/engine/train/turns/fromConfig';
import type { TargetCall } from '../../../src/engine/train/rolloutItem';
import { anthropicMessages, startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { LoopbackServer, RecordedRequest, Reply } from '../../support/loopback/core';
import { contentText } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer } from '../../support/loopback/openaiServer';
import { evaluateTrain, Scratch, trainConversations, trainRows } from './evalOnlyHelpers';

/**
 * env.max_turns above 1 on a chat target: the reference's refinement turns, sent as each of its
 * benchmarks sends them, through the real `openai` and `@anthropic-ai/sdk` SDKs over the loopback
 * servers, every turn paid once.
 */
const MODEL = 'loopback-refiner';
const USAGE = { promptTokens: 50, completionTokens: 5 };

/** [role, text] of every message a request carried, the system prompt first. */
function sent(req: RecordedRequest, wire: 'chat' | 'anthropic'): Array<[string, string]> {
  if (wire === 'chat') return openAiMessages(req).map((m) => [m.role, contentText(m.content)]);
  const system = contentText((req.body as { system?: unknown }).system);
  return [
    ['system', system],
    ...anthropicMessages(req).map((m): [string, string] => [m.role, contentText(m.content)]),
  ];
}

const ITEMS = [
  {
    id: 'q1',
    question: 'Which city is the capital of France?',
    context: '[DOC] Paris is the capital.',
    answers: ['Paris'],
    answer: 'Paris',
  },
  {
    id: 'q2',
    question: 'Which river flows through Rome?',
    context: '[DOC] The Tiber flows through Rome.',
    answers: ['Tiber'],
    answer: 'Tiber',
  },
];

describe('refinement turns (env.max_turns) over the real SDK wires', function () {
  this.timeout(60_000);
  const scratch = new Scratch();
  after(() => scratch.close());

  function prepare(
    server: LoopbackServer,
    wire: 'chat' | 'anthropic',
    extra: string[] = [],
    name = 'searchqa',
  ): PreparedRun {
    const d = { path: scratch.dir('skillopt-refine-') };
    for (const split of ['train', 'val', 'test']) {
      mkdirSync(join(d.path, 'split', split), { recursive: true });
      writeFileSync(
        join(d.path, 'split', split, 'items.json'),
        JSON.stringify(ITEMS.map((i) => ({ ...i, id: `${split}-${i.id}` }))),
      );
    }
    writeFileSync(
      join(d.path, 'SKILL.md'),
      '---\nname: qa\ndescription: Answer from the context.\n---\nQuote the context.\n',
    );
    const config = join(d.path, 'skillopt.yaml');
    writeFileSync(
      config,
      [
        'model:',
        '  optimizer_backend: openai_compatible',
        `  target_backend: ${wire === 'anthropic' ? 'anthropic' : 'openai'}`,
        '  optimizer: loopback-optimizer',
        `  target: ${MODEL}`,
        `  optimizer_base_url: ${server.url}`,
        `  target_base_url: ${wire === 'anthropic' ? server.origin : server.url}`,
        'env:',
        `  name: ${name}`,
        '  skill_init: SKILL.md',
        '  split_mode: split_dir',
        '  split_dir: split',
        '  max_turns: 3',
        ...(name === 'officeqa' ? ['  data_dirs: [split]'] : []),
        'cache:',
        '  enabled: false',
        'limits:',
        '  max_retries: 0',
      ].join('\n'),
    );
    return prepareRun({ configPath: config, outDir: join(d.path, 'run'), overrides: extra });
  }

  for (const wire of ['chat', 'anthropic'] as const) {
    it(`asks SearchQA's refinement with the previous reply only, until a later reply answers (${wire})`, async () => {
      // q1: answers at once, refined to Paris. q2: no answer on turn 2, so a third turn.
      const server = await (wire === 'chat' ? startOpenAiServer : startAnthropicServer)((req): Reply => {
        const msgs = sent(req, wire);
        const all = msgs.map(([, t]) => t).join('\n');
        const refining = msgs.length === 2 && /previous answer/.test(msgs[1][1]);
        if (all.includes('capital of France'))
          return { kind: 'reply', text: '<answer>Lyon</answer>', usage: USAGE };
        if (all.includes('river flows')) return { kind: 'reply', text: 'Maybe the Po.', usage: USAGE };
        if (refining && all.includes('Lyon'))
          return { kind: 'reply', text: 'Corrected: <answer>Paris</answer>', usage: USAGE };
        if (refining && all.includes('Maybe the Po.'))
          return { kind: 'reply', text: 'Still thinking.', usage: USAGE };
        return { kind: 'reply', text: '<answer>Tiber</answer>', usage: USAGE };
      });
      scratch.track(server);
      const prepared = prepare(server, wire);
      assert.ok(
        prepared.warnings.some((w) =>
          /env\.max_turns 3: up to 3 target calls per item.*searchqa rollout.*previous reply only/.test(w),
        ),
        prepared.warnings.join('\n'),
      );
      const summary = await evaluateTrain(prepared);
      assert.equal(summary.hard, 1, 'both right after refinement');
      assert.equal(server.requests.length, 5, 'q1 two turns, q2 three');
      assert.equal(summary.model_calls, 5);
      assert.equal(summary.prompt_tokens, 250, 'every turn in the spend');
      for (const req of server.requests.slice(0)) {
        const msgs = sent(req, wire);
        if (!/previous answer/.test(msgs.at(-1)![1])) continue;
        assert.equal(msgs.length, 2, 'the system prompt and the refinement only, as SearchQA sends it');
        assert.equal(msgs[0][0], 'system');
        assert.match(msgs[0][1], /## Skill\n[\s\S]*Quote the context\.$/);
        assert.doesNotMatch(msgs[1][1], /\[DOC\]|capital of France|river flows/);
      }
      const byId = new Map(trainRows(summary).map((r) => [r.id.replace(/^train-/, ''), r]));
      assert.equal(byId.get('q1')!.n_turns, 2);
      assert.equal(byId.get('q1')!.predicted_answer, 'Paris');
      assert.equal(byId.get('q2')!.n_turns, 3);
      assert.equal(byId.get('q2')!.response, '<answer>Tiber</answer>');
      assert.deepEqual(
        byId.get('q2')!.steps!.map((s) => s.reply),
        ['Maybe the Po.', 'Still thinking.', '<answer>Tiber</answer>'],
      );
      const conv = trainConversations(summary).find((c) =>
        JSON.stringify(c).includes('river flows'),
      ) as Array<{
        role?: string;
      }>;
      assert.deepEqual(
        conv.map((r) => r.role),
        ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'system'],
      );
    });
  }

  it("sends DocVQA's refinement with the task and the previous reply, and stops at the first answer", async () => {
    const server = await startOpenAiServer((req): Reply => {
      const n = openAiMessages(req).length;
      return { kind: 'reply', text: n === 2 ? 'It looks like 1993.' : '<answer>1993</answer>', usage: USAGE };
    });
    scratch.track(server);
    const client = createModelClient({
      role: 'target',
      backend: new OpenAiBackend({ model: MODEL, baseUrl: server.url }),
    });
    const messages = [
      { role: 'system' as const, content: 'system prompt' },
      { role: 'user' as const, content: 'What year is on the page?' },
    ];
    const call = { messages, req: { role: 'target', stage: 'eval', messages } } as unknown as TargetCall;
    const opts = { client, signal: new AbortController().signal, answerTag: 'answer' };
    const out = await runRefineTurns(call, { maxTurns: 3, style: refineStyleFor('docvqa') }, opts);
    assert.equal(out.turns, 2);
    assert.equal(out.text, '<answer>1993</answer>');
    assert.deepEqual(
      openAiMessages(server.requests[1]).map((m) => [m.role, contentText(m.content)]),
      [
        ['system', 'system prompt'],
        ['user', 'What year is on the page?'],
        ['assistant', 'It looks like 1993.'],
        [
          'user',
          'Look at the same image again carefully and answer once more, with the final answer in <answer>...</answer>.',
        ],
      ],
    );
    // LiveMath and DocVQA stop when the first reply answers; SearchQA always refines once.
    const anthropic = await startAnthropicServer([
      { kind: 'reply', text: '<answer>B</answer>', usage: USAGE },
    ]);
    scratch.track(anthropic);
    const claude = createModelClient({
      role: 'target',
      backend: new AnthropicBackend({ model: MODEL, baseUrl: anthropic.origin }),
    });
    const first = await runRefineTurns(
      call,
      { maxTurns: 3, style: refineStyleFor('livemathematicianbench') },
      { ...opts, client: claude },
    );
    assert.equal(first.turns, 1);
    assert.equal(anthropic.requests.length, 1);
  });

  it('leaves an item whose refinement call fails errored, and refuses batches and OfficeQA turns before spending', async () => {
    const server = await startOpenAiServer((req): Reply => {
      const msgs = sent(req, 'chat');
      if (/previous answer/.test(msgs.at(-1)![1])) return { kind: 'status', status: 400, message: 'nope' };
      return { kind: 'reply', text: '<answer>Paris</answer>', usage: USAGE };
    });
    scratch.track(server);
    const summary = await evaluateTrain(prepare(server, 'chat', ['limits.max_errored_share=1']));
    const results = trainRows(summary);
    assert.ok(results.every((r) => r.outcome === 'errored' && r.n_turns === 1));
    assert.equal(summary.model_calls, 2, 'the first turns, paid');
    const before = server.requests.length;
    assert.throws(
      () => prepare(server, 'chat', ['evaluation.batch_api=final']),
      (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'evaluation.batch_api',
    );
    assert.throws(
      () => prepare(server, 'chat', [], 'officeqa'),
      (e: unknown) =>
        SkillOptError.is(e, 'config') &&
        e.place.key === 'env.max_turns' &&
        /max_tool_turns/.test(e.place.fix ?? ''),
    );
    assert.equal(server.requests.length, before);
    // OfficeQA's keys on another benchmark are said to do nothing, never silently dropped.
    const other = prepare(server, 'chat', ['env.max_tool_turns=5', 'env.search_provider=duckduckgo']);
    assert.ok(
      other.warnings.includes(
        'env.max_tool_turns, env.search_provider: read only by the officeqa benchmark (env.name: officeqa), so they have no effect on this run',
      ),
      other.warnings.join('\n'),
    );
  });
});
