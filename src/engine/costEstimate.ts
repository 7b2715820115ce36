/**
 * A dollar range before anything is spent: the call estimate (at most, per stage) times rough
 * prompt and reply sizes for each role, priced with the same table the accounting uses. The low
 * end is a lower bound of a run to its end (with an empty response cache): only the calls every
 * such run makes (leastCalls: the rollouts, one analyst a step, the baseline, the test and
 * no-skill evaluations), each item answered in one call with the shortest reply that can carry an
 * answer, prompts of the skill and the shortest task alone, and the skill prefix read from the
 * provider's prompt cache after the first call per skill version (costCache.ts). The high end
 * assumes every reply runs long, every conditional call, every turn of a multi-turn item with the
 * earlier turns in its prompt, and no cache hit. Models without a known price are named, never
 * counted as $0.
 */
import { leastCalls, TARGET_STAGES, type CallEstimate } from './callEstimate';
import { planTrainEpoch } from './data/plan';
import { cacheableCalls, cachePrefixApplies, describeCacheAssumption, lowEndCacheTokens } from './costCache';
import { agentFor } from './llm/agents/fromConfig';
import { PRESETS } from './llm/agents/presets';
import { batchProvider, PRICE_TABLE_DATE } from './llm/prices';
import { analystSystemPrompt } from './prompts/system';
import { renderTargetSystem } from './train/rolloutItem';
import type { Stage } from './llm/types';
import type { PreparedRun } from './run';

export interface CostEstimate {
  /** null when a model's price is unknown. */
  low: number | null;
  high: number | null;
  /** Models called by the run whose price is not known (add them under `prices:`). */
  unpricedModels: string[];
  /** Estimated tokens, for the message: prompt and reply, low and high. */
  tokens: { low: number; high: number };
  /** Target calls priced as batch-API calls (evaluation.batch_api); absent when none. */
  batchCalls?: number;
  /**
   * What the range assumed about the provider's prompt cache: dollars the low end saves against
   * no cache hits (null when a price is unknown), and the one line that explains it. Absent when
   * no role's provider is known to cache.
   */
  promptCache?: { lowEndSaving: number | null; note: string };
  /** Roles on the simulated backend: their calls cost nothing and are left out of the range. */
  simulatedRoles: Array<'target' | 'optimizer'>;
}

/** Characters per token: the documented estimate used for skill length too. */
const CHARS_PER_TOKEN = 4;
/** The low end's replies: the target's shortest tagged answer, the optimizer's shortest structured reply. */
const TARGET_REPLY_LOW = 5;
const OPTIMIZER_REPLY_LOW = 20;
/** The high end's target reply, when the config sets no lower max_tokens. */
const TARGET_REPLY_HIGH = 2000;
/** What one earlier turn adds to a multi-turn item's later prompts at the high end: a tool result (a document read is capped at 4,000 characters). */
const TURN_HISTORY_TOKENS = 1000;

type Calls = { target: number; optimizer: number; batch: number };

/**
 * Model requests one agent task takes: at least two (loading the skill, then answering, as every
 * real-CLI test run shows), at the high end six (four tool turns more), each later one carrying
 * a tool result of TURN_HISTORY_TOKENS per earlier turn. An assumption: a task's own work decides.
 */
const AGENT_REQUESTS = { low: 2, high: 6 };

/** The agent CLI preset of an agent target, with its per-request prompt overhead; undefined otherwise. */
function agentShape(prepared: PreparedRun): { overhead: number } | undefined {
  if (prepared.models.target.backend !== 'command') return undefined;
  const name = agentFor(prepared.config.model.target_backend);
  return name ? { overhead: PRESETS[name].requestOverheadTokens } : undefined;
}

