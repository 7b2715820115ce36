import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { evalPrepared, type EvalSummary } from '../../../src/engine/evalRun';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import type { PreparedRun } from '../../../src/engine/run';
import { RUN_FILE, RunLayout } from '../../../src/engine/store/layout';
import type { EngineEvent } from '../../../src/protocol/events';
import type { LoopbackServer, RecordedRequest, Reply } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedTargetModel } from '../../support/loopback/scriptedModels';
import { BatchRuns, exampleTasks } from './batchHelpers';

/**
 * Eval-only keeps a ledger of its own: an evaluation stopped with answers in hand and resumed
 * counts every paid call once, and its summary and spend are the whole evaluation's, not the last
 * process's (the real `openai` SDK over the loopback server).
 */
describe('eval-only ledger across stop and resume', function () {
  this.timeout(60_000);
  let items: TaskItem[];
  let server: LoopbackServer;
  const runs = new BatchRuns();
  /** Task inputs the server holds back (so the first process is stopped with them unanswered). */
  const stall = new Set<string>();

  before(async () => {
    items = exampleTasks();
    const override = (req: RecordedRequest, stage: string): Reply | undefined => {
      if (stage !== 'target') return undefined;
      const held = [...stall].some((t) => req.rawBody.includes(JSON.stringify(t).slice(1, -1)));
      return held ? { kind: 'status', status: 500, message: 'slow', delayMs: 30_000 } : undefined;
    };
    server = await startOpenAiServer(scriptedModels(items, override));
  });
  after(async () => {
    await server.close();
    runs.cleanup();
  });

  const evaluate = (prepared: PreparedRun, stopAt?: number): Promise<EvalSummary> => {
    const controller = new AbortController();
    return evalPrepared(prepared, {
      skill: prepared.initialSkill,
      skillPath: prepared.skillPath,
      split: 'test',
      emit: (e: EngineEvent) => {
        if (stopAt !== undefined && e.type === 'rollout/progress' && e.done >= stopAt) controller.abort();
      },
      signal: controller.signal,
    });
  };

  it('counts each answered item once over two processes, in the summary and the ledger', async () => {
    const first = runs.prepare(server, []);
    const test = first.splits.test.unsealForEvaluation();
    assert.ok(test.length >= 3, 'the example has a test split of a few items');
    const held = test.slice(0, 2);
    for (const i of held) stall.add(i.input);
    await assert.rejects(evaluate(first, test.length - held.length), (err: unknown) =>
      SkillOptError.is(err, 'cancelled'),
    );
    stall.clear();
    const targetCalls = (): number =>
      server.requests.filter((r) => (r.body as { model?: string }).model === scriptedTargetModel).length;
    const sentBefore = targetCalls();

    const summary = await evaluate(runs.prepare(server, [], { outDir: first.outDir }));
    assert.equal(targetCalls() - sentBefore, held.length, 'only the unanswered items are asked again');
    assert.equal(summary.n_items, test.length);
    assert.equal(summary.model_calls, test.length, 'every answered item, over both processes');

    const ledger = readFileSync(new RunLayout(first.outDir).file(RUN_FILE.ledger), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerRow);
    const usage = ledger.filter((r) => r.kind === 'usage' && r.calls);
    assert.equal(
      usage.reduce((n, r) => n + (r.calls ?? 0), 0),
      test.length,
    );
    assert.equal(new Set(usage.map((r) => r.session)).size, 2, 'both processes wrote to it');
    assert.ok(usage.every((r) => r.phase === 'eval' && r.role === 'target'));
    const prompt = usage.reduce((n, r) => n + (r.prompt_tokens ?? 0), 0);
    const completion = usage.reduce((n, r) => n + (r.completion_tokens ?? 0), 0);
    assert.equal(summary.prompt_tokens, prompt);
    assert.equal(summary.completion_tokens, completion);
    // The example's target is priced at $2 / $8 per M tokens (BatchRuns).
    assert.ok(
      summary.dollars !== null && Math.abs(summary.dollars - (prompt * 2 + completion * 8) / 1e6) < 1e-12,
    );
  });

  it('stops at a cap of the evaluation, and a second try over the cap is refused before any call', async () => {
    const capped = ['limits.max_tokens=1'];
    const first = runs.prepare(server, capped);
    await assert.rejects(evaluate(first), (err: unknown) => SkillOptError.is(err, 'budget'));
    const sent = server.requests.length;
    await assert.rejects(
      evaluate(runs.prepare(server, capped, { outDir: first.outDir })),
      (err: unknown) => SkillOptError.is(err, 'budget') && /token budget of 1 reached/.test(err.problem),
    );
    assert.equal(server.requests.length, sent, 'nothing was sent over the cap');
  });
});
