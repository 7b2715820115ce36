import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { evalIdentity } from '../../../src/engine/evalIdentity';
import { evalPrepared, type EvalSummary } from '../../../src/engine/evalRun';
import type { PreparedRun } from '../../../src/engine/run';
import { writeJsonAtomic } from '../../../src/engine/store/atomic';
import { EVAL_FILE, RunLayout, evalPaths } from '../../../src/engine/store/layout';
import type { EngineEvent } from '../../../src/protocol/events';
import type { RolloutResult } from '../../../src/protocol/records';
import { AnthropicBatchApi, OpenAiBatchApi } from '../../support/loopback/batchApis';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { LoopbackServer, RecordedRequest, Reply } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels } from '../../support/loopback/scriptedModels';
import { BatchRuns, batchPrice, exampleTasks } from './batchHelpers';
import { tempDir } from './helpers';

/**
 * `skillopt eval --batch` and the final test evaluation through the real SDKs' batch surfaces over
 * the loopback servers: the same scores as the synchronous path, a stop in the middle picked up
 * from the same batch, items the batch did not answer asked again alone, usage at the batch price.
 */
describe('batch evaluations over the loopback batch APIs', function () {
  this.timeout(60_000);
  let items: TaskItem[];
  const runs = new BatchRuns();
  let servers: LoopbackServer[];
  /** Task inputs whose batch request fails (answered when asked alone), and ones that always fail. */
  const failInBatch = new Set<string>();
  const failAlways = new Set<string>();

  before(() => {
    items = exampleTasks();
  });
  beforeEach(() => {
    servers = [];
    failInBatch.clear();
    failAlways.clear();
  });
  afterEach(async () => {
    for (const s of servers) await s.close();
    runs.cleanup();
  });

  const override = (req: RecordedRequest, stage: string): Reply | undefined => {
    if (stage !== 'target') return undefined;
    const has = (t: string): boolean => req.rawBody.includes(JSON.stringify(t).slice(1, -1));
    if ([...failAlways].some(has)) return { kind: 'status', status: 400, message: 'refused' };
    // Batch items reach the script with index -1; the same request sent alone has a real index.
    if (req.index === -1 && [...failInBatch].some(has))
      return { kind: 'status', status: 500, message: 'batch worker failed' };
    return undefined;
  };

  async function openAi(api?: OpenAiBatchApi): Promise<LoopbackServer> {
    const server = await startOpenAiServer(
      scriptedModels(items, override),
      api ? { routes: api.routes } : {},
    );
    servers.push(server);
    return server;
  }

  const prepare = (
    server: LoopbackServer,
    extra: string[],
    outDir?: string,
    backend: 'openai' | 'anthropic' = 'openai',
  ): PreparedRun => runs.prepare(server, extra, { ...(outDir ? { outDir } : {}), backend });

  async function evaluate(
    prepared: PreparedRun,
    abortWhen?: (e: EngineEvent) => boolean,
  ): Promise<{ summary: EvalSummary; events: EngineEvent[] }> {
    const events: EngineEvent[] = [];
    const controller = new AbortController();
    const summary = await evalPrepared(prepared, {
      skill: prepared.initialSkill,
      skillPath: prepared.skillPath,
      split: 'test',
      emit: (e) => {
        events.push(e);
        if (abortWhen?.(e)) controller.abort();
      },
      signal: controller.signal,
    });
    return { summary, events };
  }

  const scores = (s: EvalSummary): unknown => ({
    hard: s.hard,
    soft: s.soft,
    by_type: s.by_type,
    failing: s.failing,
    errored: s.errored,
    n: s.n_items,
  });

  const results = (p: PreparedRun): RolloutResult[] =>
    readFileSync(evalPaths(new RunLayout(p.outDir).evalOnlyDir('test')).results, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RolloutResult);

  it('scores eval --batch through OpenAI files + batches exactly as the synchronous path, at half price', async () => {
    const sync = await evaluate(prepare(await openAi(), ['model.target_supports_batch=true']));
    const api = new OpenAiBatchApi({ pollsToEnd: 3 });
    const server = await openAi(api);
    const prepared = prepare(server, ['evaluation.batch_api=final', 'model.target_supports_batch=true']);
    const batch = await evaluate(prepared);

    assert.deepEqual(scores(batch.summary), scores(sync.summary));
    assert.ok(batch.summary.n_items > 3);
    // Every target call went through one batch; none was sent alone.
    assert.equal(api.batches.size, 1);
    assert.equal(api.items.length, batch.summary.n_items);
    assert.equal(server.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 0);
    const progress = batch.events.filter((e) => e.type === 'batch/progress');
    assert.deepEqual(
      progress.map((e) => e.detail),
      ['validating', 'in_progress', 'in_progress', 'completed'],
    );
    // The run folder names the batch, so a restart finds it.
    const state = JSON.parse(
      readFileSync(evalPaths(new RunLayout(prepared.outDir).evalOnlyDir('test')).batch, 'utf8'),
    ) as { batch_id: string; items: Record<string, string> };
    assert.equal(state.batch_id, [...api.batches.keys()][0]);
    assert.equal(Object.keys(state.items).length, batch.summary.n_items);

    // Usage is recorded once per item, at half the configured price.
    const rows = prepared.models.accounting.snapshot().entries.filter((e) => e.stage === 'eval');
    assert.deepEqual(
      rows.map((r) => r.provider),
      ['openai_compatible:batch'],
    );
    const [row] = rows;
    assert.equal(row.calls, batch.summary.n_items);
    assert.ok(Math.abs((row.dollars ?? NaN) - batchPrice(row.promptTokens, row.completionTokens)) < 1e-12);
  });

  it('picks up the same batch after a stop in the middle, and pays for it once', async () => {
    const sync = await evaluate(prepare(await openAi(), []));
    const api = new OpenAiBatchApi({ pollsToEnd: 5 });
    const server = await openAi(api);
    const args = ['evaluation.batch_api=final', 'model.target_supports_batch=true'];
    const first = prepare(server, args);
    await assert.rejects(
      evaluate(first, (e) => e.type === 'batch/progress' && e.detail === 'in_progress'),
      (err: unknown) =>
        SkillOptError.is(err, 'cancelled') &&
        /left running/.test(err.message) &&
        /without paying twice/.test(err.message),
    );
    assert.equal(api.cancelRequests.length, 0, 'a stop leaves the batch to be collected');
    assert.equal(existsSync(join(first.outDir, 'eval_summary.json')), false);

    const again = prepare(server, args, first.outDir);
    const resumed = await evaluate(again);
    assert.equal(api.batches.size, 1, 'the restart polled the same batch instead of sending a new one');
    assert.ok(resumed.events.some((e) => e.type === 'batch/progress' && e.resumed));
    assert.deepEqual(scores(resumed.summary), scores(sync.summary));
    assert.equal(results(again).length, resumed.summary.n_items);
    const paid = again.models.accounting.snapshot().entries.filter((e) => e.stage === 'eval');
    assert.equal(
      paid.reduce((n, e) => n + e.calls, 0),
      resumed.summary.n_items,
    );
  });

  it('stops at the time cap while it waits on a batch that does not end, leaving the batch to be collected', async () => {
    const api = new OpenAiBatchApi({ pollsToEnd: 1_000_000 });
    const server = await openAi(api);
    const prepared = prepare(server, [
      'evaluation.batch_api=final',
      'model.target_supports_batch=true',
      'limits.max_wall_time_s=1',
    ]);
    await assert.rejects(evaluate(prepared), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'budget'), String(err));
      assert.match(err.message, /time/);
      return true;
    });
    assert.equal(api.batches.size, 1);
    assert.equal(api.cancelRequests.length, 0, 'the batch is left for a resume to collect');
  });

  /** Runs the test evaluation until the process "dies"; the folder keeps an intent and no batch id. */
  async function crashOnCreate(first: PreparedRun, dies: AbortController): Promise<PreparedRun> {
    await assert.rejects(
      evalPrepared(first, {
        skill: first.initialSkill,
        skillPath: first.skillPath,
        split: 'test',
        emit: () => undefined,
        signal: dies.signal,
      }),
      (err: unknown) => SkillOptError.is(err, 'cancelled'),
    );
    const pending = JSON.parse(readFileSync(batchState(first), 'utf8')) as BatchStateFile;
    assert.equal(pending.batch_id, undefined);
    assert.ok(pending.submission);
    return first;
  }

  type BatchStateFile = { batch_id?: string; submission?: string };
  const batchState = (p: PreparedRun): string => evalPaths(new RunLayout(p.outDir).evalOnlyDir('test')).batch;

  it('finds a batch whose id a crash kept from being written, instead of sending it again', async () => {
    const api = new OpenAiBatchApi({ pollsToEnd: 1 });
    const dies = new AbortController();
    const server = await startOpenAiServer(scriptedModels(items, override), {
      routes: async (req, answer) => {
        const out = await api.routes(req, answer);
        // The batch now exists at the provider, but the process that sent it dies before the reply.
        if (req.method === 'POST' && req.path === '/v1/batches') dies.abort();
        return out;
      },
    });
    servers.push(server);
    const args = ['evaluation.batch_api=final', 'model.target_supports_batch=true'];
    const first = await crashOnCreate(prepare(server, args), dies);
    const statePath = batchState(first);
    assert.equal(api.batches.size, 1);

    const again = await evaluate(prepare(server, args, first.outDir));
    assert.equal(api.batches.size, 1, 'the lost batch was found by its tag, not sent again');
    assert.equal(again.summary.errored, undefined);
    assert.ok(again.events.some((e) => e.type === 'batch/progress' && e.resumed));
    assert.equal(
      (JSON.parse(readFileSync(statePath, 'utf8')) as { batch_id?: string }).batch_id,
      [...api.batches.keys()][0],
    );
  });

  it('answers from the response cache what it holds, and keeps batch replies in it', async () => {
    const api = new OpenAiBatchApi({ pollsToEnd: 1 });
    const server = await openAi(api);
    const cacheDir = tempDir('skillopt-batch-cache-');
    try {
      const args = [
        'evaluation.batch_api=final',
        'model.target_supports_batch=true',
        'cache.enabled=true',
        `cache.dir=${cacheDir.path}`,
      ];
      const first = await evaluate(prepare(server, args));
      assert.equal(first.summary.cache_hits, 0);
      const again = await evaluate(prepare(server, args));
      assert.equal(api.batches.size, 1, 'nothing left to send: every item was in the cache');
      assert.equal(again.summary.cache_hits, again.summary.n_items);
      assert.equal(again.summary.model_calls, 0);
      assert.deepEqual(scores(again.summary), scores(first.summary));
    } finally {
      cacheDir.cleanup();
    }
  });

  it('never reuses a batch sent for other requests: it is cancelled and a new one sent', async () => {
    const api = new OpenAiBatchApi({ pollsToEnd: 5 });
    const server = await openAi(api);
    const args = ['evaluation.batch_api=final', 'model.target_supports_batch=true'];
    const first = prepare(server, args);
    await assert.rejects(
      evaluate(first, (e) => e.type === 'batch/progress'),
      (err: unknown) => SkillOptError.is(err, 'cancelled'),
    );
    const again = prepare(server, args, first.outDir);
    const events: EngineEvent[] = [];
    const skill = `${again.initialSkill}\n- Answer briefly.\n`;
    // The folder's own check refuses another skill (evalIdentity.test.ts); the batch's guard must
    // hold without it, as in a training run's final test evaluation: the record is made to match.
    writeJsonAtomic(
      new RunLayout(first.outDir).file(EVAL_FILE.identity),
      evalIdentity(again, {
        skill,
        skillPath: again.skillPath,
        split: 'test',
        items: again.splits.test.unsealForEvaluation(),
      }),
    );
    await evalPrepared(again, {
      skill,
      skillPath: again.skillPath,
      split: 'test',
      emit: (e) => events.push(e),
      signal: new AbortController().signal,
    });
    assert.equal(api.batches.size, 2);
    assert.deepEqual(api.cancelRequests, [[...api.batches.keys()][0]]);
    assert.ok(events.every((e) => e.type !== 'batch/progress' || !e.resumed));
  });

  it('asks items the batch did not answer again alone; ones that still fail are errored, not zero', async () => {
    const test = prepare(await openAi(), []).splits.test.unsealForEvaluation();
    const api = new OpenAiBatchApi({ pollsToEnd: 1, expire: (id) => id.startsWith('item-0-') });
    const server = await openAi(api);
    failInBatch.add(test[1].input);
    failAlways.add(test[2].input);
    const prepared = prepare(server, ['evaluation.batch_api=final', 'model.target_supports_batch=true']);
    const { summary, events } = await evaluate(prepared);

    const ended = events.filter((e) => e.type === 'batch/progress').at(-1);
    assert.equal(ended?.type === 'batch/progress' && ended.failed, 3);
    const alone = server.requests.filter((r) => r.path.endsWith('/chat/completions'));
    // Items 0 (expired) and 1 (failed in the batch) answer alone; item 2 is refused again (a 400 is final).
    assert.equal(alone.length, 3);
    assert.deepEqual(summary.errored, [test[2].id]);
    const rows = results(prepared);
    const erroredRow = rows.find((r) => r.id === test[2].id)!;
    assert.equal(erroredRow.outcome, 'errored');
    assert.equal(erroredRow.error_kind, 'bad_request');
    assert.ok(!summary.failing.includes(test[2].id));
    assert.ok(
      rows.filter((r) => r.id === test[0].id || r.id === test[1].id).every((r) => r.outcome !== 'errored'),
    );
    const byProvider = new Map(
      prepared.models.accounting
        .snapshot()
        .entries.filter((e) => e.stage === 'eval')
        .map((e) => [e.provider, e.calls]),
    );
    assert.deepEqual(Object.fromEntries(byProvider), {
      'openai_compatible:batch': summary.n_items - 3,
      openai_compatible: 2,
    });
  });

  it('scores eval --batch through Anthropic Message Batches exactly as the synchronous path', async () => {
    const api = new AnthropicBatchApi({ pollsToEnd: 2 });
    const server = await startAnthropicServer(scriptedModels(items, override), { routes: api.routes });
    servers.push(server);
    const sync = await evaluate(prepare(server, [], undefined, 'anthropic'));
    const syncCalls = server.requests.length;
    const batch = await evaluate(prepare(server, ['evaluation.batch_api=final'], undefined, 'anthropic'));
    assert.deepEqual(scores(batch.summary), scores(sync.summary));
    assert.equal(api.batches.size, 1);
    assert.equal(api.items.length, batch.summary.n_items);
    assert.equal(server.requests.slice(syncCalls).filter((r) => r.path === '/v1/messages').length, 0);
    assert.deepEqual(
      batch.events.filter((e) => e.type === 'batch/progress').map((e) => e.detail),
      ['in_progress', 'in_progress', 'ended'],
    );
  });

  it('picks up the same Anthropic message batch after a stop in the middle', async () => {
    const api = new AnthropicBatchApi({ pollsToEnd: 4 });
    const server = await startAnthropicServer(scriptedModels(items, override), { routes: api.routes });
    servers.push(server);
    const sync = await evaluate(prepare(server, [], undefined, 'anthropic'));
    const args = ['evaluation.batch_api=final'];
    const first = prepare(server, args, undefined, 'anthropic');
    await assert.rejects(
      evaluate(first, (e) => e.type === 'batch/progress'),
      (err: unknown) => SkillOptError.is(err, 'cancelled'),
    );
    const resumed = await evaluate(prepare(server, args, first.outDir, 'anthropic'));
    assert.equal(api.batches.size, 1);
    assert.deepEqual(scores(resumed.summary), scores(sync.summary));
  });

  /**
   * An Anthropic server whose Message Batches create ends the process that sent it: after the
   * batch exists (`reaches`), or before it reaches the provider.
   */
  async function anthropicDyingOnCreate(
    api: AnthropicBatchApi,
    reaches: boolean,
  ): Promise<{ server: LoopbackServer; dies: AbortController }> {
    const dies = new AbortController();
    let armed = true;
    const server = await startAnthropicServer(scriptedModels(items, override), {
      routes: async (req, answer) => {
        const creates = armed && req.method === 'POST' && req.path === '/v1/messages/batches';
        if (creates) armed = false;
        if (creates && !reaches) {
          dies.abort();
          return { status: 503, body: { type: 'error', error: { type: 'overloaded_error', message: 'x' } } };
        }
        const out = await api.routes(req, answer);
        if (creates) dies.abort();
        return out;
      },
    });
    servers.push(server);
    return { server, dies };
  }

  it('finds an Anthropic message batch whose id a crash kept from being written, instead of sending it again', async () => {
    const api = new AnthropicBatchApi({ pollsToEnd: 1 });
    const { server, dies } = await anthropicDyingOnCreate(api, true);
    const sync = await evaluate(prepare(server, [], undefined, 'anthropic'));
    const first = await crashOnCreate(
      prepare(server, ['evaluation.batch_api=final'], undefined, 'anthropic'),
      dies,
    );
    assert.equal(api.batches.size, 1);

    const again = await evaluate(prepare(server, ['evaluation.batch_api=final'], first.outDir, 'anthropic'));
    assert.equal(api.batches.size, 1, 'the lost batch was found by its time and size, not sent again');
    assert.ok(again.events.some((e) => e.type === 'batch/progress' && e.resumed));
    assert.deepEqual(scores(again.summary), scores(sync.summary));
    const state = JSON.parse(readFileSync(batchState(first), 'utf8')) as BatchStateFile;
    assert.equal(state.batch_id, [...api.batches.keys()][0]);
    // Every custom id carries the submission's tag, which is how its results prove whose they are.
    const fragment = state.submission!.replace(/-/g, '').slice(0, 12);
    assert.ok(api.items.every((i) => i.customId.endsWith(`-${fragment}`)));
  });

  it('refuses to guess between Anthropic batches that could be the lost one, and collects the one named', async () => {
    const api = new AnthropicBatchApi({ pollsToEnd: 1 });
    const { server, dies } = await anthropicDyingOnCreate(api, true);
    const first = await crashOnCreate(
      prepare(server, ['evaluation.batch_api=final'], undefined, 'anthropic'),
      dies,
    );
    const [lost] = api.batches.keys();
    // Another evaluation of the same size, in another folder, sends its batch meanwhile.
    const other = await evaluate(prepare(server, ['evaluation.batch_api=final'], undefined, 'anthropic'));
    const foreign = [...api.batches.keys()][1];
    assert.ok(foreign);

    const again = prepare(server, ['evaluation.batch_api=final'], first.outDir, 'anthropic');
    await assert.rejects(evaluate(again), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'llm'));
      assert.match(err.message, new RegExp(`could be any of 2 batches \\(${foreign}, ${lost}\\)`));
      assert.match(
        err.place.fix ?? '',
        /write the right one's id as "batch_id" in .*batch.*or delete that file/,
      );
      return true;
    });
    assert.equal(api.batches.size, 2, 'nothing sent while it could not tell');
    const path = batchState(first);
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), batch_id: lost }));
    const named = await evaluate(prepare(server, ['evaluation.batch_api=final'], first.outDir, 'anthropic'));
    assert.equal(api.batches.size, 2);
    assert.deepEqual(scores(named.summary), scores(other.summary));
  });

  it('sends its own batch when the only Anthropic batch found after a crash answered other requests', async () => {
    const api = new AnthropicBatchApi({ pollsToEnd: 1 });
    const { server, dies } = await anthropicDyingOnCreate(api, false);
    const first = await crashOnCreate(
      prepare(server, ['evaluation.batch_api=final'], undefined, 'anthropic'),
      dies,
    );
    assert.equal(api.batches.size, 0, 'the send never reached the provider');
    const other = await evaluate(prepare(server, ['evaluation.batch_api=final'], undefined, 'anthropic'));
    assert.equal(api.batches.size, 1);

    const again = await evaluate(prepare(server, ['evaluation.batch_api=final'], first.outDir, 'anthropic'));
    assert.equal(
      api.batches.size,
      2,
      'the other folder’s batch was checked by its custom ids, then its own sent',
    );
    assert.deepEqual(scores(again.summary), scores(other.summary));
    assert.equal(
      (JSON.parse(readFileSync(batchState(first), 'utf8')) as BatchStateFile).batch_id,
      [...api.batches.keys()][1],
    );
    // The foreign batch's answers were paid by the other folder, not counted here twice.
    const paid = again.summary.model_calls;
    assert.equal(paid, again.summary.n_items);
  });

  it('refuses batch for a target without a batch API before any call', async () => {
    const server = await openAi();
    assert.throws(
      () => prepare(server, ['evaluation.batch_api=final']),
      (err: unknown) =>
        SkillOptError.is(err, 'config') &&
        err.place.key === 'evaluation.batch_api' &&
        /target_supports_batch/.test(err.place.fix ?? ''),
    );
    assert.throws(
      () => prepare(server, ['model.target_backend=sim', 'evaluation.batch_api=final']),
      (err: unknown) => SkillOptError.is(err, 'config') && /sim target has no batch API/.test(err.message),
    );
    assert.equal(server.requests.length, 0);
  });
});
