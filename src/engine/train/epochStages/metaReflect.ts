/**
 * Meta reflect: higher-level edits from the whole epoch's history, applied to a meta candidate
 * that goes through the same gate as a step's. Its gate decision is saved with the result so a
 * resumed run re-applies it instead of asking again.
 */
import { readSkillArtifact } from '../../skill/package/artifacts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../store/atomic';
import { epochDirName, STEP_FILE } from '../../store/layout';
import { artifactSchemas, readArtifact } from '../../store/runSchemas';
import { announceCandidate, gateCandidate, gateEvidenceFields, toCandidateEdits } from '../gateCandidate';
import type { LoopContext } from '../loopContext';
import { metaReflect } from '../metaReflect';
import type { EpochEndStage, EpochWork } from './index';
import type { EpochEndAction } from '../../../protocol/vocabulary';

async function run(loop: LoopContext, ep: EpochWork): Promise<void> {
  const { state, layout } = loop;
  const { epoch, lastStep } = ep;
  const dir = layout.epochDir('meta_reflect', epoch);
  const gatePath = join(dir, STEP_FILE.gateResult);
  const candidatePath = join(dir, STEP_FILE.candidate);
  const label = `meta_reflect_${epochDirName(epoch)}`;
  const saved = readArtifact<{ action: string; score: number }>(gatePath, artifactSchemas.gateResult);
  if (saved) {
    if (saved.action !== 'reject' && existsSync(candidatePath))
      state.applyVerdict(saved.action, readSkillArtifact(candidatePath), saved.score, lastStep, label);
  } else {
    const meta = await metaReflect(loop.ctx, {
      epoch,
      skill: state.current,
      history: state.history.filter((r) => r.epoch === epoch),
      stepBuffer: state.bufferEpoch === epoch ? state.buffer : [],
      ...(loop.metaSkill ? { metaSkill: loop.metaSkill } : {}),
      dir,
    });
    if (meta.candidate) {
      announceCandidate(loop, {
        step: lastStep,
        epoch,
        origin: 'meta_reflect',
        previous: state.current,
        candidate: meta.candidate,
        edits: toCandidateEdits(meta.edits, meta.report),
        path: candidatePath,
      });
      const gate = await gateCandidate(loop, {
        candidate: meta.candidate,
        dir: layout.selectionDir(dir),
        step: lastStep,
        epoch,
        origin: 'meta_reflect',
        stage: 'meta_reflect',
        label,
        useGate: loop.s.useGate,
      });
      writeJsonAtomic(gatePath, {
        action: gate.action,
        score: gate.sel.projected,
        selection_hard: gate.sel.score.hard,
        selection_soft: gate.sel.score.soft,
        ...gateEvidenceFields(gate),
      });
    } else {
      writeJsonAtomic(gatePath, {
        action: 'no_candidate' satisfies EpochEndAction,
        score: state.currentScore,
      });
    }
  }
  state.metaReflectDoneEpoch = epoch;
  loop.files.writeSkill(lastStep, state.current);
  loop.files.writeBest(state.best);
  state.save();
}

export const metaReflectStage: EpochEndStage = {
  name: 'meta_reflect',
  enabled: (s) => s.useMetaReflect,
  done: (state, epoch) => state.metaReflectDoneEpoch >= epoch,
  run,
};
