import type { GateTestKind, OnInconclusive, ReviewMode } from '../../protocol/vocabulary';
import { DEFAULT_PACKAGE_POLICY, type PackageEditPolicy } from '../skill/package/policy';
import type { UpdateMode } from '../prompts/modes';

/** How the selection gate decides (evaluation.gate_test, alpha, on_inconclusive, max_repeats). */
export interface GateSettings {
  test: GateTestKind;
  alpha: number;
  onInconclusive: OnInconclusive;
  /** The repeats cap of on_inconclusive: more_repeats. */
  maxRepeats: number;
  /** evaluation.max_item_regressions: most items the candidate may break; undefined = no such rule. */
  maxItemRegressions?: number;
}

/**
 * Everything the training loop reads, in one typed object. Built from the validated config in
 * src/engine/train/fromConfig.ts, so the loop never digs through config sections itself.
 */
export interface TrainSettings {
  numEpochs: number;
  batchSize: number;
  accumulation: number;
  seed: number;

  minibatchSize: number;
  mergeBatchSize: number;
  analystWorkers: number;
  failureOnly: boolean;
  /** Deep reflection (issue #8): a few failures and successes cross-referenced over several turns. */
  deepReflect: {
    enabled: boolean;
    failures: number;
    successes: number;
    threshold: number;
    rounds: number;
    everyStep: boolean;
  };

  learningRate: number;
  minLearningRate: number;
  lrScheduler: 'constant' | 'linear' | 'cosine' | 'autonomous';
  lrControlMode: 'fixed' | 'autonomous' | 'none';
  updateMode: UpdateMode;
  anchorMode: 'strict' | 'reference';
  /** optimizer.package_edits: what edits of a skill package may change. */
  packagePolicy: PackageEditPolicy;
  decayOnReject: boolean;
  /** Meta reflect at epoch ends: higher-level edits from the epoch's history, gated like any candidate. */
  useMetaReflect: boolean;

  useSlowUpdate: boolean;
  slowUpdateSamples: number;
  slowUpdateGate: boolean;
  pairPolicy: 'mixed' | 'changed' | 'unchanged';
  useMetaSkill: boolean;
  /** activation.enabled: the description trained on trigger queries at each epoch end. */
  useActivation: boolean;
  /**
   * Skill-aware reflection (reference §5.4): analysts route execution lapses (the skill has the rule,
   * the target did not follow it) into notes for the protected appendix instead of body edits.
   */
  skillAware: { enabled: boolean; source: 'both' | 'failure_only'; consolidateThreshold: number };

  useGate: boolean;
  gateMetric: 'hard' | 'soft' | 'mixed';
  gateMixedWeight: number;
  semanticDensity: { enabled: boolean; weight: number; leadingWords?: string[] };
  selEnvNum: number;
  testEnvNum: number;
  evalTest: boolean;
  /** evaluation.no_skill_baseline: score the target with no skill at the end, on selection and test. */
  noSkillBaseline: boolean;
  patience: number;
  /** evaluation.repeats: samples per selection item; the item's score is their mean. */
  repeats: number;
  /** evaluation.early_stop: a selection evaluation stops once its verdict is certain (see earlyStop.ts). */
  earlyStop: boolean;
  /** speed.speculate: the next step's rollouts start under the current skill while the gate scores. */
  speculate: boolean;
  /** limits.target_concurrency: how many items an early-stopping evaluation sends at once. */
  targetConcurrency: number;
  gate: GateSettings;
  /** limits.max_errored_share: a batch with more errored target items than this stops the run. */
  maxErroredShare: number;

  reviewMode: ReviewMode;

  answerTag: string;
  targetSystemTemplate?: string;
  targetMaxTokens: number;
  targetTemperature?: number;
  optimizerMaxTokens: number;
  rewriteMaxTokens: number;
  /** Characters of a target reply shown per trajectory to the optimizer (head and tail kept). */
  trajectoryChars: number;
}

export const defaultTrainSettings: TrainSettings = {
  numEpochs: 4,
  batchSize: 40,
  accumulation: 1,
  seed: 42,
  minibatchSize: 8,
  mergeBatchSize: 8,
  analystWorkers: 16,
  failureOnly: false,
  deepReflect: { enabled: false, failures: 4, successes: 2, threshold: 0.25, rounds: 3, everyStep: false },
  learningRate: 4,
  minLearningRate: 2,
  lrScheduler: 'cosine',
  lrControlMode: 'fixed',
  updateMode: 'patch',
  anchorMode: 'strict',
  packagePolicy: DEFAULT_PACKAGE_POLICY,
  decayOnReject: false,
  useMetaReflect: false,
  useSlowUpdate: true,
  slowUpdateSamples: 20,
  slowUpdateGate: true,
  pairPolicy: 'mixed',
  useMetaSkill: true,
  useActivation: false,
  skillAware: { enabled: false, source: 'both', consolidateThreshold: 0 },
  useGate: true,
  gateMetric: 'hard',
  gateMixedWeight: 0.5,
  semanticDensity: { enabled: false, weight: 0.05 },
  selEnvNum: 0,
  testEnvNum: 0,
  evalTest: true,
  noSkillBaseline: true,
  patience: 0,
  repeats: 1,
  earlyStop: false,
  speculate: false,
  targetConcurrency: 32,
  gate: { test: 'strict', alpha: 0.05, onInconclusive: 'reject', maxRepeats: 0 },
  maxErroredShare: 0.5,
  reviewMode: 'auto',
  answerTag: 'answer',
  targetMaxTokens: 16384,
  optimizerMaxTokens: 16384,
  rewriteMaxTokens: 64000,
  trajectoryChars: 1200,
};
