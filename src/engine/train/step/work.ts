/** The work sheet a step's stages share, and the stage interface (see pipeline.ts). */
import type { CandidateEdit } from '../../../protocol/events';
import type { RolloutResult, Score } from '../../../protocol/records';
import type { SkipAction, StageName } from '../../../protocol/vocabulary';
import type { TrainBatch } from '../../data/plan';
import type { Item, MergedPatch } from '../aggregate';
import type { GateOutcome } from '../gateCandidate';
import type { LoopContext } from '../loopContext';
import type { RawPatch } from '../reflect';
import type { UpdateOutcome } from '../update';
import type { StepRecordBuilder } from './record';

/** What a step's stages know so far. Fields are set by the stage named beside them. */
export interface StepWork {
  readonly step: number;
  readonly epoch: number;
  readonly stepInEpoch: number;
  readonly batches: readonly TrainBatch[];
  /**
   * The baseline beside step 1: starts it (once; step 1's requests leave first) and settles when the
   * state this step's record and gate read is final.
   */
  readonly beside?: () => Promise<void>;
  /** The skill at the start of the step, and the step buffer as the optimizer sees it. */
  readonly skill: string;
  readonly bufferText: string;
  /** `steps/step_NNNN/` */
  readonly dir: string;
  readonly timing: Record<string, number>;
  /** Runs `fn` as `stage`, adding its seconds to `timing[key]`. */
  timed<T>(key: string, stage: StageName, fn: () => Promise<T>): Promise<T>;
  /** rolloutReflect */
  record?: StepRecordBuilder;
  results: RolloutResult[];
  raw: RawPatch[];
  rolloutScore?: Score;
  /** aggregate */
  merged?: MergedPatch;
  /** select */
  ranked?: MergedPatch;
  rankedItems: Item[];
  /** update */
  update?: UpdateOutcome;
  candidate?: string;
  candidatePath?: string;
  candidateEdits: CandidateEdit[];
  /** humanFirst: the candidate the gate scores (the kept edits only), and the edits turned down. */
  gated?: string;
  humanRejected: Array<{ id: string; reason?: string }>;
  /** gate */
  gate?: GateOutcome;
}

/** `next` hands the work to the following stage; a skip action ends the step without a gate. */
export type StageEnd = 'next' | SkipAction;

export interface StepStage {
  readonly name: string;
  run(loop: LoopContext, work: StepWork): Promise<StageEnd>;
}

/** The record builder, which the first stage always creates. */
export function recordOf(work: StepWork): StepRecordBuilder {
  if (!work.record) throw new Error(`step ${work.step}: the rollout stage did not create the step record`);
  return work.record;
}
