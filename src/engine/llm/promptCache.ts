/**
 * Provider prompt caching: what each SDK backend adds to a request so the provider can reuse the
 * stable start of a prompt (the skill, then the step's context) across the calls of a step, and
 * how the cached-token counts are read back from each reply. Replies do not change; only price
 * and latency do.
 */
import { createHash } from 'node:crypto';
import type { MessageParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatRequest, Usage } from './types';

/** Anthropic accepts at most this many cache_control breakpoints per request. */
export const ANTHROPIC_MAX_BREAKPOINTS = 4;

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * OpenAI's `prompt_cache_key` for a request: the role and the skill version it works on (target
 * calls carry the skill in `task`, optimizer calls in `cacheSkill`), hashed so the key is short,
 * stable for one skill and different for the next. None when the call is about no skill.
 */
export function promptCacheKey(req: ChatRequest): string | undefined {
  const skill = req.task?.skill ?? req.cacheSkill;
  if (skill === undefined) return undefined;
  const digest = createHash('sha256').update(`${req.role}\n${skill.trim()}`).digest('hex');
  return `skillopt-${req.role}-${digest.slice(0, 32)}`;
}

/**
 * Anthropic breakpoints for a Messages body built from `req`: one on the system block, and one at
 * the stable prefix of each turn that declares one (split into a cached block and the rest, whose
 * texts join back into the same prompt). When there are more than the API allows, the last ones
 * are kept: a later breakpoint covers a longer prefix.
 */
export function anthropicBreakpoints(
  req: ChatRequest,
  system: string | undefined,
  messages: MessageParam[],
): { system?: TextBlockParam[]; messages: MessageParam[] } {
  const turns = req.messages.filter((m) => m.role !== 'system');
  // A system-only request was turned into one user turn; it has no turn of its own to mark.
  const marked = turns.length === messages.length ? turns : [];
  const candidates: number[] = [];
  marked.forEach((m, i) => {
    if (m.stablePrefix !== undefined && m.stablePrefix > 0) candidates.push(i);
  });
  const turnBudget = ANTHROPIC_MAX_BREAKPOINTS - (system ? 1 : 0);
  const keep = new Set(candidates.slice(Math.max(0, candidates.length - turnBudget)));
  const out = messages.map((msg, i): MessageParam => {
    const source = marked[i];
    if (!keep.has(i) || !source || typeof msg.content !== 'string') return msg;
    const cut = Math.min(source.stablePrefix ?? 0, msg.content.length);
    const blocks: TextBlockParam[] = [
      { type: 'text', text: msg.content.slice(0, cut), cache_control: EPHEMERAL },
    ];
    if (cut < msg.content.length) blocks.push({ type: 'text', text: msg.content.slice(cut) });
    return { role: msg.role, content: blocks };
  });
  return {
    ...(system ? { system: [{ type: 'text', text: system, cache_control: EPHEMERAL }] } : {}),
    messages: out,
  };
}

/** The Messages API's usage counts; `input_tokens` excludes the cache reads and writes. */
export interface AnthropicUsageWire {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Anthropic usage as ours: prompt tokens count every input token, cached ones included. */
export function anthropicUsage(usage: AnthropicUsageWire | undefined): Usage {
  const read = count(usage?.cache_read_input_tokens);
  const written = count(usage?.cache_creation_input_tokens);
  return {
    promptTokens: count(usage?.input_tokens) + read + written,
    completionTokens: count(usage?.output_tokens),
    ...(read ? { cachedTokens: read } : {}),
    ...(written ? { cacheWriteTokens: written } : {}),
  };
}

/** Chat Completions usage; `prompt_tokens` already includes the cached ones. */
export interface ChatUsageWire {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

export function chatCompletionsUsage(usage: ChatUsageWire | undefined): Usage {
  const cached = count(usage?.prompt_tokens_details?.cached_tokens);
  return {
    promptTokens: count(usage?.prompt_tokens),
    completionTokens: count(usage?.completion_tokens),
    ...(cached ? { cachedTokens: cached } : {}),
  };
}

function count(n: number | null | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}
