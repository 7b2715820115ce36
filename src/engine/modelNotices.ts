/** What the target's settings mean for this backend, said once before anything is spent. */
import { keysSet } from './config/idleKeys';
import type { SkillOptConfig } from './config/schema';
import { envFields } from './config/schema/envFields';
import { modelFields } from './config/schema/sections';
import { isCloudClaudeId, type PriceTable } from './llm/prices';
import type { AgentName } from './llm/command';
import type { ModelClient } from './llm/types';

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

/**
 * An agent target with `model.target` left unset runs its own default model, which has no price here:
 * its spend is tokens only. Said once, before anything is spent, with how to price it. Claude Code
 * prices its own calls (the cost it reports), so it is not named.
 */
export function agentPriceNotice(
  cfg: SkillOptConfig,
  target: ModelClient,
  prices: PriceTable,
  agent: AgentName | undefined,
): string | undefined {
  if (target.backend !== 'command' || agent === 'claude') return undefined;
  const preset = agent !== undefined;
  if (keysSet(cfg.model, modelFields, ['target']).length) return undefined;
  if (prices.cost(target.model, target.billedProvider ?? target.backend, 1, 1) !== null) return undefined;
  const set = preset
    ? 'set model.target to the model the agent should run (it is passed to the CLI)'
    : 'set model.target to the model your command runs (it only names it: the command is not given it)';
  return `model.target is not set, so the agent target runs its own default model, which has no price here: its spend is shown in tokens only (under the name ${target.model}). Fix: ${set}, and prices.<that model>.input_per_mtok and output_per_mtok if it is not in the built-in price table`;
}

/** Which cloud serves Claude for a role: its model id's spelling, or Claude Code's switch variables. */
function claudeCloud(
  client: ModelClient,
  agent: AgentName | undefined,
  vars: NodeJS.ProcessEnv,
): string | undefined {
  if ((client.billedProvider ?? client.backend) !== 'anthropic') return undefined;
  const on = (v: string | undefined): boolean => !!v && !/^(0|false|no|off)$/i.test(v.trim());
  if (client.backend === 'command' && agent === 'claude') {
    if (on(vars.CLAUDE_CODE_USE_BEDROCK)) return 'Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK)';
    if (on(vars.CLAUDE_CODE_USE_VERTEX)) return 'Google Vertex AI (CLAUDE_CODE_USE_VERTEX)';
  }
  if (!isCloudClaudeId(client.model)) return undefined;
  return client.model.includes('@')
    ? `Google Vertex AI (${client.model})`
    : `Amazon Bedrock (${client.model})`;
}

/**
 * Claude served by Bedrock or Vertex is priced at the Anthropic API's list price (our table, or the
 * figure Claude Code reports): the cloud's bill may differ (regional endpoints cost more). Said once.
 */
export function cloudClaudeNotice(
  clients: ReadonlyArray<{ role: string; client: ModelClient }>,
  agent: AgentName | undefined,
  vars: NodeJS.ProcessEnv,
  prices: PriceTable,
): string | undefined {
  const listed = clients.flatMap(({ role, client }) => {
    const cloud = claudeCloud(client, agent, vars);
    // A price of the config's own for the model is the person's figure: nothing to say.
    return cloud && !prices.hasOwnPrice(client.model) ? [`${role} via ${cloud}`] : [];
  });
  if (!listed.length) return undefined;
  return `${listed.join('; ')}: priced at the Anthropic API's list price, which the cloud's bill may differ from (a regional endpoint costs more). Fix: set prices.<model>.input_per_mtok and output_per_mtok (and the cache rates) to what your cloud bills`;
}
