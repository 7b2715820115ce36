/** How many model calls a run makes at most, per step, per epoch end and once (validate, the start dialog, the dollar range). */
import type { LoadedSplits } from './data/splits';
import type { TrainSettings } from './train/settings';

export interface CallEstimate {
  perStep: Record<string, number>;
  perEpochEnd: Record<string, number>;
  once: Record<string, number>;
  total: number;
  /**
   * The most target calls one item makes (document tool turns, refinement turns); the target
   * stages above count that many per item. Absent for one call per item.
   */
  targetTurns?: number;
}

/** Stages whose calls go to the target; every other stage is the optimizer's. */
export const TARGET_STAGES: ReadonlySet<string> = new Set([
  'rollout',
  'selection',
  'slow_rollout',
  'baseline',
  'final_selection',
  'test',
  'no_skill',
  'meta_reflect_selection',
  'trigger',
]);

/** Target stages whose items may take several calls (tool or refinement turns); trigger runs do not. */
const TURNED_STAGES: ReadonlySet<string> = new Set([...TARGET_STAGES].filter((s) => s !== 'trigger'));

/** The same estimate at one target call per item: the low end of a multi-turn run's range. */
function oneCallPerItem(estimate: CallEstimate): CallEstimate {
  const turns = estimate.targetTurns ?? 1;
  if (turns <= 1) return estimate;
  const per = (r: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, TURNED_STAGES.has(k) ? v / turns : v]));
  const { targetTurns: _turns, ...rest } = estimate;
  return {
    ...rest,
    perStep: per(estimate.perStep),
    perEpochEnd: per(estimate.perEpochEnd),
    once: per(estimate.once),
  };
}

/**
 * The low end's calls: only those every run to its end makes, each item answered in one call.
 * A step's rollouts (the epoch plan's items, `rollouts` over the whole run) and one analyst (the
 * failure or the success analyst: a step with no edit makes nothing more); the baseline's
 * selection; the test split for the initial and the best skill (the final skill is often the best
 * and shares its rows) and the no-skill evaluations. Everything a step or an epoch end does only
 * when it has a candidate (selection, merges, ranking, rewrite, consolidation, slow update, meta
 * skill, meta reflect), the final selection (cached when the final skill was scored) and judge
 * calls are left out: a run that proposes nothing makes none of them.
 */
export function leastCalls(estimate: CallEstimate, rollouts: number): CallEstimate {
  const one = oneCallPerItem(estimate);
  const zero = (r: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.keys(r).map((k) => [k, 0]));
  const perStep = { ...zero(one.perStep), ...(one.perStep.analyst ? { analyst: 1 } : {}) };
  const tests = (one.once.test ?? 0) / 3;
  const once = {
    ...zero(one.once),
    rollout: rollouts,
    baseline: one.once.baseline ?? 0,
    test: 2 * tests,
    ...(one.once.no_skill ? { no_skill: one.once.no_skill } : {}),
  };
  return { ...one, perStep, perEpochEnd: zero(one.perEpochEnd), once };
}

export function estimateCalls(
  settings: TrainSettings,
  splits: LoadedSplits,
  spe: number,
  /** The most target calls per item (train/turns: `maxTargetCalls`). */
  targetTurns = 1,
): CallEstimate {
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
    // Meta reflect asks the optimizer once, then scores its candidate on the selection split.
    ...(settings.useMetaReflect ? { meta_reflect: 1, meta_reflect_selection: sel } : {}),
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
    perEpochEnd.judge = targetCalls(perEpochEnd, ['slow_rollout', 'selection', 'meta_reflect_selection']);
    once.judge = targetCalls(once, ['baseline', 'final_selection', 'test', 'no_skill']);
  }
  // A judge reads an item's final answer once; the target may take several calls to give it.
  if (targetTurns > 1) {
    for (const r of [perStep, perEpochEnd, once]) {
      for (const k of Object.keys(r)) if (TURNED_STAGES.has(k)) r[k] *= targetTurns;
    }
  }
  const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
  const epochsWithLlm = Math.max(0, settings.numEpochs - 1);
  const total = sum(perStep) * spe * settings.numEpochs + sum(perEpochEnd) * epochsWithLlm + sum(once);
  return { perStep, perEpochEnd, once, total, ...(targetTurns > 1 ? { targetTurns } : {}) };
}
