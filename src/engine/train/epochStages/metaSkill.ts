/**
 * The meta skill (reference §5.2): optimizer-side memory of what helped across epochs, written from
 * the comparison of the previous and current epoch's skills and read by the next epoch's prompts.
 */
import { round1 } from '../step/record';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../store/atomic';
import { STEP_FILE } from '../../store/layout';
import { artifactSchemas, readArtifact } from '../../store/runSchemas';
import { loadPairs, longitudinalPairs, savePairs, writeMetaSkill } from '../epochEnd';
import type { LoopContext } from '../loopContext';
import { journaledClient } from '../replyJournal';
import type { EpochEndStage, EpochWork } from './index';
import type { EpochEndAction } from '../../../protocol/vocabulary';

async function run(loop: LoopContext, ep: EpochWork): Promise<void> {
  const { state, layout, s } = loop;
  const { epoch } = ep;
  const dir = layout.epochDir('meta_skill', epoch);
  const resultPath = join(dir, STEP_FILE.metaSkillResult);
  const done = readArtifact<{ action: string; meta_skill_content?: string }>(
    resultPath,
    artifactSchemas.metaSkillResult,
  );
  if (done) {
    if (done.meta_skill_content) state.metaSkill = done.meta_skill_content;
    ep.metaAction = done.action;
    return;
  }
  let result: Record<string, unknown>;
  if (epoch === 1) {
    result = { action: 'skip_first_epoch' satisfies EpochEndAction, epoch: 1 };
  } else if (epoch === s.numEpochs) {
    // The reference writes one here that nothing ever reads; we save the calls.
    result = { action: 'skip_last_epoch' satisfies EpochEndAction, epoch };
  } else {
    // Beside the slow update: its pairs are this stage's input (a failed slow update fails the run).
    if (ep.pairsPending && (await ep.pairsPending) === 'failed' && !ep.pairs) return;
    const t0 = Date.now();
    const currSkill = ep.preSlowSkill ?? state.current;
    let pairs = ep.pairs ?? loadPairs(layout.epochDir('slow_update', epoch));
    if (!pairs) {
      const { kept, all } = await longitudinalPairs(loop.ctx, {
        train: loop.input.splits.train,
        epoch,
        prevSkill: ep.prevSkill,
        currSkill,
        dir,
      });
      savePairs(dir, kept, all, s.pairPolicy);
      pairs = kept;
    }
    const optimizer = journaledClient(loop.ctx.optimizer, join(dir, STEP_FILE.metaSkillReplies));
    const memory = await writeMetaSkill(
      { ...loop.ctx, optimizer },
      ep.prevSkill,
      currSkill,
      state.metaSkill,
      pairs,
    );
    result = memory
      ? {
          reasoning: memory.reasoning,
          meta_skill_content: memory.content,
          action: 'write_meta_skill' satisfies EpochEndAction,
        }
      : { action: 'no_content' satisfies EpochEndAction };
    result.time_s = round1((Date.now() - t0) / 1000);
    if (memory) state.metaSkill = memory.content;
  }
  writeJsonAtomic(resultPath, result);
  // The result now holds what the replies said: keep it once (the journal only bridged the gap).
  rmSync(join(dir, STEP_FILE.metaSkillReplies), { force: true });
  ep.metaAction = String(result.action);
}

export const metaSkillStage: EpochEndStage = {
  name: 'meta_skill',
  enabled: (s) => s.useMetaSkill,
  // The result file is the stage's own resume point.
  done: () => false,
  run,
  // It needs only the slow update's pairs: it runs beside the slow update's guidance call and gate.
  overlaps: 'slow_update',
  // Its stage starts once the slow update's pairs are built (or will not be).
  ready: (ep) => ep.pairsPending ?? Promise.resolve(),
};
