/**
 * Issue 14, batch APIs: what eval-only costs at list prices when its target calls go one by one,
 * and when they go as one OpenAI batch (evaluation.batch_api), on the bench workload's splits. The
 * target is played over the loopback OpenAI server extended with files + batches; its tokens are
 * priced as a model of the built-in table, so the dollars are what that model would cost. The two
 * paths must score alike, and the batch must cost half.
 */
import { join } from 'node:path';
import { evalPrepared, type EvalSplit, type EvalSummary } from '../src/engine/evalRun';
import { PriceTable } from '../src/engine/llm/prices';
import { prepareRun, type PreparedRun } from '../src/engine/run';
import { OpenAiBatchApi } from '../test/support/loopback/batchApis';
import type { LoopbackServer } from '../test/support/loopback/core';
import { startOpenAiServer } from '../test/support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
} from '../test/support/loopback/scriptedModels';
import { benchConfig } from './harness';
import { fmt, table } from './stats';

/** The list price the scripted target's tokens are charged at. */
export const BATCH_BENCH_PRICED_AS = { model: 'gpt-4.1-mini', provider: 'openai' } as const;

export interface BatchBenchRow {
  split: string;
  items: number;
  promptTokens: number;
  completionTokens: number;
  /** At list prices, one call per item. */
  syncDollars: number;
  /** The same items as one batch. */
  batchDollars: number;
  /** Provider batches the batch path sent (1 unless items had to be asked again). */
  batches: number;
  /** Hard and soft scores, failing and errored items all equal. */
  sameScores: boolean;
}

export interface BatchBenchResult {
  pricedAs: string;
  rows: BatchBenchRow[];
}

export async function runBatchBench(work: string, log: (line: string) => void): Promise<BatchBenchResult> {
  const { model, provider } = BATCH_BENCH_PRICED_AS;
  const price = new PriceTable().lookup(model, provider);
  if (!price) throw new Error(`no built-in price for ${model}`);
  // The tasks, to give the scripted target its answers (no call is made: a local URL needs no key).
  const nowhere = 'http://127.0.0.1:9/v1';
  const probe = prepareRun({
    configPath: benchConfig,
    outDir: join(work, 'batch-probe'),
    dryRun: true,
    overrides: [`model.optimizer_base_url=${nowhere}`, `model.target_base_url=${nowhere}`],
  });
  const tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
  const api = new OpenAiBatchApi({ pollsToEnd: 2 });
  const server = await startOpenAiServer(scriptedModels(tasks), { routes: api.routes });
  const rows: BatchBenchRow[] = [];
  try {
    for (const split of ['test', 'all'] as EvalSplit[]) {
      const before = api.batches.size;
      const sync = await evalOnce(server, join(work, 'batch', split, 'sync'), split, []);
      const batch = await evalOnce(server, join(work, 'batch', split, 'batch'), split, [
        'evaluation.batch_api=final',
        'model.target_supports_batch=true',
        'evaluation.batch_poll_s=0.01',
      ]);
      const s = sync.prepared.models.accounting.totals();
      const row: BatchBenchRow = {
        split: sync.summary.split,
        items: sync.summary.n_items,
        promptTokens: s.promptTokens,
        completionTokens: s.completionTokens,
        syncDollars: s.knownDollars,
        batchDollars: batch.prepared.models.accounting.totals().knownDollars,
        batches: api.batches.size - before,
        sameScores: JSON.stringify(scores(sync.summary)) === JSON.stringify(scores(batch.summary)),
      };
      rows.push(row);
      log(
        `  eval-only ${row.split}: ${row.items} items, $${row.syncDollars.toFixed(4)} one by one, $${row.batchDollars.toFixed(4)} as a batch${row.sameScores ? '' : ' (SCORES DIFFER)'}`,
      );
    }
  } finally {
    await server.close();
  }
  return {
    pricedAs: `${model} (${provider}: $${price.input_per_mtok} / $${price.output_per_mtok} per M tokens)`,
    rows,
  };

  async function evalOnce(
    s: LoopbackServer,
    outDir: string,
    split: EvalSplit,
    extra: string[],
  ): Promise<{ prepared: PreparedRun; summary: EvalSummary }> {
    const prepared = prepareRun({
      configPath: benchConfig,
      outDir,
      overrides: [
        'cache.enabled=false',
        `model.optimizer_base_url=${s.url}`,
        `model.target_base_url=${s.url}`,
        `model.optimizer=${scriptedOptimizerModel}`,
        `model.target=${scriptedTargetModel}`,
        `prices.${scriptedTargetModel}.input_per_mtok=${price!.input_per_mtok}`,
        `prices.${scriptedTargetModel}.output_per_mtok=${price!.output_per_mtok}`,
        ...extra,
      ],
    });
    const summary = await evalPrepared(prepared, {
      skill: prepared.initialSkill,
      skillPath: prepared.skillPath,
      split,
      emit: () => undefined,
      signal: new AbortController().signal,
    });
    return { prepared, summary };
  }
}

function scores(s: EvalSummary): unknown {
  return { hard: s.hard, soft: s.soft, failing: s.failing, errored: s.errored ?? [] };
}

/** The bench report's batch table. */
export function batchSection(b: BatchBenchResult): string[] {
  return [
    `Eval-only at list prices, target priced as ${b.pricedAs}; one call per item vs one batch:`,
    table(
      ['split', 'items', 'tokens in / out', 'one by one', 'batch', 'batch ÷ list', 'batches', 'same scores'],
      b.rows.map((r) => [
        r.split,
        String(r.items),
        `${r.promptTokens} / ${r.completionTokens}`,
        `$${fmt(r.syncDollars, 4)}`,
        `$${fmt(r.batchDollars, 4)}`,
        fmt(r.batchDollars / Math.max(1e-12, r.syncDollars), 2),
        String(r.batches),
        r.sameScores ? 'yes' : 'NO',
      ]),
    ),
  ];
}
