import assert from 'node:assert/strict';
import { STEP_FILE } from '../../../src/engine/store/layout';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import {
  deepReflect,
  pickDeepTrajectories,
  shouldDeepReflect,
  type DeepReflectArgs,
  type DeepReflectTranscript,
} from '../../../src/engine/train/deepReflect';
import type { RolloutResult } from '../../../src/protocol/records';
import { openAiMessages, startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedOptimizerModel } from '../../support/loopback/scriptedModels';
import { exampleConfig, tempDir } from './helpers';
import { contextFor } from './metaReflectContext';

const skill = readFileSync(join(__dirname, '..', '..', '..', 'examples', 'house-style', 'SKILL.md'), 'utf8');
const DATE_RULE =
  '- Write dates as YYYY-MM-DD and zero-pad the month and day to two digits (2024-03-05, not 2024-3-5).';
const MONEY_RULE = '- Prefix money amounts with the currency symbol and give two decimals, e.g. $15.75.';

function result(id: string, type: string, answer: string, expected: string, reason?: string): RolloutResult {
  const pass = answer === expected;
  return {
    id,
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0,
    task_type: type,
    task_description: `House-style task ${id}`,
    predicted_answer: answer,
    expected: [expected],
    n_turns: 1,
    response: `<answer>${answer}</answer>`,
    ...(pass
      ? {}
      : {
          fail_reason:
            reason ?? `EXACT=0: predicted ${JSON.stringify(answer)} but expected ${JSON.stringify(expected)}`,
        }),
  };
}

/** Five failures (three unpadded dates, two missing dollar signs) and three successes, one of them a date. */
const batch: RolloutResult[] = [
  result('d1', 'date', '2024-3-5', '2024-03-05'),
  result('d2', 'date', '2023-1-9', '2023-01-09'),
  result('d3', 'date', '2022-7-4', '2022-07-04'),
  result('m1', 'money', '15.75', '$15.75'),
  result('m2', 'money', '110.62', '$110.62'),
  result('d4', 'date', '2027-11-17', '2027-11-17'),
  result('n1', 'name', 'Lovelace, Ada', 'Lovelace, Ada'),
  result('c1', 'capital', 'Canberra', 'Canberra'),
];

function args(dir: string, over: Partial<DeepReflectArgs> = {}): DeepReflectArgs {
  return {
    skill,
    results: batch,
    seed: 11,
    failures: 4,
    successes: 2,
    rounds: 3,
    stepBufferText: '',
    dir,
    ...over,
  };
}

function transcript(dir: string): DeepReflectTranscript {
  return JSON.parse(readFileSync(join(dir, STEP_FILE.deepReflect), 'utf8')) as DeepReflectTranscript;
}

