/**
 * A dollar range before anything is spent: the call estimate (at most, per stage) times rough
 * prompt and reply sizes for each role, priced with the same table the accounting uses. The low
 * end assumes short replies and the early stop of nothing; the high end assumes every reply runs
 * long. Models without a known price are named, never counted as $0.
 */
import { batchProvider } from './llm/prices';
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
}

/** Characters per token: the documented estimate used for skill length too. */
const CHARS_PER_TOKEN = 4;
/** Stages whose calls go to the target; every other stage is the optimizer's. */
const TARGET_STAGES = new Set([
  'rollout',
  'selection',
  'slow_rollout',
  'baseline',
  'final_selection',
  'test',
  'trigger',
]);

export function estimateCost(prepared: PreparedRun): CostEstimate {
  const { estimate, settings: s, splits, initialSkill, models } = prepared;
  const items = splits.train.length ? splits.train : splits.val;
  const taskChars = items.length ? items.reduce((n, i) => n + i.input.length, 0) / items.length : 200;
  const skill = initialSkill.length;
  // Prompt sizes in characters (system text and formatting are a few hundred characters).
  const targetPrompt = skill + taskChars + 600;
  const trajectory = taskChars + s.trajectoryChars + 200;
  const optimizerPrompt = skill + s.minibatchSize * trajectory + 3000;
  const perCall = {
    target: {
      prompt: targetPrompt / CHARS_PER_TOKEN,
      reply: { low: 40, high: Math.min(s.targetMaxTokens || 2000, 2000) },
    },
    optimizer: {
      prompt: optimizerPrompt / CHARS_PER_TOKEN,
      reply: { low: 300, high: 2500 },
    },
  };
  const calls = { target: 0, optimizer: 0, batch: 0 };
  // Target evaluations sent through the batch API (evaluation.batch_api) are priced as batches.
  const batched = (stage: string): boolean =>
    models.batch?.stages.has(
      stage === 'baseline' || stage === 'final_selection' ? 'selection' : (stage as Stage),
    ) ?? false;
  const add = (stages: Record<string, number>, times: number): void => {
    for (const [stage, n] of Object.entries(stages))
      calls[!TARGET_STAGES.has(stage) ? 'optimizer' : batched(stage) ? 'batch' : 'target'] += n * times;
  };
  add(estimate.perStep, prepared.totalSteps);
  add(estimate.perEpochEnd, Math.max(0, s.numEpochs - 1));
  add(estimate.once, 1);

  const unpriced = new Set<string>();
  let low: number | null = 0;
  let high: number | null = 0;
  const tokens = { low: 0, high: 0 };
  for (const kind of ['target', 'optimizer', 'batch'] as const) {
    const role = kind === 'batch' ? 'target' : kind;
    const client = models[role];
    const n = calls[kind];
    if (n === 0) continue;
    const p = perCall[role];
    const provider = kind === 'batch' ? batchProvider(client.backend) : client.backend;
    tokens.low += n * (p.prompt + p.reply.low);
    tokens.high += n * (p.prompt + p.reply.high);
    const lo = models.accounting.prices.cost(client.model, provider, n * p.prompt, n * p.reply.low);
    const hi = models.accounting.prices.cost(client.model, provider, n * p.prompt, n * p.reply.high);
    if (lo === null || hi === null) {
      unpriced.add(client.model);
      continue;
    }
    if (low !== null) low += lo;
    if (high !== null) high += hi;
  }
  if (unpriced.size) {
    low = null;
    high = null;
  }
  return {
    low,
    high,
    unpricedModels: [...unpriced].sort(),
    tokens: { low: Math.round(tokens.low), high: Math.round(tokens.high) },
    ...(calls.batch ? { batchCalls: calls.batch } : {}),
  };
}

/** One line for the CLI and the extension's start dialog. */
export function describeCost(c: CostEstimate, simulated: boolean): string {
  if (simulated) return 'Estimated cost: none (simulated models)';
  const tok = `${Math.round(c.tokens.low / 1000)}k–${Math.round(c.tokens.high / 1000)}k tokens`;
  if (c.low === null || c.high === null)
    return `Estimated cost: unknown price for ${c.unpricedModels.join(', ')} (${tok}; set prices: in the config to see dollars)`;
  const d = (x: number): string => (x < 0.01 ? '<$0.01' : `$${x.toFixed(2)}`);
  return `Estimated cost: ${d(c.low)} – ${d(c.high)} at list prices${c.batchCalls ? `, batch calls at half` : ''} (${tok}; built-in prices as of 2025-11, the config's prices: win)`;
}
