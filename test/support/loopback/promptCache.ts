import type { Handler, RecordedRequest, Reply, Script } from './core';
import { contentText, estimateTokens } from './core';
import { anthropicPromptText } from './anthropicServer';
import { openAiPromptText } from './openaiServer';

/**
 * A provider's prompt cache as the loopback servers play it, deterministically, so tests and the
 * bench see cached-token usage in the real wire fields:
 * - OpenAI: requests with the same `prompt_cache_key` share a cache; the cached tokens are the
 *   longest common prefix (in characters / 4) with an earlier prompt under that key. Without the key
 *   nothing is cached (the real API also caches keyless prompts; the simulation makes "caching off"
 *   visible instead).
 * - Anthropic: each `cache_control` block ends a cacheable prefix; the longest prefix seen before is
 *   read from the cache, and the prefix up to the last breakpoint is written when it is new.
 */
export interface PromptCacheSim {
  handler: Handler;
  /** Prompts the cache has answered from, for assertions. */
  stats: { reads: number; writes: number };
}

/** Prompts kept per key: enough for a step's rollouts, bounded so a long run stays fast. */
const PROMPTS_PER_KEY = 64;

/** OpenAI's side: tokens of the longest prefix shared with an earlier prompt under the same key. */
export class OpenAiPrefixCache {
  private readonly prompts = new Map<string, string[]>();
  constructor(private readonly minTokens = 0) {}

  /** Cached tokens for this prompt (chars / 4, as the loopback servers count), then remember it. */
  read(key: unknown, prompt: string): number {
    if (typeof key !== 'string' || !key) return 0;
    const seen = this.prompts.get(key) ?? [];
    const common = Math.max(0, ...seen.map((p) => commonPrefix(p, prompt)));
    seen.push(prompt);
    if (seen.length > PROMPTS_PER_KEY) seen.shift();
    this.prompts.set(key, seen);
    const read = Math.min(estimateTokens(prompt), Math.floor(common / 4));
    return read >= this.minTokens ? read : 0;
  }
}

export function withPromptCache(wire: 'openai' | 'anthropic', script: Script, minTokens = 0): PromptCacheSim {
  const next = asHandler(script);
  const openAiCache = new OpenAiPrefixCache(minTokens);
  const anthropicPrefixes = new Set<string>();
  const stats = { reads: 0, writes: 0 };

  const openAi = (req: RecordedRequest): { total: number; read: number; written: number } => {
    const prompt = openAiPromptText(req);
    const key = (req.body as { prompt_cache_key?: unknown } | undefined)?.prompt_cache_key;
    return { total: estimateTokens(prompt), read: openAiCache.read(key, prompt), written: 0 };
  };

  const anthropic = (req: RecordedRequest): { total: number; read: number; written: number } => {
    const total = estimateTokens(anthropicPromptText(req));
    const prefixes = breakpointPrefixes(req);
    let read = 0;
    for (const p of prefixes) if (anthropicPrefixes.has(p)) read = Math.max(read, estimateTokens(p));
    const last = prefixes.at(-1);
    let written = 0;
    if (last !== undefined && !anthropicPrefixes.has(last) && estimateTokens(last) >= minTokens)
      written = estimateTokens(last) - read;
    for (const p of prefixes) if (estimateTokens(p) >= minTokens) anthropicPrefixes.add(p);
    read = Math.min(read, total);
    return { total, read, written: Math.min(written, total - read) };
  };

  const handler: Handler = async (req) => {
    const reply = await next(req);
    if (reply.kind !== 'reply' || reply.usage === null) return reply;
    const { total, read, written } = wire === 'openai' ? openAi(req) : anthropic(req);
    if (read) stats.reads++;
    if (written) stats.writes++;
    return {
      ...reply,
      usage: {
        ...reply.usage,
        promptTokens: reply.usage?.promptTokens ?? total,
        cachedTokens: read,
        ...(wire === 'anthropic' ? { cacheWriteTokens: written } : {}),
      },
    };
  };
  return { handler, stats };
}

/** The prompt text up to and including each `cache_control` block, in prompt order. */
function breakpointPrefixes(req: RecordedRequest): string[] {
  const body = req.body as { system?: unknown; messages?: Array<{ content?: unknown }> } | undefined;
  const blocks: Array<{ text: string; marked: boolean }> = [];
  const add = (content: unknown): void => {
    if (!Array.isArray(content)) {
      blocks.push({ text: contentText(content), marked: false });
      return;
    }
    for (const b of content as Array<{ text?: unknown; cache_control?: unknown }>)
      blocks.push({ text: typeof b?.text === 'string' ? b.text : '', marked: Boolean(b?.cache_control) });
  };
  if (body?.system !== undefined) add(body.system);
  for (const m of body?.messages ?? []) add(m.content);
  const out: string[] = [];
  let text = '';
  for (const b of blocks) {
    text += b.text + '\n';
    if (b.marked) out.push(text);
  }
  return out;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function asHandler(script: Script): Handler {
  if (typeof script === 'function') return script;
  const queue: Reply[] = [...script];
  return () => queue.shift() ?? { kind: 'status', status: 400, message: 'the scripted replies ran out' };
}
