/**
 * Keys that act only while another key switches their feature on (the slow update's sampling, the
 * semantic-density term, the mixed gate's weight): set away from their defaults while it is off,
 * one line says they have no effect, where the reference reads past them unsaid.
 */
import { keysSet } from '../idleKeys';
import type { SkillOptConfig } from './index';
import { evaluationFields, modelFields, optimizerFields } from './sections';

type OptimizerKey = keyof typeof optimizerFields;
type EvaluationKey = keyof typeof evaluationFields;
type ModelKey = keyof typeof modelFields;

interface Dependent {
  /** Why the keys are idle, or undefined when their feature is on. */
  off: (c: SkillOptConfig) => string | undefined;
  /** What to do instead (`it`/`them` filled in). */
  fix: (them: string) => string;
  /** What the keys still act on while `off` holds, when not nothing (the line then says so). */
  still?: (c: SkillOptConfig) => string | undefined;
  optimizer?: OptimizerKey[];
  evaluation?: EvaluationKey[];
  model?: ModelKey[];
}

const DEPENDENTS: Dependent[] = [
  {
    // The longitudinal pairs are sampled for the slow update and for the meta-skill alike.
    off: (c) =>
      !c.optimizer.use_slow_update && !c.optimizer.use_meta_skill
        ? 'optimizer.use_slow_update and optimizer.use_meta_skill are false'
        : undefined,
    fix: (them) => `turn one on or remove ${them}`,
    optimizer: ['slow_update_samples', 'longitudinal_pair_policy'],
  },
  {
    off: (c) => (!c.optimizer.use_slow_update ? 'optimizer.use_slow_update is false' : undefined),
    fix: (them) => `turn it on or remove ${them}`,
    optimizer: ['slow_update_gate_with_selection'],
  },
  {
    off: (c) => (!c.evaluation.use_semantic_density ? 'evaluation.use_semantic_density is false' : undefined),
    fix: (them) => `turn it on or remove ${them}`,
    evaluation: ['semantic_density_weight', 'leading_words'],
  },
  {
    off: (c) =>
      c.evaluation.gate_metric !== 'mixed'
        ? `evaluation.gate_metric is ${c.evaluation.gate_metric} (it weighs hard and soft for gate_metric: mixed)`
        : undefined,
    fix: (them) => `set gate_metric: mixed or remove ${them}`,
    evaluation: ['gate_mixed_weight'],
  },
  {
    // The reference reads it for rewrite_from_suggestions' call; we for both rewrite modes' calls.
    off: (c) =>
      c.optimizer.skill_update_mode === 'patch'
        ? "optimizer.skill_update_mode is patch (it caps the rewrite modes' replies)"
        : undefined,
    fix: (them) =>
      `set skill_update_mode: rewrite_from_suggestions or full_rewrite_minibatch, or remove ${them}`,
    model: ['rewrite_max_completion_tokens'],
  },
  {
    // Steps and the meta reflect are force-accepted; the slow update's own gate still decides with them.
    off: (c) =>
      !c.evaluation.use_gate
        ? 'evaluation.use_gate is false (steps and the meta reflect are force-accepted)'
        : undefined,
    still: (c) =>
      c.optimizer.use_slow_update && c.optimizer.slow_update_gate_with_selection
        ? "the slow update's gate (optimizer.slow_update_gate_with_selection)"
        : undefined,
    fix: (them) => `set use_gate: true or remove ${them}`,
    evaluation: ['gate_test', 'on_inconclusive', 'max_repeats', 'max_item_regressions', 'early_stop'],
  },
];

/** One warning per idle group: the path of its first key and the line naming them all. */
export function dependentKeyWarnings(c: SkillOptConfig): Array<{ path: [string, string]; message: string }> {
  const out: Array<{ path: [string, string]; message: string }> = [];
  for (const d of DEPENDENTS) {
    const why = d.off(c);
    if (!why) continue;
    const set: Array<[string, string]> = [
      ...keysSet(c.optimizer, optimizerFields, d.optimizer ?? []).map((k): [string, string] => [
        'optimizer',
        k,
      ]),
      ...keysSet(c.evaluation, evaluationFields, d.evaluation ?? []).map((k): [string, string] => [
        'evaluation',
        k,
      ]),
      ...keysSet(c.model, modelFields, d.model ?? []).map((k): [string, string] => ['model', k]),
    ];
    if (!set.length) continue;
    const many = set.length > 1;
    const still = d.still?.(c);
    const effect = still ? `${many ? 'act' : 'acts'} only on ${still}` : `${many ? 'have' : 'has'} no effect`;
    out.push({
      path: set[0],
      message: `${set.map(([s, k]) => `${s}.${k}`).join(', ')} ${effect} while ${why}; ${d.fix(many ? 'them' : 'it')}`,
    });
  }
  return out;
}
