import { round1 } from './record';
import type { StageName } from '../../../protocol/vocabulary';
import type { TrainBatch } from '../../data/plan';
import { renderStepBuffer } from '../stepBuffer';
import { commitStep } from '../commitStep';
import type { Fallback, LoopContext } from '../loopContext';
import { adoptSpeculation } from '../speculate';
import { runStages } from './pipeline';
import { recordOf, type StepWork } from './work';

/** One step: its stages in order, then the commit (also when a stage ended it with a skip). */
export async function runStep(
  loop: LoopContext,
  at: {
    step: number;
    epoch: number;
    stepInEpoch: number;
    batches: readonly TrainBatch[];
    /** The baseline beside step 1 (StepWork.beside). */
    beside?: () => Promise<void>;
  },
): Promise<void> {
  const started = Date.now();
  loop.input.ledger.track(at.step, 'step');
  await adoptSpeculation(loop, { step: at.step, skill: loop.state.current });
  const fallbacks: Fallback[] = [];
  const unsubscribe = loop.onFallback((f) => fallbacks.push(f));
  try {
    const timing: Record<string, number> = {};
    const work: StepWork = {
      ...at,
      skill: loop.state.current,
      bufferText: renderStepBuffer(loop.state.buffer),
      dir: loop.layout.stepDir(at.step),
      timing,
      timed: async <T>(key: string, stage: StageName, fn: () => Promise<T>): Promise<T> => {
        const t = performance.now();
        const v = await loop.stage(at.step, at.epoch, stage, fn);
        timing[key] = round1((timing[key] ?? 0) + (performance.now() - t) / 1000);
        return v;
      },
      results: [],
      raw: [],
      rankedItems: [],
      candidateEdits: [],
      humanRejected: [],
    };
    const skipped = await runStages(loop, work);
    await at.beside?.();
    if (skipped) recordOf(work).skipped(skipped);
    commitStep(loop, work, { started, fallbacks });
  } finally {
    unsubscribe();
  }
}
