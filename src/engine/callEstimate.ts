/** How many model calls a run makes at most, per step, per epoch end and once (validate, the start dialog, the dollar range). */
import type { LoadedSplits } from './data/splits';
import type { TrainSettings } from './train/settings';

export interface CallEstimate {
  perStep: Record<string, number>;
  perEpochEnd: Record<string, number>;
  once: Record<string, number>;
  total: number;
}

export function estimateCalls(settings: TrainSettings, splits: LoadedSplits, spe: number): CallEstimate {
  const batch = Math.min(settings.batchSize, splits.train.length) * settings.accumulation;
  // Every repeat of a selection item is a call of its own.
  const sel =
    (settings.selEnvNum > 0 ? Math.min(settings.selEnvNum, splits.val.length) : splits.val.length) *
    Math.max(1, settings.repeats);
  const analysts = (Math.ceil(batch / settings.minibatchSize) + 1) * 1;
  const perStep: Record<string, number> = {
    rollout: batch,
    analyst: analysts,
    merge: Math.max(0, Math.ceil(analysts / settings.mergeBatchSize)) + 1,
    ranking: settings.updateMode === 'full_rewrite_minibatch' ? 0 : 1,
    ...(settings.lrControlMode === 'autonomous' ? { lr_autonomous: 1 } : {}),
    ...(settings.updateMode === 'rewrite_from_suggestions' ? { rewrite: 1 } : {}),
    // At most: hypotheses, every refinement round, and the final patch.
    ...(settings.deepReflect.enabled ? { deep_reflect: settings.deepReflect.rounds + 2 } : {}),
    // At most one consolidation of the execution-notes appendix per step.
    ...(settings.skillAware.enabled && settings.skillAware.consolidateThreshold > 0
      ? { appendix_consolidate: 1 }
      : {}),
    selection: sel,
  };
  const samples = Math.min(settings.slowUpdateSamples, splits.train.length);
  const perEpochEnd: Record<string, number> = {
    ...(settings.useSlowUpdate ? { slow_rollout: 2 * samples, slow_update: 1, selection: sel } : {}),
    ...(settings.useMetaSkill ? { meta_skill: 1 } : {}),
    ...(settings.useMetaReflect ? { meta_reflect: 1 + sel } : {}),
  };
  const test = settings.evalTest
    ? settings.testEnvNum > 0
      ? Math.min(settings.testEnvNum, splits.test.size)
      : splits.test.size
    : 0;
  const once: Record<string, number> = {
    baseline: sel,
    final_selection: settings.evalTest ? sel : 0,
    test: 3 * test,
    ...(settings.noSkillBaseline && settings.evalTest ? { no_skill: sel + test } : {}),
  };
  // Tasks with natural-language expectations cost one judge call per target call (scoring/judge.ts).
  const all = [...splits.train, ...splits.val, ...splits.test.unsealForEvaluation()];
  const share = all.length
    ? all.filter((t) => t.assertions?.some((a) => a.kind === 'judge')).length / all.length
    : 0;
  if (share > 0) {
    const targetCalls = (r: Record<string, number>, keys: string[]): number =>
      Math.ceil(keys.reduce((n, k) => n + (r[k] ?? 0), 0) * share);
    perStep.judge = targetCalls(perStep, ['rollout', 'selection']);
    perEpochEnd.judge = targetCalls(perEpochEnd, ['slow_rollout', 'selection', 'meta_reflect']);
    once.judge = targetCalls(once, ['baseline', 'final_selection', 'test', 'no_skill']);
  }
  const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
  const epochsWithLlm = Math.max(0, settings.numEpochs - 1);
  const total = sum(perStep) * spe * settings.numEpochs + sum(perEpochEnd) * epochsWithLlm + sum(once);
  return { perStep, perEpochEnd, once, total };
}
