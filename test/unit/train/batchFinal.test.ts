import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskItem } from '../../../src/engine/data/tasks';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import type { PreparedRun } from '../../../src/engine/run';
import type { EngineEvent } from '../../../src/protocol/events';
import { outstandingBatches } from '../../../src/engine/llm/batch/cancel';
import { batchStateSchema, readRunJson } from '../../../src/engine/store/runSchemas';
import { OpenAiBatchApi } from '../../support/loopback/batchApis';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels } from '../../support/loopback/scriptedModels';
import { BatchRuns, batchPrice, exampleTasks } from './batchHelpers';
import { comparableHistory, runSim } from './helpers';

/**
 * evaluation.batch_api: final sends a training run's final test evaluation through OpenAI's Batch
 * API: the same test scores as the synchronous run, and a run stopped while the batch is out
 * resumes by collecting the same batch, each item in the ledger once at the batch price.
 */
describe('the final test evaluation through the batch API (loopback)', function () {
  this.timeout(120_000);
  let items: TaskItem[];
  const runs = new BatchRuns();
  const servers: LoopbackServer[] = [];

  before(() => {
    items = exampleTasks();
  });
  after(async () => {
    for (const s of servers) await s.close();
    runs.cleanup();
  });

  async function server(api?: OpenAiBatchApi): Promise<LoopbackServer> {
    const s = await startOpenAiServer(scriptedModels(items), api ? { routes: api.routes } : {});
    servers.push(s);
    return s;
  }

  const prepare = (s: LoopbackServer, extra: string[], outDir?: string): PreparedRun =>
    runs.prepare(s, ['train.num_epochs=1', 'model.target_supports_batch=true', ...extra], {
      ...(outDir ? { outDir } : {}),
    });

  const testScores = (events: EngineEvent[]): unknown =>
    events.find((e): e is Extract<EngineEvent, { type: 'run/finished' }> => e.type === 'run/finished')?.test;

  let sync: Awaited<ReturnType<typeof runSim>>;
  let syncDir: string;
  before(async () => {
    const prepared = prepare(await server(), []);
    syncDir = prepared.outDir;
    sync = await runSim(prepared);
    assert.equal(sync.outcome.status, 'finished');
  });

  it('scores the test split through a batch as the synchronous run does, across a stop in the middle', async () => {
    const api = new OpenAiBatchApi({ pollsToEnd: 4 });
    const s = await server(api);
    const first = prepare(s, ['evaluation.batch_api=final']);
    const stopped = await runSim(
      first,
      (e) => e.type === 'batch/progress' && e.evaluation === 'test' && e.detail === 'in_progress',
    );
    assert.equal(stopped.outcome.status, 'stopped');
    const why = stopped.events.find((e) => e.type === 'run/stopped');
    const reason = why?.type === 'run/stopped' ? why.reason : '';
    // The baseline's and the best skill's test evaluations were out side by side: the stop names
    // every batch it leaves at the provider, and how to collect or cancel them.
    const out = outstandingBatches(first.outDir).map((f) => readRunJson(f, batchStateSchema));
    assert.ok(out.length > 1, `several batches outstanding at the stop (${out.length})`);
    const listed = out.map((b) => `${b?.provider} batch ${b?.batch_id} (${b?.stage} evaluation)`).join(', ');
    assert.equal(
      reason,
      `stopped by request; ${out.length} provider batches are left running at the provider: ${listed}. ` +
        'Resuming this folder collects them without paying twice; to cancel them instead: cancel-batch',
    );
    const submitted = api.batches.size;
    assert.ok(submitted >= 1, 'the final test evaluation went out as a batch');
    assert.equal(api.cancelRequests.length, 0);

    const resumed = await runSim(prepare(s, ['evaluation.batch_api=final'], first.outDir));
    assert.equal(resumed.outcome.status, 'finished');
    assert.ok(resumed.events.some((e) => e.type === 'batch/progress' && e.resumed));
    assert.deepEqual(testScores(resumed.events), testScores(sync.events));

    // Only the test evaluation went as batches (selection stays synchronous with `final`), and
    // the batches in flight at the stop were collected, not sent again.
    const testItems = items.length - first.splits.train.length - first.splits.val.length;
    const batched = [...api.batches.values()].reduce((n, b) => n + b.items.length, 0);
    const ledger = readFileSync(join(first.outDir, 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerRow);
    const batchRows = ledger.filter((r) => r.provider?.endsWith(':batch'));
    assert.ok(batchRows.every((r) => r.stage === 'test'));
    const paid = batchRows.reduce((n, r) => n + (r.calls ?? 0), 0);
    assert.equal(paid, batched, 'every batch item is in the ledger exactly once');
    assert.ok(batched % testItems === 0 && batched > 0);
    for (const r of batchRows) {
      const half = batchPrice(r.prompt_tokens ?? 0, r.completion_tokens ?? 0);
      assert.ok(Math.abs((r.dollars ?? NaN) - half) < 1e-12, 'batch items cost half the list price');
    }
  });

  it('with batch_api: selection also gates through batches, and decides every step as the synchronous run', async () => {
    const api = new OpenAiBatchApi({ pollsToEnd: 1 });
    const prepared = prepare(await server(api), ['evaluation.batch_api=selection']);
    const run = await runSim(prepared);
    assert.equal(run.outcome.status, 'finished');
    assert.deepEqual(comparableHistory(prepared.outDir), comparableHistory(syncDir));
    assert.deepEqual(testScores(run.events), testScores(sync.events));
    const evaluations = new Set(
      run.events.flatMap((e) => (e.type === 'batch/progress' ? [e.evaluation] : [])),
    );
    assert.deepEqual([...evaluations].sort(), ['selection', 'test']);
  });
});
