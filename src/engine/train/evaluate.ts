import type { TaskItem } from '../data/tasks';
import type { SealedSplit } from '../data/splits';
import { writeJsonAtomic } from '../store/atomic';
import { evalPaths } from '../store/layout';
import type { RunContext } from './context';
import { isErrored, meanScore, rolloutFor } from './rollout';
import type { RolloutResult, Score } from '../../protocol/records';

export interface TestSummary {
  /** `total` counts answered items only: the scores are their means. */
  overall: Score & { total: number };
  byType: Record<string, Score & { total: number }>;
  failing: string[];
  /** Items the target could not answer (no score); absent when none. */
  errored?: string[];
  /** Hard score of each answered item, by task id (for intervals and paired comparisons). */
  items?: Record<string, number>;
}

/** Scores per task type plus overall, and the reference's `{<type>: {total, hard_acc}}` file shape. */
export function summarise(results: readonly RolloutResult[]): TestSummary {
  const groups = new Map<string, RolloutResult[]>();
  const answered = results.filter((r) => !isErrored(r));
  const errored = results.filter(isErrored).map((r) => r.id);
  for (const r of answered) {
    const key = r.task_type ?? 'general';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const byType: TestSummary['byType'] = {};
  for (const [k, rs] of [...groups.entries()].sort()) byType[k] = { ...meanScore(rs), total: rs.length };
  return {
    overall: { ...meanScore(answered), total: answered.length },
    byType,
    failing: answered.filter((r) => !r.hard).map((r) => r.id),
    ...(errored.length ? { errored } : {}),
    items: Object.fromEntries(answered.map((r) => [r.id, r.hard])),
  };
}

export function referenceSummaryFile(
  s: TestSummary,
): Record<string, { total: number; hard_acc: number; soft_acc: number }> {
  const out: Record<string, { total: number; hard_acc: number; soft_acc: number }> = {};
  for (const [k, v] of Object.entries(s.byType))
    out[k] = { total: v.total, hard_acc: v.hard, soft_acc: v.soft };
  out.overall = { total: s.overall.total, hard_acc: s.overall.hard, soft_acc: s.overall.soft };
  return out;
}

export async function evaluateItems(
  ctx: RunContext,
  items: readonly TaskItem[],
  skill: string,
  dir: string,
  stage: 'test' | 'eval',
): Promise<{ results: RolloutResult[]; summary: TestSummary }> {
  let passed = 0;
  const results = await rolloutFor(ctx, items, skill, dir, stage, (r, done, total) => {
    passed += r.hard;
    ctx.emit({ type: 'rollout/progress', step: 0, stage: 'test', done, total, hard: passed / done });
  });
  const summary = summarise(results);
  writeJsonAtomic(evalPaths(dir).scores, referenceSummaryFile(summary));
  return { results, summary };
}

/**
 * The only place test items leave their seal: target rollouts for evaluation. Nothing here reaches
 * the optimizer (and the optimizer client is additionally guarded, see leakGuard.ts).
 */
export async function evaluateTestSplit(
  ctx: RunContext,
  test: SealedSplit,
  skill: string,
  dir: string,
  limit: number,
): Promise<TestSummary> {
  const all = test.unsealForEvaluation();
  const items = limit > 0 ? all.slice(0, limit) : all;
  return (await evaluateItems(ctx, items, skill, dir, 'test')).summary;
}
