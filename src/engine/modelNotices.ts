/** What the target's settings mean for this backend, said once before anything is spent. */
import { keysSet } from './config/idleKeys';
import type { SkillOptConfig } from './config/schema';
import { envFields } from './config/schema/envFields';

/** Backends whose provider takes a sampling seed, so repeated samples can differ by seed. */
const SEEDED_BACKENDS: ReadonlySet<string> = new Set(['openai', 'azure_openai']);

/**
 * What repeated samples can vary on this target, said once (repeats are never silently alike): the
 * selection's evaluation.repeats, or the max_repeats the paired gate's more_repeats samples up to.
 */
export function repeatsNotice(kind: string, cfg: SkillOptConfig): string | undefined {
  const e = cfg.evaluation;
  const more = e.gate_test === 'paired' && e.on_inconclusive === 'more_repeats' && e.max_repeats > e.repeats;
  if ((e.repeats <= 1 && !more) || SEEDED_BACKENDS.has(kind)) return undefined;
  const key = e.repeats > 1 ? `evaluation.repeats: ${e.repeats}` : `evaluation.max_repeats: ${e.max_repeats}`;
  const t = cfg.model.target_temperature;
  if (kind === 'sim')
    return `${key}: the simulated target is deterministic, so its repeats give the same answers`;
  return `${key}: the ${kind} target takes no seed; repeats differ only by sampling (target temperature ${t ?? 'the provider default'})`;
}

/**
 * `env.max_turns` on an agent target, said once: the agent runs its own tool loop, which the key does
 * not bound. A chat target takes the reference's refinement turns (train/turns/fromConfig.ts).
 */
export function maxTurnsNotice(cfg: SkillOptConfig, agentTarget: boolean): string | undefined {
  const turns = cfg.env.max_turns;
  if (turns <= 1 || !agentTarget) return undefined;
  return `env.max_turns: ${turns} does not bound an agent target: the agent runs its own tool loop until it answers or env.exec_timeout (${cfg.env.exec_timeout}s) ends it`;
}

/** `env.max_completion_tokens` set for an agent target, said once: the CLI caps its own replies. */
export function maxTokensNotice(cfg: SkillOptConfig, agentTarget: boolean): string | undefined {
  if (!agentTarget || keysSet(cfg.env, envFields, ['max_completion_tokens']).length === 0) return undefined;
  return `env.max_completion_tokens: ${cfg.env.max_completion_tokens} does not bound an agent target: the agent CLI caps its own replies`;
}
