/**
 * The slow update (reference §5.1): compare the previous and current epoch's skills on the same
 * train items, ask for guidance that prevents cross-epoch regressions, and put it in the protected
 * slow-update block: gated on selection (the paper's setting) or force-accepted. Epoch 1 only
 * injects the empty block.
 */
import { readSkillArtifact, readSkillArtifactIfAny, writeSkillArtifact } from '../../skill/package/artifacts';
import { round1 } from '../step/record';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { extractSlowUpdate, injectEmptySlowUpdate, replaceSlowUpdate, skillHash } from '../../skill/document';
import { writeJsonAtomic } from '../../store/atomic';
import { epochDirName, STEP_FILE } from '../../store/layout';
import { artifactSchemas, readArtifact } from '../../store/runSchemas';
import { loadPairs, longitudinalPairs, savePairs, writeSlowGuidance } from '../epochEnd';
import { announceCandidate, gateCandidate, gateEvidenceFields } from '../gateCandidate';
import type { LoopContext } from '../loopContext';
import type { EpochEndStage, EpochWork, PairsOutcome } from './index';
import type { EpochEndAction } from '../../../protocol/vocabulary';

type Guidance = Awaited<ReturnType<typeof writeSlowGuidance>>;

/** The meta skill compares against the skill before the slow update; a resume must still see it. */
function prepare(loop: LoopContext, ep: EpochWork): void {
  const path = join(loop.layout.epochDir('slow_update', ep.epoch), STEP_FILE.preSlowSkill);
  if (loop.state.slowDoneEpoch < ep.epoch) writeSkillArtifact(path, loop.state.current);
  ep.preSlowSkill = readSkillArtifactIfAny(path) ?? loop.state.current;
}

/** The stage, telling whoever waits on its pairs (the meta skill) when they are built or will not be. */
async function run(loop: LoopContext, ep: EpochWork): Promise<void> {
  let settle: (outcome: PairsOutcome) => void = () => undefined;
  ep.pairsPending = new Promise((resolve) => {
    settle = resolve;
  });
  try {
    await update(loop, ep, () => settle('built'));
    settle('ended');
  } catch (err) {
    settle('failed');
    throw err;
  }
}

async function update(loop: LoopContext, ep: EpochWork, pairsBuilt: () => void): Promise<void> {
  const { state, layout, s } = loop;
  const { epoch, lastStep } = ep;
  const dir = layout.epochDir('slow_update', epoch);
  const resultPath = join(dir, STEP_FILE.slowResult);
  const candidatePath = join(dir, STEP_FILE.candidate);
  const label = `slow_update_${epochDirName(epoch)}`;
  const placeholder = `slow_update_placeholder_${epochDirName(epoch)}`;
  const done = readArtifact<{ action: string; selection_score?: number }>(
    resultPath,
    artifactSchemas.slowResult,
  );
  if (done) {
    // Crashed after the stage wrote its result but before the state commit: re-apply it.
    if (done.action === 'inject_placeholder') {
      state.applyVerdict(
        done.action,
        injectEmptySlowUpdate(state.current),
        state.currentScore,
        lastStep,
        placeholder,
      );
    } else if (existsSync(candidatePath)) {
      const score = done.selection_score ?? state.currentScore;
      state.applyVerdict(done.action, readSkillArtifact(candidatePath), score, lastStep, label);
    }
    ep.pairs = loadPairs(dir);
    return commit(loop, epoch, lastStep);
  }
  if (epoch === 1) {
    state.current = injectEmptySlowUpdate(state.current);
    state.currentOrigin = placeholder;
    writeJsonAtomic(resultPath, { action: 'inject_placeholder' satisfies EpochEndAction, epoch: 1 });
    return commit(loop, epoch, lastStep);
  }
  const t0 = Date.now();
  const { kept, all } = await longitudinalPairs(loop.ctx, {
    train: loop.input.splits.train,
    epoch,
    prevSkill: ep.prevSkill,
    currSkill: state.current,
    dir,
  });
  savePairs(dir, kept, all, s.pairPolicy);
  ep.pairs = kept;
  pairsBuilt();
  const previous = extractSlowUpdate(state.current) ?? '';
  // Saved as soon as it arrives: a stop during the slow-update gate must not pay for it again.
  const guidancePath = join(dir, STEP_FILE.slowGuidance);
  const saved = readArtifact<{ guidance: Guidance }>(guidancePath, artifactSchemas.slowGuidance);
  const guidance = saved
    ? saved.guidance
    : await writeSlowGuidance(loop.ctx, ep.prevSkill, state.current, previous, kept);
  if (!saved) writeJsonAtomic(guidancePath, { guidance });
  const result: Record<string, unknown> = {
    reasoning: guidance?.reasoning ?? '',
    slow_update_content: guidance?.content ?? '',
    prev_hard: kept.filter((p) => p.prev.hard).length / Math.max(1, kept.length),
    curr_hard: kept.filter((p) => p.curr.hard).length / Math.max(1, kept.length),
    update_origin: 'slow_update_momentum',
    update_target: 'Prevent cross-epoch regressions and fix failures that persist across epochs.',
  };
  if (!guidance) {
    result.action = 'no_content' satisfies EpochEndAction;
  } else {
    const candidate = replaceSlowUpdate(state.current, guidance.content);
    writeSkillArtifact(candidatePath, candidate);
    result.candidate_hash = skillHash(candidate);
    announceCandidate(loop, {
      step: lastStep,
      epoch,
      origin: 'slow_update',
      previous: state.current,
      candidate,
      edits: [],
      path: candidatePath,
    });
    // Gated (the paper's setting) or force-accepted; either way the score is measured, so the
    // current score never goes stale (the reference keeps the pre-update score on force-accept).
    const gate = await gateCandidate(loop, {
      candidate,
      dir: layout.selectionDir(dir),
      step: lastStep,
      epoch,
      origin: 'slow_update',
      stage: 'slow_update',
      label,
      useGate: s.slowUpdateGate,
    });
    result.action = gate.action;
    result.selection_hard = gate.sel.score.hard;
    result.selection_soft = gate.sel.score.soft;
    result.selection_score = gate.sel.projected;
    Object.assign(result, gateEvidenceFields(gate));
  }
  result.time_s = round1((Date.now() - t0) / 1000);
  writeJsonAtomic(resultPath, result);
  commit(loop, epoch, lastStep);
}

function commit(loop: LoopContext, epoch: number, lastStep: number): void {
  loop.state.slowDoneEpoch = epoch;
  loop.files.writeSkill(lastStep, loop.state.current);
  loop.files.writeBest(loop.state.best);
  loop.state.save();
}

export const slowUpdateStage: EpochEndStage = {
  name: 'slow_update',
  enabled: (s) => s.useSlowUpdate,
  done: (state, epoch) => state.slowDoneEpoch >= epoch,
  prepare,
  run,
};
