import { artifactSchemas, readArtifact } from '../store/runSchemas';
import { optimizerSkillView } from '../skill/package/views';
import { join } from 'node:path';
import type { TaskItem } from '../data/tasks';
import { withShuffledChoices } from '../data/choiceShuffle';
import { buildTrainBatch } from '../data/plan';
import { metaSkillContract, slowUpdateContract } from '../llm/contracts/epochEnd';
import { blocks } from '../prompts/shared';
import { metaSkillSystemPrompt, slowUpdateSystemPrompt } from '../prompts/system';
import { writeJsonAtomic } from '../store/atomic';
import { STEP_DIR, STEP_FILE } from '../store/layout';
import { askOptimizer } from './ask';
import type { RunContext } from './context';
import { isErrored, isFailure, rolloutFor } from './rollout';
import { excerpt } from './trajectories';
import type { RolloutResult } from '../../protocol/records';

export type PairCategory = 'improved' | 'regressed' | 'persistent_fail' | 'stable_success';

export interface ComparisonPair {
  id: string;
  task: string;
  category: PairCategory;
  prev: { hard: number; soft: number; predicted_answer: string; fail_reason?: string };
  curr: { hard: number; soft: number; predicted_answer: string; fail_reason?: string };
  /** Bounded excerpts; kept in comparison_pairs.json so a resumed meta-skill stage still has them. */
  prev_trajectory: string;
  curr_trajectory: string;
}

function side(r: RolloutResult): ComparisonPair['prev'] {
  return {
    hard: r.hard ? 1 : 0,
    soft: r.soft,
    predicted_answer: r.predicted_answer || 'N/A',
    ...(r.fail_reason ? { fail_reason: r.fail_reason } : {}),
  };
}

export function categorise(prev: RolloutResult, curr: RolloutResult): PairCategory {
  const p = !isFailure(prev);
  const c = !isFailure(curr);
  return !p && c ? 'improved' : p && !c ? 'regressed' : !p && !c ? 'persistent_fail' : 'stable_success';
}

export function buildPairs(prev: RolloutResult[], curr: RolloutResult[], maxChars: number): ComparisonPair[] {
  const byId = new Map(curr.map((r) => [r.id, r]));
  const pairs: ComparisonPair[] = [];
  for (const p of prev) {
    const c = byId.get(p.id);
    // A pair needs two answers; an errored side would read as a regression or a fix.
    if (!c || isErrored(p) || isErrored(c)) continue;
    pairs.push({
      id: p.id,
      task: p.task_description || p.id,
      category: categorise(p, c),
      prev: side(p),
      curr: side(c),
      prev_trajectory: excerpt(p.response, maxChars),
      curr_trajectory: excerpt(c.response, maxChars),
    });
  }
  return pairs;
}

export function applyPairPolicy(
  pairs: ComparisonPair[],
  policy: 'mixed' | 'changed' | 'unchanged',
): ComparisonPair[] {
  if (policy === 'mixed') return pairs;
  const changed = (p: ComparisonPair): boolean => p.category === 'improved' || p.category === 'regressed';
  return pairs.filter((p) => (policy === 'changed' ? changed(p) : !changed(p)));
}

export function renderComparison(pairs: ComparisonPair[]): string {
  const by = (c: PairCategory): ComparisonPair[] => pairs.filter((p) => p.category === c);
  const pass = (s: ComparisonPair['prev']): string =>
    `${s.hard ? 'PASS' : 'FAIL'} (soft ${s.soft.toFixed(2)}) answer ${JSON.stringify(s.predicted_answer)}`;
  const sections: Array<[string, PairCategory, boolean]> = [
    ['Regressed (passed before, fail now)', 'regressed', true],
    ['Persistent failures', 'persistent_fail', true],
    ['Improved', 'improved', true],
    ['Stable successes', 'stable_success', false],
  ];
  const out = [
    `${pairs.length} tasks: improved ${by('improved').length}, regressed ${by('regressed').length}, persistent failures ${by('persistent_fail').length}, stable successes ${by('stable_success').length}.`,
  ];
  for (const [title, cat, withTraj] of sections) {
    out.push('', `### ${title}`);
    const list = by(cat);
    if (list.length === 0) out.push('(none)');
    for (const p of list) {
      out.push(`#### id=${p.id} (${p.category})`, `task: ${excerpt(p.task, 400)}`);
      out.push(`previous: ${pass(p.prev)}`, `current: ${pass(p.curr)}`);
      if (p.curr.fail_reason) out.push(`current failure: ${excerpt(p.curr.fail_reason, 300)}`);
      if (p.prev.fail_reason && !p.prev.hard)
        out.push(`previous failure: ${excerpt(p.prev.fail_reason, 300)}`);
      if (withTraj)
        out.push(
          'previous reply:',
          '```',
          p.prev_trajectory,
          '```',
          'current reply:',
          '```',
          p.curr_trajectory,
          '```',
        );
    }
  }
  return out.join('\n');
}

