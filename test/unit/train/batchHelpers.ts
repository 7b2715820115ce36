import type { TaskItem } from '../../../src/engine/data/tasks';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import type { LoopbackServer } from '../../support/loopback/core';
import { scriptedOptimizerModel, scriptedTargetModel } from '../../support/loopback/scriptedModels';
import { exampleConfig, tempDir } from './helpers';

/** Every task of the example, to give the scripted target its answers. */
export function exampleTasks(): TaskItem[] {
  const dir = tempDir('skillopt-batch-probe-');
  try {
    const probe = prepareRun({
      configPath: exampleConfig,
      outDir: dir.path,
      dryRun: true,
      overrides: ['cache.enabled=false'],
    });
    return [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
  } finally {
    dir.cleanup();
  }
}

/**
 * Runs of the example against one loopback server playing both models (the target through
 * `backend`), its tokens priced at $2 / $8 per M, batches polled every 10 ms; folders removed by
 * `cleanup`.
 */
export class BatchRuns {
  private readonly dirs: Array<ReturnType<typeof tempDir>> = [];

  prepare(
    server: LoopbackServer,
    extra: string[],
    opts: { outDir?: string; backend?: 'openai' | 'anthropic' } = {},
  ): PreparedRun {
    let outDir = opts.outDir;
    if (!outDir) {
      const d = tempDir('skillopt-batch-');
      this.dirs.push(d);
      outDir = d.path;
    }
    const backend = opts.backend ?? 'openai';
    return prepareRun({
      configPath: exampleConfig,
      outDir,
      overrides: [
        'cache.enabled=false',
        'model.optimizer_backend=openai_compatible',
        `model.target_backend=${backend}`,
        `model.optimizer=${scriptedOptimizerModel}`,
        `model.target=${scriptedTargetModel}`,
        `model.optimizer_base_url=${server.url}`,
        `model.target_base_url=${backend === 'anthropic' ? server.origin : server.url}`,
        'evaluation.batch_poll_s=0.01',
        'limits.max_retries=1',
        `prices.${scriptedTargetModel}.input_per_mtok=2`,
        `prices.${scriptedTargetModel}.output_per_mtok=8`,
        ...extra,
      ],
    });
  }

  cleanup(): void {
    for (const d of this.dirs.splice(0)) d.cleanup();
  }
}

/** What each batch item costs at the test prices: half of $2 / $8 per M tokens. */
export function batchPrice(promptTokens: number, completionTokens: number): number {
  return (promptTokens * 2 + completionTokens * 8) / 1e6 / 2;
}
