import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { evalPrepared } from '../../../src/engine/evalRun';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import { RUN_FILE, RunLayout } from '../../../src/engine/store/layout';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import { AnthropicBatchApi } from '../../support/loopback/batchApis';
import type { LoopbackServer } from '../../support/loopback/core';
import { withPromptCache } from '../../support/loopback/promptCache';
import { scriptedModels, scriptedTargetModel } from '../../support/loopback/scriptedModels';
import { BatchRuns, exampleTasks } from './batchHelpers';

/**
 * A batch evaluation whose requests carry `cache_control` (prompt caching is on by default): the
 * cache reads and writes each batch reply reports are recorded, and priced at the cache rates
 * (halved for the batch), as the same reply sent alone would be.
 */
describe('batch evaluations with provider prompt caching (Anthropic wire, loopback)', function () {
  this.timeout(60_000);
  let items: TaskItem[];
  const runs = new BatchRuns();
  let server: LoopbackServer;

  before(async () => {
    items = exampleTasks();
    const api = new AnthropicBatchApi({ pollsToEnd: 1 });
    server = await startAnthropicServer(withPromptCache('anthropic', scriptedModels(items)).handler, {
      routes: api.routes,
    });
  });
  after(async () => {
    await server.close();
    runs.cleanup();
  });

  it('records the cached and cache-write tokens of batch replies and prices them at the cache rates', async () => {
    const prepared = runs.prepare(
      server,
      [
        'evaluation.batch_api=final',
        `prices.${scriptedTargetModel}.cached_input_per_mtok=0.2`,
        `prices.${scriptedTargetModel}.cache_write_per_mtok=2.5`,
      ],
      { backend: 'anthropic' },
    );
    const summary = await evalPrepared(prepared, {
      skill: prepared.initialSkill,
      skillPath: prepared.skillPath,
      split: 'test',
      emit: () => undefined,
      signal: new AbortController().signal,
    });
    assert.ok(summary.n_items > 1);

    const rows = readFileSync(new RunLayout(prepared.outDir).file(RUN_FILE.ledger), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerRow)
      .filter((r) => r.kind === 'usage' && r.stage === 'eval');
    assert.equal(rows.length, summary.n_items);
    for (const r of rows) assert.equal(r.provider, 'anthropic:batch');
    const sum = (f: (r: LedgerRow) => number | undefined): number =>
      rows.reduce((n, r) => n + (f(r) ?? 0), 0);
    const cached = sum((r) => r.cached_tokens);
    const written = sum((r) => r.cache_write_tokens);
    // Every item shares the skill's prefix: one writes it, the others read it.
    assert.ok(written > 0, 'a batch reply wrote the cache');
    assert.ok(cached > 0, 'batch replies read the cache');
    // Each row priced at half of $2 plain / $0.2 read / $2.5 write / $8 output per M.
    for (const r of rows) {
      const plain = r.prompt_tokens! - (r.cached_tokens ?? 0) - (r.cache_write_tokens ?? 0);
      const expected =
        (plain * 2 +
          (r.cached_tokens ?? 0) * 0.2 +
          (r.cache_write_tokens ?? 0) * 2.5 +
          r.completion_tokens! * 8) /
        1e6 /
        2;
      assert.ok(Math.abs((r.dollars ?? NaN) - expected) < 1e-12, JSON.stringify(r));
    }
    // The run's totals (summary, report) see the same cache share.
    const totals = prepared.models.accounting.totals();
    assert.equal(totals.cachedTokens, cached);
    assert.equal(totals.cacheWriteTokens, written);
  });
});