export function estimateCost(prepared: PreparedRun): CostEstimate {
  const { estimate, settings: s, splits, initialSkill, models } = prepared;
  const items = splits.train.length ? splits.train : splits.val;
  const taskChars = items.length ? items.reduce((n, i) => n + i.input.length, 0) / items.length : 200;
  // The shortest task of any split: the low end's prompts hold the skill and that task alone.
  const all = [...splits.train, ...splits.val, ...splits.test.unsealForEvaluation()];
  const shortest = all.length ? Math.min(...all.map((i) => i.input.length)) : 0;
  const skill = initialSkill.length;
  // The skill prefix each role's calls share (costCache.ts): the target's system prompt is the
  // skill; an analyst's is its system prompt, then the skill (failure and success analysts differ).
  const system = {
    target: renderTargetSystem(initialSkill, s.answerTag, s.targetSystemTemplate).length,
    optimizer: analystSystemPrompt('failure', s.updateMode).length + skill,
  };
  const prefix = { target: system.target / CHARS_PER_TOKEN, optimizer: system.optimizer / CHARS_PER_TOKEN };
  // At the high end an analyst reads its minibatch's trajectories as long as the run keeps
  // (trajectoryChars), with a few hundred characters of system text and formatting; at the low
  // end one trajectory of the shortest task and reply.
  const perCall = {
    target: {
      prompt: (skill + taskChars + 600) / CHARS_PER_TOKEN,
      promptLow: (system.target + shortest) / CHARS_PER_TOKEN,
      reply: {
        low: TARGET_REPLY_LOW,
        high: Math.min(s.targetMaxTokens || TARGET_REPLY_HIGH, TARGET_REPLY_HIGH),
      },
    },
    optimizer: {
      prompt: (skill + s.minibatchSize * (taskChars + s.trajectoryChars + 200) + 3000) / CHARS_PER_TOKEN,
      promptLow: (system.optimizer + shortest + TARGET_REPLY_LOW * CHARS_PER_TOKEN) / CHARS_PER_TOKEN,
      reply: { low: OPTIMIZER_REPLY_LOW, high: 2500 },
    },
  };
  // Target evaluations sent through the batch API (evaluation.batch_api) are priced as batches.
  const batched = (stage: string): boolean =>
    models.batch?.stages.has(
      stage === 'baseline' || stage === 'final_selection' ? 'selection' : (stage as Stage),
    ) ?? false;
  const count = (e: CallEstimate): Calls => {
    const calls = { target: 0, optimizer: 0, batch: 0 };
    const add = (stages: Record<string, number>, times: number): void => {
      for (const [stage, n] of Object.entries(stages))
        calls[!TARGET_STAGES.has(stage) ? 'optimizer' : batched(stage) ? 'batch' : 'target'] += n * times;
    };
    add(e.perStep, prepared.totalSteps);
    add(e.perEpochEnd, Math.max(0, s.numEpochs - 1));
    add(e.once, 1);
    return calls;
  };
  // The high end: every item takes all its turns, each later one carrying the earlier replies and
  // tool results, and every conditional call is made; the low end: what every run makes.
  const lowEstimate = leastCalls(estimate, plannedRollouts(prepared));
  const callsFor = { low: count(lowEstimate), high: count(estimate) };
  const turns = estimate.targetTurns ?? 1;
  const history = ((turns - 1) / 2) * (perCall.target.reply.high + TURN_HISTORY_TOKENS);
  const agent = agentShape(prepared);
  if (agent) {
    // One agent task is several model requests, each resending the CLI's system prompt and tools.
    const task = perCall.target.prompt;
    perCall.target.prompt = task + AGENT_REQUESTS.low * agent.overhead;
    perCall.target.promptLow += AGENT_REQUESTS.low * agent.overhead;
    perCall.target.reply = {
      low: AGENT_REQUESTS.low * TARGET_REPLY_LOW,
      high: AGENT_REQUESTS.high * perCall.target.reply.high,
    };
  }
  const agentHigh = agent
    ? (AGENT_REQUESTS.high - AGENT_REQUESTS.low) * agent.overhead +
      ((AGENT_REQUESTS.high * (AGENT_REQUESTS.high - 1)) / 2) * TURN_HISTORY_TOKENS
    : 0;

  const unpriced = new Set<string>();
  let low: number | null = 0;
  let high: number | null = 0;
  let saving: number | null = 0;
  const cached: Array<{ role: string; prefixTokens: number; provider: string }> = [];
  const notCached: string[] = [];
  const tokens = { low: 0, high: 0 };
  const simulatedRoles = (['target', 'optimizer'] as const).filter((r) => models[r].backend === 'sim');
  for (const kind of ['target', 'optimizer', 'batch'] as const) {
    const role = kind === 'batch' ? 'target' : kind;
    const client = models[role];
    const n = { low: callsFor.low[kind], high: callsFor.high[kind] };
    if (n.high === 0 || simulatedRoles.includes(role)) continue;
    const p = perCall[role];
    const prompt = { low: p.promptLow, high: p.prompt + (role === 'target' ? history + agentHigh : 0) };
    const billed = client.billedProvider ?? client.backend;
    const provider = kind === 'batch' ? batchProvider(billed) : billed;
    tokens.low += n.low * (prompt.low + p.reply.low);
    tokens.high += n.high * (prompt.high + p.reply.high);
    const price = (end: 'low' | 'high', cache = {}): number | null =>
      models.accounting.prices.cost(
        client.model,
        provider,
        n[end] * prompt[end],
        n[end] * p.reply[end],
        cache,
      );
    let lo = price('low');
    const hi = price('high');
    // An agent CLI lays out and caches its own prompts: our skill-prefix assumption does not hold.
    if (kind !== 'batch' && lo !== null && client.backend !== 'command') {
      const applies = cachePrefixApplies(prepared.config, role, client.model, provider, prefix[role]);
      const shared = cacheableCalls(role, lowEstimate, prepared.totalSteps, s.numEpochs, batched);
      if (applies.ok && shared.calls > 0) {
        const withCache = price('low', lowEndCacheTokens(shared, prefix[role]));
        // A price without cache rates (a config price) leaves the low end uncached, and says so.
        if (withCache === null) notCached.push(`${client.model} has no cache rates under prices:`);
        else {
          cached.push({ role, prefixTokens: prefix[role], provider });
          if (saving !== null) saving += lo - withCache;
          lo = withCache;
        }
      } else if (!applies.ok && applies.why) notCached.push(applies.why);
    }
    if (lo === null || hi === null) {
      unpriced.add(client.model);
      saving = null;
      continue;
    }
    if (low !== null) low += lo;
    if (high !== null) high += hi;
  }
  const note = describeCacheAssumption(cached, notCached);
  if (unpriced.size) {
    low = null;
    high = null;
  }
  return {
    low,
    high,
    unpricedModels: [...unpriced].sort(),
    tokens: { low: Math.round(tokens.low), high: Math.round(tokens.high) },
    ...(callsFor.high.batch ? { batchCalls: callsFor.high.batch } : {}),
    ...(note ? { promptCache: { lowEndSaving: saving, note } } : {}),
    simulatedRoles,
  };
}

