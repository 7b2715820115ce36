/** ⑤ update: apply the selected edits (or rewrite), save the candidate and announce it for review. */
import { writeSkillArtifact } from '../../skill/package/artifacts';
import { writeJsonAtomic } from '../../store/atomic';
import { STEP_FILE } from '../../store/layout';
import { keepDescription } from '../../skill/description';
import { skillHash } from '../../skill/document';
import { announceCandidate, toCandidateEdits } from '../gateCandidate';
import type { LoopContext } from '../loopContext';
import { updateSkill } from '../update';
import { recordOf, type StageEnd, type StepStage, type StepWork } from './work';

async function run(loop: LoopContext, work: StepWork): Promise<StageEnd> {
  const { layout } = loop;
  const update = await work.timed('update_s', 'update', () =>
    updateSkill(loop.ctx, work.skill, work.ranked!, work.bufferText),
  );
  if (update.candidate === null) return 'skip_no_rewrite';
  if (update.frontMatterRestored)
    loop.ctx.emit({
      type: 'warning',
      message: `Step ${work.step}: the rewrite's SKILL.md front matter was replaced by the current one: ${update.frontMatterRestored}.`,
    });
  // With the activation track on, the description is its alone: a body edit of it is undone.
  const candidate = loop.s.useActivation ? keepDescription(work.skill, update.candidate) : update.candidate;
  const path = layout.stepFile(work.step, STEP_FILE.candidate);
  writeSkillArtifact(path, candidate);
  if (update.report?.length)
    writeJsonAtomic(layout.stepFile(work.step, STEP_FILE.applyReport), update.report);
  if (update.artifact)
    writeJsonAtomic(layout.stepFile(work.step, update.artifact.file), update.artifact.value);
  recordOf(work).candidate({
    hash: skillHash(candidate),
    length: candidate.length,
    ...(update.changeSummary ? { changeSummary: update.changeSummary } : {}),
    ...(update.summary ? { applySummary: update.summary } : {}),
  });
  work.update = update;
  work.candidate = candidate;
  work.gated = candidate;
  work.candidatePath = path;
  work.candidateEdits = toCandidateEdits(update.edits, update.report, { details: true });
  announceCandidate(loop, {
    step: work.step,
    epoch: work.epoch,
    origin: 'step',
    previous: work.skill,
    candidate,
    edits: work.candidateEdits,
    path,
  });
  return 'next';
}

export const updateStage: StepStage = { name: 'update', run };
