/**
 * The activation track at each epoch end (activation.enabled): the description is trained on
 * trigger queries by its own gate (src/engine/activation/track.ts) while the steps train the body
 * on outcomes. A kept description is written into the current and the best skill alike (it is
 * judged on triggering, not on the selection score), so the next steps, the snapshots and
 * best_skill.md carry it. The round's record goes to activation_history.json and the
 * `activation/verdict` event.
 */
import { join } from 'node:path';
import type { ActivationRecord } from '../../../protocol/records';
import { isAccepted } from '../../../protocol/vocabulary';
import { activationRound } from '../../activation/track';
import { withDescription } from '../../skill/description';
import { writeJsonAtomic } from '../../store/atomic';
import { RUN_FILE, STEP_FILE } from '../../store/layout';
import { artifactSchemas, readArtifact } from '../../store/runSchemas';
import type { LoopContext } from '../loopContext';
import type { EpochEndStage, EpochWork } from './index';

/** The records of the epochs done so far. */
export function readActivationHistory(loop: LoopContext): ActivationRecord[] {
  return (
    readArtifact<ActivationRecord[]>(
      loop.layout.file(RUN_FILE.activationHistory),
      artifactSchemas.activationHistory,
    ) ?? []
  );
}

async function run(loop: LoopContext, ep: EpochWork): Promise<void> {
  const plan = loop.input.activation;
  if (!plan) throw new Error('activation.enabled without an activation plan (prepareRun makes it)');
  const { state, layout } = loop;
  const dir = layout.epochDir('activation', ep.epoch);
  const resultPath = join(dir, STEP_FILE.activationResult);
  // A result written before a crash is applied again rather than recomputed.
  const saved = readArtifact<ActivationRecord>(resultPath, artifactSchemas.activationHistory.element);
  const record =
    saved ??
    (await activationRound(loop.ctx, plan, { skill: state.current, epoch: ep.epoch, step: ep.lastStep, dir }))
      .record;
  if (!saved) writeJsonAtomic(resultPath, record);
  if (isAccepted(record.action)) {
    state.current = withDescription(state.current, record.description_after);
    state.best = withDescription(state.best, record.description_after);
  }
  const history = readActivationHistory(loop).filter((r) => r.epoch !== ep.epoch);
  writeJsonAtomic(layout.file(RUN_FILE.activationHistory), [...history, record]);
  loop.ctx.emit({ type: 'activation/verdict', record });
  state.activationDoneEpoch = ep.epoch;
  loop.files.writeSkill(ep.lastStep, state.current);
  loop.files.writeBest(state.best);
  state.save();
}

export const activationStage: EpochEndStage = {
  name: 'activation',
  enabled: (s) => s.useActivation,
  done: (state, epoch) => state.activationDoneEpoch >= epoch,
  run,
};
