/** Eval-only: score one skill on a split with the target alone (reference scripts/eval_only.py). */
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { withShuffledChoices } from './data/choiceShuffle';
import type { TaskItem } from './data/tasks';
import { makeContext, STOPPED_CALLS_WAIT_MS, type PreparedRun, type RunHooks } from './run';
import { containWrites, makeDir, writeJsonAtomic } from './store/atomic';
import { SkillOptError } from './errors';
import { dollarCapNotice } from './dollarCap';
import { BudgetGuard } from './llm/budget';
import { RunLedger } from './llm/ledger';
import { EVAL_FILE, RUN_FILE, RunLayout, repeatDir } from './store/layout';
import { acquireRunLock } from './store/runLock';
import { aaReport, type AaReport } from './optimizer/aaCheck';
import { claimEvalFolder, evalIdentity } from './evalIdentity';
import { refuseForeignFolder } from './train/sameRun';
import { evaluateItems, type TestSummary } from './train/evaluate';
import { rolloutFor } from './train/rollout';

/** How often the time cap is checked while no call ends (a batch wait makes no spend to check on). */
const WALL_CAP_CHECK_MS = 1000;
import { itemMeans } from './train/selection';

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
  /** Target calls paid for this evaluation, over every process that worked on it (its ledger). */
  model_calls: number;
  cache_hits: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** null when a model's price is unknown. */
  dollars: number | null;
  /** The target was the offline `sim` backend: no price, nothing paid. */
  simulated?: true;
  /** `--aa N`: the same skill scored N times, and how often each gate would accept it over itself. */
  aa?: AaReport;
}

/** The items an evaluation of `split` scores, in order (test.env_num caps a single split). */
export function evalItemsOf(prepared: PreparedRun, split: EvalSplit): readonly TaskItem[] {
  const canonical =
    split === 'valid_seen' || split === 'selection' ? 'val' : split === 'valid_unseen' ? 'test' : split;
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
  return canonical !== 'all' && limit > 0 ? items.slice(0, limit) : items;
}

/**
 * evaluation.test_env_num set for `--split all`, which it does not cap (in the reference's eval_only.py
 * neither): said, so the count of items scored is no surprise.
 */
export function allSplitsNotice(prepared: PreparedRun, split: EvalSplit): string | undefined {
  const n = prepared.settings.testEnvNum;
  if (split !== 'all' || n <= 0) return undefined;
  return `evaluation.test_env_num (${n}) caps a single split only: --split all scores every item of train, selection and test, as the reference's eval_only.py does (pass one --split to cap it)`;
}