/**
 * Roll out the same sampled train items under the previous epoch's skill and the current one
 * (concurrently), and pair the outcomes. `changed` policy tops up from the rest of the train split
 * in waves until it has enough changed pairs or runs out.
 */
export async function longitudinalPairs(
  ctx: RunContext,
  args: { train: readonly TaskItem[]; epoch: number; prevSkill: string; currSkill: string; dir: string },
): Promise<{ kept: ComparisonPair[]; all: ComparisonPair[] }> {
  const s = ctx.settings;
  const n = Math.min(s.slowUpdateSamples, args.train.length);
  const seed = s.seed + args.epoch * 2000;
  const order = buildTrainBatch(args.train, args.train.length, seed).map((i) => withShuffledChoices(i, seed));
  const run = async (items: readonly TaskItem[], skill: string, dir: string): Promise<RolloutResult[]> =>
    rolloutFor(ctx, items, skill, dir, 'slow_rollout');
  const pairsFor = async (items: readonly TaskItem[], sub: string): Promise<ComparisonPair[]> => {
    const [prev, curr] = await Promise.all([
      run(items, args.prevSkill, join(args.dir, STEP_DIR.slowRolloutPrev, sub)),
      run(items, args.currSkill, join(args.dir, STEP_DIR.slowRolloutCurr, sub)),
    ]);
    return buildPairs(prev, curr, s.trajectoryChars);
  };
  const all = await pairsFor(order.slice(0, n), '');
  let kept = applyPairPolicy(all, s.pairPolicy);
  if (s.pairPolicy === 'changed') {
    let next = n;
    while (kept.length < n && next < order.length) {
      const wave = order.slice(next, next + (n - kept.length));
      next += wave.length;
      const extra = await pairsFor(wave, 'topup');
      all.push(...extra);
      kept = applyPairPolicy(all, 'changed');
    }
    kept = kept.slice(0, n);
  }
  return { kept, all };
}

export function savePairs(dir: string, kept: ComparisonPair[], all: ComparisonPair[], policy: string): void {
  writeJsonAtomic(join(dir, STEP_FILE.pairs), kept);
  if (policy !== 'mixed') writeJsonAtomic(join(dir, STEP_FILE.pairsAll), all);
}

export function loadPairs(dir: string): ComparisonPair[] | undefined {
  return readArtifact<ComparisonPair[]>(join(dir, STEP_FILE.pairs), artifactSchemas.pairs);
}

export async function writeSlowGuidance(
  ctx: RunContext,
  prevSkill: string,
  currSkill: string,
  previousGuidance: string,
  pairs: ComparisonPair[],
): Promise<{ reasoning: string; content: string } | null> {
  const user = blocks(
    `## Skill at the End of the Previous Epoch\n<previous_skill>\n${optimizerSkillView(prevSkill, ctx.settings.packagePolicy)}\n</previous_skill>`,
    `## Skill Now\n<current_skill>\n${optimizerSkillView(currSkill, ctx.settings.packagePolicy)}\n</current_skill>`,
    `## Guidance Currently in the Protected Block\n${previousGuidance.trim() || '(empty: this is the first slow update)'}\nJudge whether it helped before you replace it.`,
    `## Longitudinal Comparison\n${renderComparison(pairs)}`,
  );
  const reply = await askOptimizer<{ reasoning?: string; slow_update_content: string }>(
    ctx,
    'slow_update',
    slowUpdateContract(),
    slowUpdateSystemPrompt(),
    user,
  );
  if (!reply.ok || !reply.value.slow_update_content.trim()) return null;
  return { reasoning: (reply.value.reasoning ?? '').trim(), content: reply.value.slow_update_content.trim() };
}

export async function writeMetaSkill(
  ctx: RunContext,
  prevSkill: string,
  currSkill: string,
  previousMeta: string,
  pairs: ComparisonPair[],
): Promise<{ reasoning: string; content: string } | null> {
  const user = blocks(
    `## Skill at the End of the Previous Epoch\n<previous_skill>\n${optimizerSkillView(prevSkill, ctx.settings.packagePolicy)}\n</previous_skill>`,
    `## Skill at the End of This Epoch\n<current_skill>\n${optimizerSkillView(currSkill, ctx.settings.packagePolicy)}\n</current_skill>`,
    `## Your Previous Memory\n${previousMeta.trim() || '(none yet)'}\nJudge whether it helped.`,
    `## Longitudinal Comparison\n${renderComparison(pairs)}`,
  );
  const reply = await askOptimizer<{ reasoning?: string; meta_skill_content: string }>(
    ctx,
    'meta_skill',
    metaSkillContract(),
    metaSkillSystemPrompt(),
    user,
  );
  if (!reply.ok || !reply.value.meta_skill_content.trim()) return null;
  return { reasoning: (reply.value.reasoning ?? '').trim(), content: reply.value.meta_skill_content.trim() };
}