/** The items the epoch plans roll out over the whole run (an epoch's last step may hold fewer than a batch). */
function plannedRollouts(prepared: PreparedRun): number {
  const { settings: s, splits, stepsPerEpoch } = prepared;
  let n = 0;
  for (let epoch = 1; epoch <= s.numEpochs; epoch++)
    for (const b of planTrainEpoch(splits.train, {
      seed: s.seed,
      epoch,
      batchSize: s.batchSize,
      accumulation: s.accumulation,
      stepsPerEpoch,
    }))
      n += b.items.length;
  return n;
}

/** Whether every role is simulated: nothing of the run costs money. */
const allSimulated = (c: CostEstimate): boolean => c.simulatedRoles.length === 2;

/** One line for the CLI and the extension's start dialog; a simulated role is free, the other is priced. */
export function describeCost(c: CostEstimate): string {
  if (allSimulated(c)) return 'Estimated cost: none (simulated models)';
  const sim = c.simulatedRoles.length ? `; the ${c.simulatedRoles[0]} is simulated, no cost` : '';
  const tok = `${Math.round(c.tokens.low / 1000)}k–${Math.round(c.tokens.high / 1000)}k tokens`;
  if (c.low === null || c.high === null)
    return `Estimated cost: unknown price for ${c.unpricedModels.join(', ')} (${tok}${sim}; set prices: in the config to see dollars)`;
  const d = (x: number): string => (x < 0.01 ? '<$0.01' : `$${x.toFixed(2)}`);
  return `Estimated cost: ${d(c.low)} – ${d(c.high)} at list prices${c.batchCalls ? `, batch calls at half` : ''} (${tok}${sim}; built-in prices as of ${PRICE_TABLE_DATE}, the config's prices: win)`;
}

/** The range and, under it, what it assumed about the prompt cache (validate, the start dialog). */
export function describeCostLines(c: CostEstimate): string[] {
  const note = allSimulated(c) ? undefined : c.promptCache?.note;
  return [describeCost(c), ...(note ? [note] : [])];
}
