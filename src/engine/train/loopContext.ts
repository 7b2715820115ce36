import type { StageName } from '../../protocol/vocabulary';
import type { ActivationPlan } from '../activation/plan';
import type { SealedSplit } from '../data/splits';
import type { TaskItem } from '../data/tasks';
import type { TaskDataDigest } from '../data/digest';
import { stepsPerEpoch } from '../data/plan';
import type { AccountingSnapshot } from '../llm/accounting';
import type { RunLedger } from '../llm/ledger';
import { EditBudgetScheduler } from '../optimizer/schedule';
import type { RunLayout } from '../store/layout';
import type { RunContext } from './context';
import type { Reviewer } from './review';
import { SelectionEvaluator } from './selection';
import type { TrainSettings } from './settings';
import { RunFiles } from './state';
import { TrainState } from './trainState';
import type { StepRecord } from '../../protocol/records';
import type { StopCap } from '../../protocol/events';

export type StageTokens = StepRecord['tokens'];
export interface Fallback {
  stage: string;
  reason: string;
}

export interface TrainInput {
  ctx: RunContext;
  /** `persist` writes a generated ratio split's files (after the folder's data check). */
  splits: { train: readonly TaskItem[]; val: readonly TaskItem[]; test: SealedSplit; persist?: () => void };
  initialSkill: string;
  /** Flat, redacted config written as config.json and into summary.json. */
  flatConfig: Record<string, unknown>;
  /** The task data's fingerprint, recorded at the start and checked on resume (sameData.ts). */
  taskData?: TaskDataDigest;
  /** Checked at every step boundary; returns a reason to stop, or null. */
  budgetCheck?: () => string | null;
  /** The spend cap the run has reached, if any: a stop on it says which cap to raise. */
  capReached?: () => StopCap | undefined;
  /** A spend or time cap is set: work that a cap must see first is not started beside other work. */
  budgetCapped?: boolean;
  /** The run's ledger: attributes calls to steps and gives each step's tokens over every process. */
  ledger: Pick<RunLedger, 'track' | 'within' | 'stepTokens'>;
  totalTokens: () => Record<string, unknown>;
  /** Accounting rows (per stage, role and model) for the report's spend by role. */
  accountingSnapshot: () => AccountingSnapshot;
  resumeCommand: string;
  /** How to cancel the provider batches a stop leaves out (`skillopt train … --cancel-batch`, Cancel Provider Batch). */
  cancelBatchCommand?: string;
  /** `--force`: resume under a changed config (not one that changes the data or epoch plan). */
  forceConfig?: boolean;
  /** The person in the loop; without one every review mode behaves like `auto`. */
  reviewer?: Reviewer;
  /** The activation track's plan (activation.enabled): the description trained on trigger queries. */
  activation?: ActivationPlan;
}

/**
 * What every stage of the loop shares: the run's context and settings, the state carried between
 * steps, the run folder, the selection evaluator, and the stage timer that emits stage events.
 */
export class LoopContext {
  readonly s: TrainSettings;
  readonly files: RunFiles;
  readonly layout: RunLayout;
  readonly state: TrainState;
  readonly selection: SelectionEvaluator;
  readonly stepsPerEpoch: number;
  readonly totalSteps: number;
  readonly started = Date.now();
  /** What evaluation.early_stop and speed.speculate did in this process (summary.json `speed`). */
  readonly speed = { selectionCallsSaved: 0, speculativeCalls: 0, speculativeCallsDiscarded: 0 };

  constructor(readonly input: TrainInput) {
    this.s = input.ctx.settings;
    this.files = new RunFiles(input.ctx.outDir);
    this.layout = this.files.layout;
    this.stepsPerEpoch = stepsPerEpoch(input.splits.train.length, this.s.batchSize, this.s.accumulation);
    this.totalSteps = this.s.numEpochs * this.stepsPerEpoch;
    const scheduler = new EditBudgetScheduler({
      kind: this.s.lrScheduler,
      maxLr: this.s.learningRate,
      minLr: this.s.minLearningRate,
      totalSteps: this.totalSteps,
    });
    this.state = new TrainState(this.files, scheduler, input.initialSkill);
    const selItems = this.s.selEnvNum > 0 ? input.splits.val.slice(0, this.s.selEnvNum) : input.splits.val;
    this.selection = new SelectionEvaluator(input.ctx, selItems, this.state.selectionCache, (saved) => {
      this.speed.selectionCallsSaved += saved;
    });
  }

  get ctx(): RunContext {
    return this.input.ctx;
  }

  /** Runs one stage between its `stage/started` and `stage/finished` events. */
  stage<T>(step: number, epoch: number, stage: StageName, fn: () => Promise<T>): Promise<T> {
    this.ctx.emit({ type: 'stage/started', step, epoch, stage });
    const t0 = performance.now();
    return fn().then((v) => {
      this.ctx.emit({ type: 'stage/finished', step, epoch, stage, seconds: (performance.now() - t0) / 1000 });
      return v;
    });
  }

  private readonly fallbackListeners = new Set<(f: Fallback) => void>();

  /** Listen to structured-reply fallbacks (a step records its own); returns the unsubscribe. */
  onFallback(fn: (f: Fallback) => void): () => void {
    this.fallbackListeners.add(fn);
    return () => this.fallbackListeners.delete(fn);
  }

  /** Called by the run context's recordFallback. */
  noteFallback(stage: string, reason: string): void {
    for (const fn of this.fallbackListeners) fn({ stage, reason });
  }

  /** The meta skill to pass to optimizer prompts, when one is active. */
  get metaSkill(): string | undefined {
    return this.state.metaSkill || undefined;
  }
}
