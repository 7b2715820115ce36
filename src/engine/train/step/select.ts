/**
 * ④ select: the edit budget for this step (scheduled, or the optimizer's own choice in autonomous
 * mode), then rank the merged edits and keep at most that many. Full rewrites skip it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic, writeJsonAtomic } from '../../store/atomic';
import { RUN_FILE, STEP_FILE } from '../../store/layout';
import { artifactSchemas } from '../../store/runSchemas';
import { itemsOf, type MergedPatch } from '../aggregate';
import { cachedArtifact } from '../artifacts';
import type { LoopContext } from '../loopContext';
import { decideLearningRate, rankAndSelect, type LrDecision } from '../select';
import { recordOf, type StageEnd, type StepStage, type StepWork } from './work';

async function run(loop: LoopContext, work: StepWork): Promise<StageEnd> {
  const { s, layout, state } = loop;
  const merged = work.merged!;
  let ranked: MergedPatch;
  let budget: number | null = null;
  let lrDecision: LrDecision | undefined;
  if (s.updateMode === 'full_rewrite_minibatch') {
    // Nothing to rank; the file is still written, as the reference does.
    ranked = merged;
    writeJsonAtomic(layout.stepFile(work.step, STEP_FILE.ranked), ranked);
  } else {
    if (s.lrControlMode === 'autonomous') {
      const score = work.rolloutScore!;
      lrDecision = await cachedArtifact(
        layout.stepFile(work.step, STEP_FILE.lrDecision),
        artifactSchemas.lrDecision,
        () =>
          work.timed('select_s', 'select', () =>
            decideLearningRate(
              loop.ctx,
              work.skill,
              merged,
              { rolloutN: work.results.length, hard: score.hard, soft: score.soft },
              work.bufferText,
              loop.metaSkill,
            ),
          ),
        (decision) => appendLrHistory(loop, work, decision),
      );
      budget = lrDecision.learning_rate;
    } else {
      budget = Math.max(s.minLearningRate, state.scheduler.step() - state.decay);
    }
    const edits = budget;
    ranked = await cachedArtifact(layout.stepFile(work.step, STEP_FILE.ranked), artifactSchemas.patch, () =>
      work.timed('select_s', 'select', () =>
        rankAndSelect(loop.ctx, work.skill, merged, edits, loop.metaSkill),
      ),
    );
  }
  work.ranked = ranked;
  work.rankedItems = itemsOf(ranked, s.updateMode);
  recordOf(work).ranked({
    n: work.rankedItems.length,
    budget,
    lrControlMode: s.updateMode === 'full_rewrite_minibatch' ? 'none' : s.lrControlMode,
    ...(lrDecision ? { lrDecision: lrDecision as unknown as Record<string, unknown> } : {}),
    supportCounts: work.rankedItems.map((i) => Number(i.support_count ?? 1)),
  });
  return 'next';
}

/** `lr_history.jsonl`: one line per autonomous decision, as the reference writes it. */
function appendLrHistory(loop: LoopContext, work: StepWork, decision: LrDecision): void {
  const path = loop.layout.file(RUN_FILE.lrHistory);
  const prior = existsSync(path) ? readFileSync(path, 'utf8') : '';
  writeFileAtomic(path, prior + JSON.stringify({ step: work.step, epoch: work.epoch, ...decision }) + '\n');
}

export const selectStage: StepStage = { name: 'select', run };