describe('deep reflection', () => {
  describe('shouldDeepReflect', () => {
    const mixed = [
      ...batch,
      result('x1', 'date', 'boom', '2020-01-01', 'target-error: timeout'),
      result('x2', 'name', 'x', 'y', 'no colon here'),
    ];

    it('measures the most common failure pattern over all results', () => {
      // 5 EXACT=0 failures among 10 results; the other two patterns have one each.
      assert.deepEqual(shouldDeepReflect(mixed, { threshold: 0.25, everyStep: false }), {
        run: true,
        pattern: 'EXACT=0',
        failureRate: 0.5,
      });
      assert.deepEqual(shouldDeepReflect(mixed, { threshold: 0.5, everyStep: false }), {
        run: true,
        pattern: 'EXACT=0',
        failureRate: 0.5,
      });
      assert.deepEqual(shouldDeepReflect(mixed, { threshold: 0.51, everyStep: false }), {
        run: false,
        pattern: 'EXACT=0',
        failureRate: 0.5,
      });
    });

    it('runs on every step when configured, but never without a failure', () => {
      assert.equal(shouldDeepReflect(mixed, { threshold: 1, everyStep: true }).run, true);
      const passing = batch.filter((r) => r.hard === 1);
      assert.deepEqual(shouldDeepReflect(passing, { threshold: 0, everyStep: true }), {
        run: false,
        failureRate: 0,
      });
      assert.deepEqual(shouldDeepReflect([], { threshold: 0, everyStep: true }), {
        run: false,
        failureRate: 0,
      });
    });

    it('groups failures without a colon by their whole reason', () => {
      const few = [result('a', 't', 'x', 'y', 'no colon here'), result('b', 't', 'y', 'y')];
      assert.deepEqual(shouldDeepReflect(few, { threshold: 0.5, everyStep: false }), {
        run: true,
        pattern: 'no colon here',
        failureRate: 0.5,
      });
    });
  });

  it('picks failures and successes in a seeded shuffle (golden values from Python random.Random)', () => {
    // random.Random(11).shuffle(ids) == ['d2','d1','d3','d4','m1','m2','n1','c1']
    const eleven = pickDeepTrajectories(batch, 11, 4, 2);
    assert.deepEqual(
      eleven.failed.map((r) => r.id),
      ['d2', 'd1', 'd3', 'm1'],
    );
    assert.deepEqual(
      eleven.succeeded.map((r) => r.id),
      ['d4', 'n1'],
    );
    // random.Random(7).shuffle(ids) == ['n1','c1','d3','m2','d1','m1','d2','d4']
    const seven = pickDeepTrajectories(batch, 7, 4, 2);
    assert.deepEqual(
      seven.failed.map((r) => r.id),
      ['d3', 'm2', 'd1', 'm1'],
    );
    assert.deepEqual(
      seven.succeeded.map((r) => r.id),
      ['n1', 'c1'],
    );
  });

  describe('with the sim optimizer', () => {
    let tmp: ReturnType<typeof tempDir>;
    let prepared: PreparedRun;
    before(() => {
      tmp = tempDir('skillopt-deep-');
      prepared = prepareRun({
        configPath: exampleConfig,
        outDir: join(tmp.path, 'run'),
        dryRun: true,
        overrides: ['cache.enabled=false'],
      });
    });
    after(() => tmp.cleanup());

    it('drops the hypothesis a success contradicts, stops when nothing changes, and returns a patch', async () => {
      const dir = join(tmp.path, 'contradicted');
      const { ctx, rec } = contextFor(prepared, dir);
      const patch = await deepReflect(ctx, args(dir));

      // Hypotheses, refinement (drops one), refinement (unchanged: stop early), patch: 4 calls, not 5.
      assert.equal(rec.requests.length, 4);
      assert.ok(rec.requests.every((r) => r.stage === 'deep_reflect' && r.role === 'optimizer'));
      assert.deepEqual(
        rec.requests.map((r) => r.messages.length),
        [2, 4, 6, 8],
      );
      assert.deepEqual(
        rec.requests.map((r) => r.messages.map((m) => m.role).join(',')),
        [
          'system,user',
          'system,user,assistant,user',
          'system,user,assistant,user,assistant,user',
          'system,user,assistant,user,assistant,user,assistant,user',
        ],
      );
      assert.deepEqual(rec.fallbacks, []);

      assert.ok(patch);
      assert.equal(patch.source_type, 'failure');
      assert.equal(patch.minibatch, 'deep_reflect');
      assert.deepEqual(patch.trajectory_ids, ['d2', 'd1', 'd3', 'm1', 'd4', 'n1']);
      assert.equal(patch.batch_size, 4);
      assert.deepEqual(patch.patch.edits, [
        { op: 'append', content: DATE_RULE },
        { op: 'append', content: MONEY_RULE },
      ]);
      assert.match(String(patch.patch.reasoning), /^\[simulated optimizer\]/);

      const t = transcript(dir);
      assert.deepEqual(
        t.rounds.map((r) => [r.round, r.kind, r.changed]),
        [
          [1, 'hypotheses', true],
          [2, 'refine', true],
          [3, 'refine', false],
        ],
      );
      assert.deepEqual(t.rounds[0].hypotheses, [
        {
          cause: 'unpadded-date: the failed answers share this habit and no rule in the skill corrects it',
          evidence_ids: ['d2', 'd1', 'd3'],
          confidence: 'high',
        },
        {
          cause:
            'missing-currency-symbol: the failed answers share this habit and no rule in the skill corrects it',
          evidence_ids: ['m1'],
          confidence: 'medium',
        },
        {
          cause: 'task-type: "date" tasks are harder for the model than the others',
          evidence_ids: ['d2', 'd1', 'd3'],
          confidence: 'low',
        },
      ]);
      assert.deepEqual(t.rounds[1].hypotheses, t.rounds[0].hypotheses.slice(0, 2));
      assert.match(t.rounds[1].reasoning, /contradicted by d4/);
      assert.equal(t.stop_reason, 'unchanged');
      assert.equal(t.outcome?.status, 'patch');
      assert.deepEqual(t.outcome?.patch, patch);
      assert.equal(t.messages.length, 9);
      assert.equal(t.messages.at(-1)?.role, 'assistant');
      assert.deepEqual(t.failure_ids, ['d2', 'd1', 'd3', 'm1']);
      assert.deepEqual(t.success_ids, ['d4', 'n1']);
      // The opening turn shows both groups of trajectories, by id, and no other result.
      const opening = t.messages[1].content;
      for (const id of ['d2', 'd1', 'd3', 'm1', 'd4', 'n1']) assert.ok(opening.includes(`(id=${id})`), id);
      assert.ok(!opening.includes('(id=m2)') && !opening.includes('(id=c1)'));
    });

    it('stops after one refinement when the first hypotheses already hold', async () => {
      const dir = join(tmp.path, 'stable');
      const { ctx, rec } = contextFor(prepared, dir);
      // Seed 7 shows no successful date task, so nothing contradicts the task-type hypothesis.
      const patch = await deepReflect(ctx, args(dir, { seed: 7 }));
      assert.equal(rec.requests.length, 3);
      const t = transcript(dir);
      assert.deepEqual(
        t.rounds.map((r) => r.changed),
        [true, false],
      );
      assert.equal(t.stop_reason, 'unchanged');
      assert.equal(t.rounds[1].hypotheses.length, 3);
      assert.deepEqual(patch?.patch.edits, [
        { op: 'append', content: DATE_RULE },
        { op: 'append', content: MONEY_RULE },
      ]);
    });

    it('honours the round limit', async () => {
      const dir = join(tmp.path, 'one-round');
      const { ctx, rec } = contextFor(prepared, dir);
      await deepReflect(ctx, args(dir, { rounds: 1 }));
      assert.equal(rec.requests.length, 3);
      const t = transcript(dir);
      assert.equal(t.stop_reason, 'max_rounds');
      assert.deepEqual(
        t.rounds.map((r) => r.changed),
        [true, true],
      );
    });

    it('reuses a saved transcript on resume without calling the model', async () => {
      const dir = join(tmp.path, 'resume');
      const first = contextFor(prepared, dir);
      const patch = await deepReflect(first.ctx, args(dir));
      assert.equal(first.rec.requests.length, 4);
      const second = contextFor(prepared, dir);
      const again = await deepReflect(second.ctx, args(dir));
      assert.equal(second.rec.requests.length, 0);
      assert.deepEqual(again, patch);
    });

    it('answers in the configured update mode and enforces the budget in code', async () => {
      const dir = join(tmp.path, 'suggestions');
      const { ctx } = contextFor(prepared, dir, undefined, { updateMode: 'rewrite_from_suggestions' });
      const patch = await deepReflect(ctx, args(dir));
      const items = patch?.patch.revise_suggestions as Array<{ type: string; instruction: string }>;
      assert.deepEqual(
        items.map((i) => [i.type, i.instruction]),
        [
          ['add_rule', DATE_RULE],
          ['add_rule', MONEY_RULE],
        ],
      );

      const over = join(tmp.path, 'over-budget');
      const edits = [1, 2, 3].map((n) => ({ op: 'append', content: `- Rule ${n}.` }));
      const scripted = contextFor(
        prepared,
        over,
        (req) =>
          req.messages.at(-1)?.content.startsWith('## Final Turn: Patch')
            ? JSON.stringify({ batch_size: 4, failure_summary: [], patch: { reasoning: 'r', edits } })
            : undefined,
        { learningRate: 1 },
      );
      const cut = await deepReflect(scripted.ctx, args(over));
      assert.deepEqual(cut?.patch.edits, [{ op: 'append', content: '- Rule 1.' }]);
    });

    it('records a fallback and returns null when the hypotheses reply stays unusable', async () => {
      const dir = join(tmp.path, 'bad-first');
      const { ctx, rec } = contextFor(prepared, dir, () => 'I think the dates are the problem.');
      const patch = await deepReflect(ctx, args(dir));
      assert.equal(patch, null);
      assert.equal(rec.requests.length, 2, 'one call and one re-ask');
      assert.equal(rec.fallbacks.length, 1);
      assert.equal(rec.fallbacks[0].stage, 'deep_reflect');
      assert.match(rec.fallbacks[0].reason, /^hypotheses turn: after one re-ask/);
      const t = transcript(dir);
      assert.equal(t.outcome?.status, 'fallback');
      assert.equal(t.outcome?.turn, 'hypotheses');
      assert.equal(t.outcome?.patch, null);
      // The recorded outcome is final: resuming does not ask again.
      const second = contextFor(prepared, dir);
      assert.equal(await deepReflect(second.ctx, args(dir)), null);
      assert.equal(second.rec.requests.length, 0);
    });

    it('keeps the earlier hypotheses and still patches when a refinement reply is unusable', async () => {
      const dir = join(tmp.path, 'bad-refine');
      const { ctx, rec } = contextFor(prepared, dir, (req) =>
        req.messages.some((m) => m.content.startsWith('## Refinement Round 1 of 3')) &&
        !req.messages.some((m) => m.content.startsWith('## Final Turn'))
          ? '{"hypotheses": [{"cause": ""}]}'
          : undefined,
      );
      const patch = await deepReflect(ctx, args(dir));
      assert.deepEqual(
        rec.fallbacks.map((f) => f.stage),
        ['deep_reflect'],
      );
      assert.match(rec.fallbacks[0].reason, /^refine turn: /);
      // hypotheses, refine + re-ask, patch
      assert.equal(rec.requests.length, 4);
      assert.deepEqual(
        rec.requests[3].messages.map((m) => m.role),
        ['system', 'user', 'assistant', 'user'],
      );
      const t = transcript(dir);
      assert.equal(t.stop_reason, 'refine_fallback');
      assert.equal(t.rounds.length, 1);
      assert.deepEqual(patch?.patch.edits, [
        { op: 'append', content: DATE_RULE },
        { op: 'append', content: MONEY_RULE },
      ]);
    });

    it('does not call the model when the batch has no failure', async () => {
      const dir = join(tmp.path, 'no-failures');
      const { ctx, rec } = contextFor(prepared, dir);
      const patch = await deepReflect(ctx, args(dir, { results: batch.filter((r) => r.hard === 1) }));
      assert.equal(patch, null);
      assert.equal(rec.requests.length, 0);
      assert.equal(transcript(dir).outcome?.status, 'no_failures');
    });
  });

  describe('over the OpenAI wire format (loopback)', function () {
    this.timeout(30_000);
    let server: LoopbackServer;
    let tmp: ReturnType<typeof tempDir>;
    const stages: string[] = [];

    before(async () => {
      tmp = tempDir('skillopt-deep-wire-');
      server = await startOpenAiServer(
        scriptedModels([], (_req, stage) => {
          stages.push(stage);
          return undefined;
        }),
      );
    });
    after(async () => {
      await server.close();
      tmp.cleanup();
    });

    it('runs the multi-turn conversation through the SDK', async () => {
      const prepared = prepareRun({
        configPath: exampleConfig,
        outDir: join(tmp.path, 'run'),
        dryRun: true,
        overrides: [
          'cache.enabled=false',
          'model.optimizer_backend=openai_compatible',
          `model.optimizer=${scriptedOptimizerModel}`,
          `model.optimizer_base_url=${server.url}`,
          'limits.max_retries=0',
        ],
      });
      const dir = join(tmp.path, 'step');
      const { ctx, rec } = contextFor(prepared, dir);
      const patch = await deepReflect(ctx, args(dir));
      assert.deepEqual(stages, ['deep_reflect', 'deep_reflect', 'deep_reflect', 'deep_reflect']);
      assert.equal(rec.requests.length, 4);
      assert.deepEqual(
        server.requests.map((r) => openAiMessages(r).length),
        [2, 4, 6, 8],
      );
      assert.deepEqual(patch?.patch.edits, [
        { op: 'append', content: DATE_RULE },
        { op: 'append', content: MONEY_RULE },
      ]);
      assert.match(String(patch?.patch.reasoning), /^\[scripted optimizer\]/);
      assert.ok(existsSync(join(dir, STEP_FILE.deepReflect)));
    });
  });
});
