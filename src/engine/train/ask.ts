import type { ChatMessage, Stage } from '../llm/types';
import { structuredCall } from '../llm/structured';
import type { RunContext } from './context';

export type AskOutcome<T> = { ok: true; value: T; raw: string } | { ok: false; error: string; raw: string };

/**
 * One optimizer call with a structured contract: tolerant parse, one re-ask with the validation
 * error, and on a still-bad reply an `ok: false` the caller turns into the reference's fallback.
 * The fallback is recorded here so no stage can forget to.
 */
export async function askOptimizer<T>(
  ctx: RunContext,
  stage: Stage,
  contract: Parameters<typeof structuredCall>[2],
  system: string,
  user: string,
  maxTokens?: number,
  /** For provider prompt caching: the skill the call works on and the user text's stable start. */
  cache?: { skill: string; stablePrefix?: number },
): Promise<AskOutcome<T>> {
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: user, ...(cache?.stablePrefix ? { stablePrefix: cache.stablePrefix } : {}) },
  ];
  const outcome = await structuredCall(
    ctx.optimizer,
    {
      role: 'optimizer',
      stage,
      messages,
      maxTokens: maxTokens ?? ctx.settings.optimizerMaxTokens,
      ...(cache ? { cacheSkill: cache.skill } : {}),
    },
    contract,
    { signal: ctx.signal, logger: ctx.logger },
  );
  if (outcome.reasked) ctx.recordReask?.(stage);
  if (outcome.ok) return { ok: true, value: outcome.value as T, raw: outcome.raw };
  ctx.recordFallback(stage, outcome.error);
  return { ok: false, error: outcome.error, raw: outcome.raw };
}
