import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import { anthropicMessages, startAnthropicServer } from '../../support/loopback/anthropicServer';
import {
  contentText,
  reply,
  type LoopbackServer,
  type RecordedRequest,
  type Reply,
} from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer } from '../../support/loopback/openaiServer';
import { tempDir } from '../train/helpers';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'evals');

interface Wire {
  name: string;
  start(script: Reply[]): Promise<LoopbackServer>;
  overrides(server: LoopbackServer): string[];
  /** The user message and the system prompt a recorded request carried. */
  read(req: RecordedRequest): { system: string; user: string; assistantTurns: number };
}

const WIRES: Wire[] = [
  {
    name: 'OpenAI Chat Completions',
    start: (script) => startOpenAiServer(script),
    overrides: (s) => ['model.optimizer_backend=openai', `model.optimizer_base_url=${s.url}`],
    read: (req) => {
      const m = openAiMessages(req);
      return {
        system: contentText(m.find((x) => x.role === 'system')?.content),
        user: contentText(m.find((x) => x.role === 'user')?.content),
        assistantTurns: m.filter((x) => x.role === 'assistant').length,
      };
    },
  },
  {
    name: 'Anthropic Messages',
    start: (script) => startAnthropicServer(script),
    overrides: (s) => ['model.optimizer_backend=anthropic', `model.optimizer_base_url=${s.origin}`],
    read: (req) => {
      const m = anthropicMessages(req);
      return {
        system: contentText((req.body as { system?: unknown }).system),
        user: contentText(m.find((x) => x.role === 'user')?.content),
        assistantTurns: m.filter((x) => x.role === 'assistant').length,
      };
    },
  },
];

/**
 * The judge through the real `openai` and `@anthropic-ai/sdk` SDKs over loopback HTTP: its own
 * client (evaluation.judge_model on the optimizer's backend), a structured reply with one re-ask,
 * every call in the accounting under the stage `judge`, and grades cached.
 */
for (const wire of WIRES) {
  describe(`the judge over ${wire.name} (loopback)`, function () {
    this.timeout(30_000);
    let server: LoopbackServer;
    let dir: ReturnType<typeof tempDir>;

    const good = JSON.stringify({
      grades: [{ index: 1, passed: false, evidence: 'It adds a sentence after the city.' }],
    });
    before(async () => {
      dir = tempDir('skillopt-judge-');
      server = await wire.start([
        reply('Here you go: {"grades": [{"index": 2, "passed": true}]}'),
        reply(good),
      ]);
    });
    after(async () => {
      await server.close();
      dir.cleanup();
    });

    const prepare = (): PreparedRun => {
      const config = join(dir.path, 'skillopt.yaml');
      writeFileSync(
        config,
        [
          'model:',
          '  target_backend: sim',
          '  optimizer: optimizer-model',
          'evaluation:',
          '  judge_model: judge-model',
          'env:',
          `  skill_init: ${join(fixtures, 'invoice-totals', 'SKILL.md')}`,
          `  data_path: ${join(fixtures, 'promptfoo', 'promptfooconfig.yaml')}`,
          '  split_ratio: "2:1:1"',
        ].join('\n'),
      );
      return prepareRun({
        configPath: config,
        outDir: join(dir.path, 'run'),
        dryRun: true,
        overrides: [
          'cache.enabled=true',
          `cache.dir=${join(dir.path, 'cache')}`,
          'limits.max_retries=0',
          ...wire.overrides(server),
        ],
        models: {
          keys: { openai: 'fake-judge-wire-openai-01', anthropic: 'fake-judge-wire-anthropic-02' },
          env: {},
        },
      });
    };

    it('grades an llm-rubric with the judge model, re-asking a reply that misses an expectation', async () => {
      const prepared = prepare();
      assert.equal(prepared.models.judge?.model, 'judge-model');
      assert.ok(
        prepared.warnings.some((w) =>
          /^judge: .*judge-model \(evaluation\.judge_model\) grades the expectations of 1 task/.test(w),
        ),
      );
      const item = [
        ...prepared.splits.train,
        ...prepared.splits.val,
        ...prepared.splits.test.unsealForEvaluation(),
      ].find((t) => t.id === 'test-2')!;
      const score = await prepared.scorer.score('Tokyo', item, undefined, {
        text: 'The capital is Tokyo, a big city.\n<answer>Tokyo</answer>',
        activity: 'exit 0 after 1.0 s; tools: Read(notes.md)',
      });
      // equals and not-icontains pass; the rubric fails on the judge's word.
      assert.equal(score.hard, 0);
      assert.equal(score.soft, 2 / 3);
      assert.match(
        score.reason,
        /failed: llm-rubric "Names the capital city only, without commentary" \(It adds a sentence after the city\.\)/,
      );

      assert.equal(server.requests.length, 2);
      const first = wire.read(server.requests[0]);
      const body = server.requests[0].body as {
        model?: string;
        max_tokens?: number;
        max_completion_tokens?: number;
      };
      assert.equal(body.model, 'judge-model');
      assert.equal(body.max_completion_tokens ?? body.max_tokens, 16384, "the optimizer's completion cap");
      assert.match(first.system, /\{"grades": \[/);
      assert.match(first.user, /## Task\nAnswer in as few words as possible: What is the capital of Japan\?/);
      assert.match(first.user, /## Reply\nThe capital is Tokyo, a big city\.\n<answer>Tokyo<\/answer>/);
      assert.match(first.user, /## Expectations \(1\)\n1\. Names the capital city only, without commentary$/);
      assert.match(
        first.user,
        /## What the agent did \(from its event stream\)\nexit 0 after 1\.0 s; tools: Read\(notes\.md\)\n\n## Expectations/,
      );
      const second = wire.read(server.requests[1]);
      assert.equal(second.assistantTurns, 1, 'the re-ask quotes the unusable reply');

      const judgeEntries = prepared.models.accounting.snapshot().entries.filter((e) => e.stage === 'judge');
      assert.equal(judgeEntries.length, 1);
      assert.equal(judgeEntries[0].model, 'judge-model');
      assert.equal(judgeEntries[0].calls, 2);
      assert.ok(judgeEntries[0].promptTokens > 0);

      // The same grade again is read from the cache, the unusable reply and the re-ask both: no request, two free hits.
      const again = await prepared.scorer.score('Tokyo', item, undefined, {
        text: 'The capital is Tokyo, a big city.\n<answer>Tokyo</answer>',
        activity: 'exit 0 after 1.0 s; tools: Read(notes.md)',
      });
      assert.deepEqual(again, score);
      assert.equal(server.requests.length, 2);
      const after = prepared.models.accounting.snapshot().entries.find((e) => e.stage === 'judge')!;
      assert.equal(after.cacheHits, 2);
      assert.equal(after.calls, 2);
    });
  });
}
