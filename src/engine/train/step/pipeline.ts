/**
 * One training step as a list of stages (reference §1): rollout+reflect → aggregate → select →
 * update → human-first review → gate. Each stage reads what earlier stages put on the step's work
 * sheet and adds its own part; a stage may end the step early with a skip action. Adding a stage is
 * adding its module and one entry to STEP_STAGES (see docs/architecture.md). STEP_TAIL_STAGES run
 * after the last stage and after a skip alike (the skill-aware appendix flush, §5.4).
 */
import type { SkipAction } from '../../../protocol/vocabulary';
import { humanFirstStage } from '../humanReview';
import type { LoopContext } from '../loopContext';
import { aggregateStage } from './aggregate';
import { appendixStage } from './appendix';
import { gateStage } from './gate';
import { rolloutReflectStage } from './rolloutReflect';
import { selectStage } from './select';
import { updateStage } from './update';
import type { StepStage, StepWork } from './work';

export const STEP_STAGES: readonly StepStage[] = [
  rolloutReflectStage,
  aggregateStage,
  selectStage,
  updateStage,
  humanFirstStage,
  gateStage,
];

export const STEP_TAIL_STAGES: readonly StepStage[] = [appendixStage];

/** Runs the stages in order, then the tail; returns the skip action that ended the step early, if any. */
export async function runStages(loop: LoopContext, work: StepWork): Promise<SkipAction | undefined> {
  let skipped: SkipAction | undefined;
  for (const stage of STEP_STAGES) {
    const end = await stage.run(loop, work);
    if (end !== 'next') {
      skipped = end;
      break;
    }
  }
  for (const stage of STEP_TAIL_STAGES) await stage.run(loop, work);
  return skipped;
}
