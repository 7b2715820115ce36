import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { estimateCost } from '../../../src/engine/costEstimate';
import type { TaskItem } from '../../../src/engine/data/tasks';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedOptimizerModel } from '../../support/loopback/scriptedModels';
import { BatchRuns, exampleTasks } from './batchHelpers';
import { runSim } from './helpers';

/**
 * The dollar range before a run holds what the run then pays: the example trained through the
 * real openai client against the loopback server, both roles priced, its ledger's dollars between
 * the estimate's ends, for a full run and a short one.
 */
describe('the dollar estimate holds the spend of a real run (loopback)', function () {
  this.timeout(120_000);
  let items: TaskItem[];
  let server: LoopbackServer;
  const runs = new BatchRuns();

  before(async () => {
    items = exampleTasks();
    server = await startOpenAiServer(scriptedModels(items));
  });
  after(async () => {
    await server.close();
    runs.cleanup();
  });

  for (const [name, extra] of [
    ['the example as configured', []],
    ['a short run of one epoch', ['train.num_epochs=1']],
  ] as const) {
    it(`${name}: low end ≤ what the ledger paid ≤ high end`, async () => {
      const prepared = runs.prepare(server, [
        `prices.${scriptedOptimizerModel}.input_per_mtok=2`,
        `prices.${scriptedOptimizerModel}.output_per_mtok=8`,
        ...extra,
      ]);
      const est = estimateCost(prepared);
      const run = await runSim(prepared);
      assert.equal(run.outcome.status, 'finished');
      const paid = readFileSync(join(prepared.outDir, 'ledger.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { dollars?: number })
        .reduce((n, r) => n + (r.dollars ?? 0), 0);
      assert.ok(paid > 0);
      assert.ok(est.low !== null && est.high !== null);
      assert.ok(est.low <= paid, `low end $${est.low.toFixed(4)} above the $${paid.toFixed(4)} paid`);
      assert.ok(paid <= est.high, `high end $${est.high.toFixed(4)} below the $${paid.toFixed(4)} paid`);
    });
  }
});
