import type { EngineEvent } from '../../protocol/events';
import type { Logger } from '../log';
import type { TargetBatch } from '../llm/batch/fromConfig';
import type { ModelClient } from '../llm/types';
import type { Scorer } from '../scoring/scorers';
import type { TrainSettings } from './settings';
import type { TargetTurns } from './turns/types';

/** What every stage function receives: settings, models, scorer, output root, and the run's signal. */
export interface RunContext {
  settings: TrainSettings;
  optimizer: ModelClient;
  target: ModelClient;
  /** The target as the run's start names it (`openai/gpt-5`, or an agent preset's CLI and model). */
  targetName?: string;
  scorer: Scorer;
  outDir: string;
  signal: AbortSignal;
  logger: Logger;
  emit(event: EngineEvent): void;
  /** How the target answers an item beyond one call (OfficeQA's document tools); absent = one call. */
  turns?: TargetTurns;
  /** The target's batch API, for the evaluations evaluation.batch_api sends through it. */
  batch?: TargetBatch;
  /** Every structured-reply fallback is recorded (accounting, step record, log), never silent. */
  recordFallback(stage: string, reason: string): void;
  /** A structured reply asked for again (counted in report.md's reliability section). */
  recordReask?(stage: string): void;
}
