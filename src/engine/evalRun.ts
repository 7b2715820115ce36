/** Eval-only: score one skill on a split with the target alone (reference scripts/eval_only.py). */
import { setMaxListeners } from 'node:events';
import { withShuffledChoices } from './data/choiceShuffle';
import type { TaskItem } from './data/tasks';
import { makeContext, type PreparedRun, type RunHooks } from './run';
import { containWrites, makeDir, writeJsonAtomic } from './store/atomic';
import { EVAL_FILE, RunLayout } from './store/layout';
import { evaluateItems, type TestSummary } from './train/evaluate';

export type EvalSplit = 'train' | 'val' | 'test' | 'all' | 'valid_seen' | 'valid_unseen' | 'selection';

export interface EvalSummary {
  skill: string;
  split: string;
  n_items: number;
  hard: number;
  soft: number;
  by_type: TestSummary['byType'];
  failing: string[];
  /** Items the target could not answer (no score, not in `failing`); absent when none. */
  errored?: string[];
  out_dir: string;
  model_calls: number;
  cache_hits: number;
}

/** Eval-only (reference scripts/eval_only.py): the target on one split or all; no optimizer call. */
export async function evalPrepared(
  prepared: PreparedRun,
  opts: RunHooks & { skill: string; skillPath: string; split: EvalSplit },
): Promise<EvalSummary> {
  setMaxListeners(0, opts.signal);
  const canonical =
    opts.split === 'valid_seen' || opts.split === 'selection'
      ? 'val'
      : opts.split === 'valid_unseen'
        ? 'test'
        : opts.split;
  const { splits } = prepared;
  const test = (): readonly TaskItem[] => splits.test.unsealForEvaluation();
  // Evaluation draws choice orders with train.seed (val and test already have theirs).
  const train = (): TaskItem[] => splits.train.map((i) => withShuffledChoices(i, prepared.settings.seed));
  const items =
    canonical === 'train'
      ? train()
      : canonical === 'val'
        ? splits.val
        : canonical === 'test'
          ? test()
          : [...train(), ...splits.val, ...test()];
  const limit = prepared.settings.testEnvNum;
  const chosen = canonical !== 'all' && limit > 0 ? items.slice(0, limit) : items;
  const outDir = prepared.outDir;
  const ctx = makeContext(prepared, opts, outDir, () => undefined);
  const before = prepared.models.accounting.totals();
  const run = new RunLayout(outDir);
  makeDir(outDir);
  const uncontain = containWrites(outDir);
  let summary: TestSummary;
  try {
    // Named as the user named the split (selection, valid_seen, …), as the reference's eval_only does.
    ({ summary } = await evaluateItems(ctx, chosen, opts.skill, run.evalOnlyDir(opts.split), 'eval'));
  } finally {
    uncontain();
  }
  const after = prepared.models.accounting.totals();
  const result: EvalSummary = {
    skill: opts.skillPath,
    split: opts.split,
    n_items: chosen.length,
    hard: summary.overall.hard,
    soft: summary.overall.soft,
    by_type: summary.byType,
    failing: summary.failing,
    ...(summary.errored ? { errored: summary.errored } : {}),
    out_dir: outDir,
    model_calls: after.calls - before.calls,
    cache_hits: after.cacheHits - before.cacheHits,
  };
  writeJsonAtomic(run.file(EVAL_FILE.summary), result);
  return result;
}
