import { join } from 'node:path';
import type { TaskItem } from '../data/tasks';
import { projectScore } from '../optimizer/gate';
import { skillHash } from '../skill/document';
import type { StageName } from '../../protocol/vocabulary';
import type { RunContext } from './context';
import { meanScore, rolloutFor } from './rollout';
import type { RolloutResult, Score } from '../../protocol/records';

export interface SelectionOutcome {
  score: Score;
  projected: number;
  cacheHit: boolean;
  hash: string;
  results?: RolloutResult[];
}

/**
 * Scores a skill on the selection split, once per distinct skill text: the cache is keyed by the
 * reference's content hash and persisted in runtime_state.json, so resumed runs don't re-pay.
 * All items run at once; the target client's limits bound the concurrency.
 */
export class SelectionEvaluator {
  constructor(
    private readonly ctx: RunContext,
    private readonly items: readonly TaskItem[],
    readonly cache: Map<string, Score>,
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

  async evaluate(skill: string, dir: string, step: number, stage: StageName): Promise<SelectionOutcome> {
    const hash = skillHash(skill);
    const cached = this.cache.get(hash);
    if (cached) return { score: cached, projected: this.project(cached, skill), cacheHit: true, hash };
    let passed = 0;
    const results = await rolloutFor(this.ctx, this.items, skill, dir, 'selection', (r, done, total) => {
      passed += r.hard;
      this.ctx.emit({ type: 'rollout/progress', step, stage, done, total, hard: passed / done });
    });
    const score = meanScore(results);
    this.cache.set(hash, score);
    return { score, projected: this.project(score, skill), cacheHit: false, hash, results };
  }
}

export function selectionDir(base: string): string {
  return join(base, 'selection_eval');
}
