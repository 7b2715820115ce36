/**
 * The prompt-cache side of the dollar range before a run. Every call of one stage in one step (or
 * epoch end, or the run's closing evaluations) starts with the same skill version, which the
 * engine marks for the provider's prompt cache (Anthropic `cache_control`, OpenAI
 * `prompt_cache_key`; src/engine/llm/promptCache.ts). The low end of the range assumes the first
 * call per skill version writes that prefix and every later one reads it at the cache rate; the
 * high end assumes no cache hit at all. A prefix under the provider's minimum is never cached.
 */
import type { SkillOptConfig } from './config/schema';
import type { CallEstimate } from './callEstimate';
import { minCachedPrefixTokens, type CacheTokens } from './llm/prices';

/**
 * Stages whose calls share a skill-version prefix, and how many distinct prefixes one occurrence
 * has: the slow update rolls out the skill before and after it, the test evaluation scores three
 * skills, failure and success analysts have system prompts of their own. Judge, trigger and
 * no-skill calls carry no skill prefix; merge, ranking and the other optimizer stages are one
 * call each or mark no prefix.
 */
const SHARED_PREFIX: Record<'target' | 'optimizer', Record<string, number>> = {
  target: { rollout: 1, selection: 1, slow_rollout: 2, baseline: 1, final_selection: 1, test: 3 },
  optimizer: { analyst: 2, deep_reflect: 1 },
};

/** Calls that can read a cached prefix, and the skill versions (cache writes) among them. */
export interface CacheableCalls {
  calls: number;
  versions: number;
}

export function cacheableCalls(
  role: 'target' | 'optimizer',
  estimate: CallEstimate,
  totalSteps: number,
  numEpochs: number,
  /** Stages sent through a batch API: priced as batches, with no cache hit assumed. */
  batched: (stage: string) => boolean,
): CacheableCalls {
  const out = { calls: 0, versions: 0 };
  const parts: Array<[Record<string, number>, number]> = [
    [estimate.perStep, totalSteps],
    [estimate.perEpochEnd, Math.max(0, numEpochs - 1)],
    [estimate.once, 1],
  ];
  for (const [stages, times] of parts) {
    for (const [stage, versions] of Object.entries(SHARED_PREFIX[role])) {
      const n = stages[stage] ?? 0;
      if (n <= 0 || times <= 0 || batched(stage)) continue;
      out.calls += n * times;
      out.versions += Math.min(n, versions) * times;
    }
  }
  return out;
}

/** The cache tokens of those calls at the low end: one write per version, reads for the rest. */
export function lowEndCacheTokens(c: CacheableCalls, prefixTokens: number): CacheTokens {
  return {
    cacheWriteTokens: c.versions * prefixTokens,
    cachedTokens: Math.max(0, c.calls - c.versions) * prefixTokens,
  };
}

/** Whether the provider caches a prefix this long for this model, or why not (one clause). */
export function cachePrefixApplies(
  cfg: SkillOptConfig,
  role: 'target' | 'optimizer',
  model: string,
  provider: string,
  prefixTokens: number,
): { ok: true } | { ok: false; why?: string } {
  const min = minCachedPrefixTokens(model, provider);
  // Providers whose caching is not known get no saving and no note.
  if (min === undefined) return { ok: false };
  if (provider === 'anthropic' && !cfg.model.prompt_caching)
    return { ok: false, why: `the ${role} gets no cache_control (model.prompt_caching: false)` };
  if (prefixTokens < min)
    return {
      ok: false,
      why: `the ${role}'s skill prefix (~${kilo(prefixTokens)} tokens) is under ${model}'s ${min}-token cache minimum`,
    };
  return { ok: true };
}

/** The one line under the dollar range that says what it assumed about the prompt cache. */
export function describeCacheAssumption(
  cached: Array<{ role: string; prefixTokens: number; provider: string }>,
  notCached: string[],
): string | undefined {
  if (!cached.length && !notCached.length) return undefined;
  const parts: string[] = [];
  if (cached.length) {
    const prefixes = cached.map((c) => `${c.role} ~${kilo(c.prefixTokens)} tokens`).join(', ');
    const surcharge = cached.some((c) => c.provider === 'anthropic')
      ? '; Anthropic cache writes cost 1.25× input'
      : '';
    parts.push(
      `the low end reads the skill prefix (${prefixes}) from the prompt cache after the first call per skill version${surcharge}; the high end assumes no cache hits`,
    );
  }
  if (notCached.length) parts.push(`no cache saving assumed where ${notCached.join('; ')}`);
  return `Prompt cache: ${parts.join('; ')}`;
}

function kilo(tokens: number): string {
  return tokens >= 1000 ? `${(tokens / 1000).toFixed(1)}k` : String(Math.round(tokens));
}
