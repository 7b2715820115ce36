import { readFileSync } from 'node:fs';
import { isSkillFolder } from '../skill/package/folder';
import { policyFromConfig } from '../skill/package/policy';
import type { SkillOptConfig } from '../config/schema';
import { SkillOptError } from '../errors';
import { gateSettingsFromConfig } from './gateSettings';
import type { TrainSettings } from './settings';
import { targetConcurrencyOf } from '../llm/limiter';

/** The loop's settings from a validated config (aliases are already normalised by the loader). */
export function settingsFromConfig(cfg: SkillOptConfig): TrainSettings {
  const o = cfg.optimizer;
  const updateMode = o.skill_update_mode;
  let template: string | undefined;
  if (cfg.env.target_system_prompt) {
    try {
      template = readFileSync(cfg.env.target_system_prompt, 'utf8');
    } catch (err) {
      throw new SkillOptError(
        'config',
        'cannot read the target system prompt file',
        {
          file: cfg.env.target_system_prompt,
          key: 'env.target_system_prompt',
          fix: 'point it at a text file that contains {skill} where the skill goes, or remove the key',
        },
        { cause: err },
      );
    }
    if (!template.includes('{skill}')) {
      throw new SkillOptError('config', 'the target system prompt template has no {skill} placeholder', {
        file: cfg.env.target_system_prompt,
        key: 'env.target_system_prompt',
        fix: 'add {skill} where the skill should be inserted',
      });
    }
  }
  return {
    numEpochs: cfg.train.num_epochs,
    batchSize: cfg.train.batch_size,
    accumulation: cfg.train.accumulation,
    seed: cfg.train.seed,
    minibatchSize: cfg.gradient.minibatch_size,
    mergeBatchSize: cfg.gradient.merge_batch_size,
    analystWorkers: cfg.gradient.analyst_workers,
    failureOnly: cfg.gradient.failure_only,
    deepReflect: {
      enabled: cfg.gradient.use_deep_reflect,
      failures: cfg.gradient.deep_reflect_failures,
      successes: cfg.gradient.deep_reflect_successes,
      threshold: cfg.gradient.deep_reflect_threshold,
      rounds: cfg.gradient.deep_reflect_rounds,
      everyStep: cfg.gradient.deep_reflect_every_step,
    },
    learningRate: o.learning_rate,
    minLearningRate: o.min_learning_rate,
    lrScheduler: o.lr_scheduler,
    lrControlMode: updateMode === 'full_rewrite_minibatch' ? 'none' : o.lr_control_mode,
    updateMode,
    anchorMode: o.anchor_mode,
    packagePolicy: policyFromConfig(o.package_edits, isSkillFolder(cfg.env.skill_init)),
    decayOnReject: o.decay_on_reject,
    useMetaReflect: o.use_meta_reflect,
    useSlowUpdate: o.use_slow_update,
    slowUpdateSamples: o.slow_update_samples,
    slowUpdateGate: o.slow_update_gate_with_selection,
    pairPolicy: o.longitudinal_pair_policy,
    useMetaSkill: o.use_meta_skill,
    useActivation: cfg.activation.enabled,
    skillAware: {
      enabled: o.use_skill_aware_reflection,
      source: o.skill_aware_appendix_source,
      consolidateThreshold: o.skill_aware_consolidate_threshold,
    },
    useGate: cfg.evaluation.use_gate,
    gateMetric: cfg.evaluation.gate_metric,
    gateMixedWeight: cfg.evaluation.gate_mixed_weight,
    semanticDensity: {
      enabled: cfg.evaluation.use_semantic_density,
      weight: cfg.evaluation.semantic_density_weight,
      ...(cfg.evaluation.leading_words ? { leadingWords: cfg.evaluation.leading_words } : {}),
    },
    selEnvNum: cfg.evaluation.sel_env_num,
    testEnvNum: cfg.evaluation.test_env_num,
    evalTest: cfg.evaluation.eval_test,
    noSkillBaseline: cfg.evaluation.no_skill_baseline,
    patience: cfg.evaluation.patience,
    repeats: cfg.evaluation.repeats,
    earlyStop: cfg.evaluation.early_stop,
    speculate: cfg.speed.speculate,
    targetConcurrency: targetConcurrencyOf(cfg),
    gate: gateSettingsFromConfig(cfg),
    maxErroredShare: cfg.limits.max_errored_share,
    reviewMode: cfg.review.mode,
    answerTag: cfg.env.answer_tag || 'answer',
    ...(template !== undefined ? { targetSystemTemplate: template } : {}),
    targetMaxTokens: cfg.env.max_completion_tokens,
    targetTemperature: cfg.model.target_temperature,
    optimizerMaxTokens: 16384,
    rewriteMaxTokens: cfg.model.rewrite_max_completion_tokens,
    trajectoryChars: 1200,
  };
}
