import { join, relative } from 'node:path';
import type { TaskItem } from '../data/tasks';
import { projectScore } from '../optimizer/gate';
import { skillHash } from '../skill/document';
import { repeatDir } from '../store/layout';
import type { StageName } from '../../protocol/vocabulary';
import type { RunContext } from './context';
import { earlyStopWatch } from './earlyStop';
import { isErrored, meanOf, rolloutFor } from './rollout';
import type { CachedSelection, ItemScores, RolloutResult, Score } from '../../protocol/records';

export interface SelectionOutcome {
  score: Score;
  projected: number;
  cacheHit: boolean;
  hash: string;
  /** Per-item scores (means over repeats); absent for a cache entry written without them. */
  items?: ItemScores;
  /** Samples per item behind `items`. */
  repeats: number;
  /** Every row of every repeat. */
  results?: RolloutResult[];
  /** evaluation.early_stop left items out: the score is over `scored` of `of` items (never cached). */
  stoppedEarly?: { scored: number; of: number };
}

/**
 * Per-item means over the repeats an item was answered in; an item errored in every repeat has
 * no score. Entries come out in the order of the first run (a Map: numeric ids would reorder an object).
 */
export function itemMeans(runs: ReadonlyArray<readonly RolloutResult[]>): Map<string, Score> {
  const sums = new Map<string, { hard: number; soft: number; n: number }>();
  for (const run of runs)
    for (const r of run) {
      if (isErrored(r)) continue;
      const s = sums.get(r.id) ?? { hard: 0, soft: 0, n: 0 };
      s.hard += r.hard;
      s.soft += r.soft;
      s.n++;
      sums.set(r.id, s);
    }
  const out = new Map<string, Score>();
  for (const [id, s] of sums)
    out.set(id, s.n === 1 ? { hard: s.hard, soft: s.soft } : { hard: s.hard / s.n, soft: s.soft / s.n });
  return out;
}

/**
 * The unweighted mean of the per-item scores, summed in run order: with one repeat exactly the
 * reference's mean over answered items, bit for bit.
 */
export function meanOfItems(items: ReadonlyMap<string, Score>): Score {
  return meanOf([...items.values()]);
}

/**
 * Scores a skill on the selection split, once per distinct skill text: the cache is keyed by the
 * reference's content hash and persisted in runtime_state.json, so resumed runs don't re-pay.
 * Each item is sampled `evaluation.repeats` times (each repeat resumable in its own folder) and
 * scored by its mean. All items run at once; the target client's limits bound the concurrency.
 */
export class SelectionEvaluator {
  constructor(
    private readonly ctx: RunContext,
    private readonly items: readonly TaskItem[],
    readonly cache: Map<string, CachedSelection>,
    /** Told how many calls an early stop saved. */
    private readonly onEarlyStop?: (saved: number) => void,
  ) {}

  project(score: Score, skill: string): number {
    const s = this.ctx.settings;
    return projectScore(score, {
      metric: s.gateMetric,
      mixedWeight: s.gateMixedWeight,
      semanticDensity: s.semanticDensity,
      skill,
    });
  }

  /** Per-item scores projected onto the gate metric (no skill-level bonus: it belongs to no item). */
  projectItems(items: ItemScores): Map<string, number> {
    const s = this.ctx.settings;
    const out = new Map<string, number>();
    for (const [id, score] of Object.entries(items))
      out.set(id, projectScore(score, { metric: s.gateMetric, mixedWeight: s.gateMixedWeight }));
    return out;
  }

  /**
   * `needItems`: a cache entry without per-item scores is evaluated again (the paired gate needs
   * them). `repeats`: sample each item this many times (on_inconclusive: more_repeats); the repeats
   * already paid are reused, not paid again: those in `dir`, and a cached skill's from the folders it
   * was sampled in (the cache entry's `dirs`); only the new repeats are sampled, in `dir`.
   */
  async evaluate(
    skill: string,
    dir: string,
    step: number,
    stage: StageName,
    opts: { needItems?: boolean; repeats?: number; earlyStop?: { current: number; best: number } } = {},
  ): Promise<SelectionOutcome> {
    const hash = skillHash(skill);
    const cached = this.cache.get(hash);
    const repeats = Math.max(1, opts.repeats ?? this.ctx.settings.repeats);
    const usable =
      cached && (!opts.needItems || cached.items) && (!opts.repeats || (cached.repeats ?? 1) >= repeats);
    if (cached && usable) {
      const score = { hard: cached.hard, soft: cached.soft };
      return {
        score,
        projected: this.project(score, skill),
        cacheHit: true,
        hash,
        repeats: cached.repeats ?? 1,
        ...(cached.items ? { items: cached.items } : {}),
      };
    }
    // Repeat r lives in repeatDir(base[r], r): a cached skill's paid repeats where they were sampled.
    const paid = cached?.items && cached.dirs?.length === (cached.repeats ?? 1) ? cached.dirs : [];
    const bases = Array.from({ length: repeats }, (_, r) =>
      r < paid.length ? join(this.ctx.outDir, paid[r]) : dir,
    );
    const total = this.items.length * repeats;
    let passed = 0;
    let done = 0;
    // One sample per item and no provider batch: the only shape whose verdict a partial mean bounds.
    const watch =
      opts.earlyStop && repeats === 1 && !this.ctx.batch?.stages.has('selection')
        ? earlyStopWatch({
            total: this.items.length,
            project: (score) => this.project(score, skill),
            current: opts.earlyStop.current,
            best: opts.earlyStop.best,
            maxErroredShare: this.ctx.settings.maxErroredShare,
          })
        : undefined;
    const runs = await Promise.all(
      Array.from({ length: repeats }, (_, r) =>
        rolloutFor(
          this.ctx,
          this.items,
          skill,
          repeatDir(bases[r], r),
          'selection',
          (res) => {
            passed += res.hard;
            done++;
            watch?.observe(res);
            this.ctx.emit({ type: 'rollout/progress', step, stage, done, total, hard: passed / done });
          },
          r,
          watch
            ? {
                earlyStop: {
                  inFlight: this.ctx.settings.targetConcurrency,
                  stop: () => watch.certainReject(),
                },
              }
            : {},
        ),
      ),
    );
    const means = itemMeans(runs);
    const score = meanOfItems(means);
    const items: ItemScores = Object.fromEntries(means);
    const scored = runs[0].length;
    const partial = scored < this.items.length;
    // A partial score is not the skill's score: it is not cached, so it is never read as one.
    if (partial) this.onEarlyStop?.(this.items.length - scored);
    else
      this.cache.set(hash, {
        ...score,
        items,
        ...(repeats > 1 ? { repeats } : {}),
        dirs: bases.map((b) => relative(this.ctx.outDir, b)),
      });
    return {
      score,
      projected: this.project(score, skill),
      cacheHit: false,
      hash,
      items,
      repeats,
      results: runs.flat(),
      ...(partial ? { stoppedEarly: { scored, of: this.items.length } } : {}),
    };
  }
}
