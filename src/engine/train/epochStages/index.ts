/**
 * The end of an epoch as a list of stages: meta reflect (gated higher-level edits), the slow
 * update (gated protected block) and the meta skill (optimizer-side memory). Each stage saves its
 * result in its epoch folder, so a resumed run skips what is done. Adding one is its module plus
 * one entry in EPOCH_END_STAGES.
 */
import { settleAll } from '../settleAll';
import type { StageName } from '../../../protocol/vocabulary';
import type { ComparisonPair } from '../epochEnd';
import type { LoopContext } from '../loopContext';
import type { TrainSettings } from '../settings';
import type { TrainState } from '../trainState';
import { activationStage } from './activation';
import { metaReflectStage } from './metaReflect';
import { metaSkillStage } from './metaSkill';
import { slowUpdateStage } from './slowUpdate';

export interface EpochWork {
  readonly epoch: number;
  /** The epoch's last step: epoch-end candidates and verdicts are reported under it. */
  readonly lastStep: number;
  /** The skill at the end of the previous epoch (the current one in epoch 1). */
  readonly prevSkill: string;
  /** slow update: the skill before it changed anything (the meta skill compares against it). */
  preSlowSkill?: string;
  /** slow update: the comparison pairs it built, reused by the meta skill. */
  pairs?: ComparisonPair[];
  /**
   * slow update, once it runs: settles when its pairs are built (`built`), when it ended without
   * building them (`ended`: epoch 1) or failed first (`failed`). The meta skill runs beside the slow
   * update's guidance and gate and waits on this for the pairs alone.
   */
  pairsPending?: Promise<PairsOutcome>;
  /** meta skill: what it did, for the epoch event. */
  metaAction?: string;
}

export type PairsOutcome = 'built' | 'ended' | 'failed';

export interface EpochEndStage {
  readonly name: StageName;
  /** Whether the config turns the stage on. */
  enabled(s: TrainSettings): boolean;
  /** Whether this epoch's result is already committed (a resumed run skips the stage). */
  done(state: TrainState, epoch: number): boolean;
  /** Runs whenever the stage is enabled, done or not: what later stages need from it. */
  prepare?(loop: LoopContext, ep: EpochWork): void;
  run(loop: LoopContext, ep: EpochWork): Promise<void>;
  /** Starts while this stage (run just before it) still runs, waiting for what it needs through EpochWork. */
  readonly overlaps?: StageName;
  /** When it overlaps: settles once what it needs is there, so its stage events say when it really runs. */
  ready?(ep: EpochWork): Promise<unknown>;
}

export const EPOCH_END_STAGES: readonly EpochEndStage[] = [
  metaReflectStage,
  slowUpdateStage,
  metaSkillStage,
  activationStage,
];

/** Runs the epoch-end stages in order, then commits the epoch. */
export async function runEpochEnd(loop: LoopContext, epoch: number): Promise<void> {
  const { state, s } = loop;
  const lastStep = epoch * loop.stepsPerEpoch;
  loop.input.ledger.track(lastStep, 'epoch_end');
  const ep: EpochWork = {
    epoch,
    lastStep,
    prevSkill: epoch >= 2 ? loop.files.readSkill((epoch - 1) * loop.stepsPerEpoch) : state.current,
  };
  // The stage before, not yet awaited: the next stage may overlap it.
  let previous: { name: StageName; running: Promise<void> | undefined } | undefined;
  for (const stage of EPOCH_END_STAGES) {
    if (!stage.enabled(s)) continue;
    const beside = previous && stage.overlaps === previous.name ? previous : undefined;
    if (!beside) await previous?.running;
    previous = undefined;
    stage.prepare?.(loop, ep);
    const start = (): Promise<void> => loop.stage(lastStep, epoch, stage.name, () => stage.run(loop, ep));
    const running = stage.done(state, epoch)
      ? undefined
      : beside && stage.ready
        ? stage.ready(ep).then(start)
        : start();
    if (beside) await settleAll([beside.running, running]);
    else previous = { name: stage.name, running };
  }
  await previous?.running;
  state.lastCompletedEpoch = epoch;
  state.save();
  loop.ctx.emit({
    type: 'epoch/finished',
    epoch,
    ...(s.useSlowUpdate ? { slowUpdate: state.currentOrigin } : {}),
    ...(ep.metaAction ? { metaSkill: ep.metaAction } : {}),
  });
}
