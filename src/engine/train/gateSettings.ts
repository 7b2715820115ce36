import type { SkillOptConfig } from '../config/schema';
import { SkillOptError } from '../errors';
import type { GatePower } from '../../protocol/records';
import type { GateSettings, TrainSettings } from './settings';

/**
 * The gate's settings, with the combinations that cannot be honoured refused before any spending:
 * each names the key, the reason and what to set instead.
 */
export function gateSettingsFromConfig(cfg: SkillOptConfig): GateSettings {
  const e = cfg.evaluation;
  const refuse = (key: string, message: string, fix: string): never => {
    throw new SkillOptError('config', message, { key, fix });
  };
  if (e.gate_test === 'strict' && e.on_inconclusive !== 'reject')
    refuse(
      'evaluation.on_inconclusive',
      `on_inconclusive: ${e.on_inconclusive} needs a gate that can be inconclusive, but gate_test is strict`,
      'set evaluation.gate_test: paired, or remove evaluation.on_inconclusive',
    );
  if (e.gate_test === 'paired' && e.use_semantic_density)
    refuse(
      'evaluation.use_semantic_density',
      'the paired gate tests per-item score differences, and the semantic-density bonus belongs to no item',
      'set evaluation.use_semantic_density: false, or evaluation.gate_test: strict',
    );
  if (e.on_inconclusive === 'ask' && cfg.review.mode !== 'gate-then-human')
    refuse(
      'evaluation.on_inconclusive',
      `on_inconclusive: ask needs someone to ask after the gate, but review.mode is ${cfg.review.mode}`,
      'set review.mode: gate-then-human, or evaluation.on_inconclusive: reject or more_repeats',
    );
  if (e.on_inconclusive === 'more_repeats' && e.max_repeats <= e.repeats)
    refuse(
      'evaluation.max_repeats',
      `on_inconclusive: more_repeats needs a cap above evaluation.repeats (${e.repeats}), got max_repeats ${e.max_repeats}`,
      `set evaluation.max_repeats to more than ${e.repeats} (each extra repeat is one more paid call per selection item, for both skills)`,
    );
  if (e.max_repeats > 0 && e.on_inconclusive !== 'more_repeats')
    refuse(
      'evaluation.max_repeats',
      `max_repeats caps the repeats of on_inconclusive: more_repeats, but on_inconclusive is ${e.on_inconclusive}`,
      'set evaluation.on_inconclusive: more_repeats (with evaluation.gate_test: paired), or remove evaluation.max_repeats',
    );
  return {
    test: e.gate_test,
    alpha: e.alpha,
    onInconclusive: e.on_inconclusive,
    maxRepeats: e.max_repeats,
    ...(e.max_item_regressions !== undefined ? { maxItemRegressions: e.max_item_regressions } : {}),
  };
}

/**
 * The power check's inputs: the selection items a gate compares on (evaluation.sel_env_num caps the
 * split), the repeats, and alpha, halved when `more_repeats` looks twice. None without a gate.
 */
export function gatePower(s: TrainSettings, selectionItems: number): GatePower | undefined {
  // No gate (use_gate: false): nothing is told from noise, so there is no power to state.
  if (!s.useGate) return undefined;
  return {
    test: s.gate.test,
    items: s.selEnvNum > 0 ? Math.min(s.selEnvNum, selectionItems) : selectionItems,
    repeats: s.repeats,
    alpha: s.gate.onInconclusive === 'more_repeats' ? s.gate.alpha / 2 : s.gate.alpha,
    ...(s.gateMetric !== 'hard' ? { graded: true } : {}),
  };
}