/** Eval-only (reference scripts/eval_only.py): the target on one split or all; no optimizer call. */
export async function evalPrepared(
  prepared: PreparedRun,
  opts: RunHooks & { skill: string; skillPath: string; split: EvalSplit; aa?: number },
): Promise<EvalSummary> {
  setMaxListeners(0, opts.signal);
  if (opts.aa !== undefined && !(Number.isInteger(opts.aa) && opts.aa >= 2 && opts.aa <= 20))
    throw new SkillOptError('config', `the A/A check needs 2 to 20 runs of the skill (got ${opts.aa})`, {
      key: 'aa',
      fix: 'ask for 2 to 20 runs, e.g. 4',
    });
  const capNotice = dollarCapNotice(prepared, 'eval');
  if (capNotice) opts.emit({ type: 'warning', message: capNotice });
  const uncapped = allSplitsNotice(prepared, opts.split);
  if (uncapped) opts.emit({ type: 'warning', message: uncapped });
  const chosen = evalItemsOf(prepared, opts.split);
  const outDir = prepared.outDir;
  const run = new RunLayout(outDir);
  // Only a new or empty folder, a run's, or an earlier evaluation's (`--out .` would strew its files there).
  if (!existsSync(run.file(EVAL_FILE.identity)))
    refuseForeignFolder(
      outDir,
      'an evaluation writes eval_summary.json, ledger.jsonl, its answers and more into it',
    );
  makeDir(outDir);
  const release = acquireRunLock(outDir);
  try {
    claimEvalFolder(
      outDir,
      evalIdentity(prepared, {
        skill: opts.skill,
        skillPath: opts.skillPath,
        split: opts.split,
        aa: opts.aa,
        items: chosen,
      }),
    );
    // A generated ratio split is written once the folder is known to hold this evaluation.
    prepared.splits.persist?.();
  } catch (err) {
    release();
    throw err;
  }
  const uncontain = containWrites(outDir);
  const { accounting } = prepared.models;
  // An evaluation stopped and resumed is one evaluation: its ledger counts every process once,
  // and the caps under `limits:` hold for it as for a training run.
  const ledger = new RunLedger(run.file(RUN_FILE.ledger));
  const detach = ledger.attach(accounting);
  ledger.track(0, 'eval');
  const limits = prepared.config.limits;
  const budget = new BudgetGuard(
    { maxTokens: limits.max_tokens, maxDollars: limits.max_dollars, maxWallSeconds: limits.max_wall_time_s },
    accounting,
    Date.now,
    { onWarning: (message) => opts.emit({ type: 'warning', message }), priorSeconds: ledger.priorSeconds() },
  );
  const capped = new AbortController();
  let capReason: string | null = null;
  const checkCaps = (): void => {
    capReason ??= budget.check();
    if (capReason) capped.abort();
  };
  const unwatch = accounting.onChange(checkCaps);
  // A time cap must also hold while nothing is spent (waiting on a provider batch, a slow agent).
  const clock = limits.max_wall_time_s > 0 ? setInterval(checkCaps, WALL_CAP_CHECK_MS) : undefined;
  clock?.unref();
  const signal = AbortSignal.any([opts.signal, capped.signal]);
  setMaxListeners(0, signal);
  const ctx = makeContext(prepared, { ...opts, signal }, outDir, () => undefined);
  let summary: TestSummary;
  let aa: AaReport | undefined;
  try {
    const over = budget.check();
    if (over) throw budgetError(over);
    // Named as the user named the split (selection, valid_seen, …), as the reference's eval_only does.
    const dir = run.evalOnlyDir(opts.split);
    const first = evaluateItems(ctx, chosen, opts.skill, dir, 'eval');
    // A/A: the same skill again, each sample a repeat of its own (its own seed, cache entry and
    // folder). Each run takes evaluation.repeats samples per item, as the gate's evaluations do.
    const perRun = opts.aa ? Math.max(1, prepared.settings.repeats) : 1;
    const again = Array.from({ length: Math.max(0, (opts.aa ?? 0) * perRun - 1) }, (_, r) =>
      rolloutFor(ctx, chosen, opts.skill, repeatDir(dir, r + 1), 'eval', undefined, r + 1),
    );
    const [done, ...others] = await Promise.all([first, ...again]);
    summary = done.summary;
    if (opts.aa) {
      const samples = [done.results, ...others];
      const runs = Array.from({ length: opts.aa }, (_, k) => ({
        items: itemMeans(samples.slice(k * perRun, (k + 1) * perRun)),
      }));
      const report = aaReport(runs, {
        metric: prepared.settings.gateMetric,
        mixedWeight: prepared.settings.gateMixedWeight,
        alpha: prepared.settings.gate.alpha,
        seed: prepared.settings.seed,
      });
      aa = perRun > 1 ? { ...report, repeats: perRun } : report;
    }
  } catch (err) {
    if (capReason && !opts.signal.aborted) throw budgetError(capReason);
    throw err;
  } finally {
    if (signal.aborted) await accounting.settled(STOPPED_CALLS_WAIT_MS);
    if (clock) clearInterval(clock);
    unwatch();
    detach();
    uncontain();
    release();
  }
  const spent = prepared.models.accounting.totals();
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
    model_calls: spent.calls,
    cache_hits: spent.cacheHits,
    prompt_tokens: spent.promptTokens,
    completion_tokens: spent.completionTokens,
    cached_tokens: spent.cachedTokens,
    dollars: spent.dollars,
    ...(prepared.models.simulated ? { simulated: true as const } : {}),
    // An A/A sampled from the cache repeats an earlier evaluation's noise: said beside its figures.
    ...(aa ? { aa: spent.cacheHits ? { ...aa, cache_hits: spent.cacheHits } : aa } : {}),
  };
  writeJsonAtomic(run.file(EVAL_FILE.summary), result);
  return result;
}

function budgetError(reason: string): SkillOptError {
  return new SkillOptError('budget', reason, {
    key: 'limits',
    fix: 'raise the cap under `limits:` (max_tokens, max_dollars, max_wall_time_s) and run the same eval again',
  });
}
