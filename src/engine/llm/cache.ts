import { createHash } from 'node:crypto';
import { statSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { SkillOptError } from '../errors';
import type { Logger } from '../log';
import { writeJsonAtomic } from '../store/atomic';
import type { BackendReply, ChatBackend, ChatRequest } from './types';

/** Bumped when the key recipe or the file format changes, so old entries simply stop matching. */
export const CACHE_FORMAT = 1;

/** JSON with object keys sorted at every level and `undefined` members dropped: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/**
 * SHA-256 over everything that can change a reply: provider, model, the backend's own reply-
 * affecting parameters, token cap, temperature, reasoning effort, thinking budget, the messages,
 * the agent task when there is one, and the repeat index and seed of a repeated sample (absent for
 * the first sample, so a run without repeats keeps its keys). Stage, role and timeout are left out on purpose: the same
 * prompt asked by a different stage gets the same answer.
 */
export function cacheKey(
  backend: Pick<ChatBackend, 'provider' | 'model' | 'cacheParams'>,
  req: ChatRequest,
): string {
  const material = {
    format: CACHE_FORMAT,
    provider: backend.provider,
    model: backend.model,
    cacheParams: backend.cacheParams,
    maxTokens: req.maxTokens,
    temperature: req.temperature,
    reasoningEffort: req.reasoningEffort,
    thinkingBudget: req.thinkingBudget,
    // Prompt-cache breakpoints do not change replies, so they stay out of the key.
    messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
    task: req.task,
    repeat: req.repeat ? req.repeat : undefined,
    seed: req.seed,
    tools: req.tools,
  };
  return createHash('sha256').update(canonicalJson(material)).digest('hex');
}

export interface CachePolicy {
  /** Master switch (config `cache.enabled`); default on. */
  enabled?: boolean;
  /** Also cache optimizer calls and non-zero temperatures (config `cache.all_roles`). */
  allRoles?: boolean;
}

/**
 * By default only target calls at temperature 0 are cached: those are meant to be repeatable, so a
 * resumed run or an eval-only pass can reuse them. Optimizer calls are sampled creatively and are
 * cached only with `allRoles`.
 */
export function shouldCache(req: ChatRequest, policy: CachePolicy = {}): boolean {
  if (policy.enabled === false) return false;
  if (policy.allRoles) return true;
  return req.role === 'target' && req.temperature === 0;
}

const replySchema = z.object({
  text: z.string(),
  usage: z.object({ promptTokens: z.number(), completionTokens: z.number() }),
  model: z.string().optional(),
  trace: z.record(z.string(), z.unknown()).optional(),
  truncated: z.boolean().optional(),
});

const entrySchema = z.object({
  format: z.literal(CACHE_FORMAT),
  key: z.string(),
  provider: z.string(),
  model: z.string(),
  createdAt: z.string(),
  reply: replySchema,
});

export type CacheEntry = z.infer<typeof entrySchema>;

export interface CacheStats {
  hits: number;
  misses: number;
  /** Entries that existed but could not be read or parsed; they are rewritten after the real call. */
  corrupt: number;
  writes: number;
  writeErrors: number;
}

/**
 * Persistent reply cache shared by training, eval-only and resumed runs: one JSON file per key
 * under a two-character fan-out directory. A damaged entry is a miss (counted and logged), never a
 * crash, and is overwritten by the next successful call. Writes are atomic, so concurrent runs
 * sharing the directory see whole files only.
 */
/**
 * Refuses a cache folder that cannot be one (it, or a folder on its way, is a file) before anything
 * is spent: every entry would be a miss and a failed write, one warning per call, for the whole run.
 */
export function checkCacheDir(dir: string, key: string): void {
  for (let at = dir; ; at = dirname(at)) {
    const stat = statOrNone(at);
    if (stat?.isDirectory()) return;
    if (stat)
      throw new SkillOptError('config', `the response cache folder ${dir} cannot be made: ${at} is a file`, {
        key,
        fix: 'set cache.dir to a folder (or a path where one can be made), or cache.enabled: false to run without the cache',
      });
    if (dirname(at) === at) return;
  }
}

/** A path under a file (ENOTDIR) is as absent as a missing one: the file above it is found next. */
function statOrNone(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

export class ResponseCache {
  readonly stats: CacheStats = { hits: 0, misses: 0, corrupt: 0, writes: 0, writeErrors: 0 };

  constructor(
    readonly dir: string,
    private readonly opts: { logger?: Logger } = {},
  ) {}

  pathFor(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  async get(key: string): Promise<BackendReply | undefined> {
    const path = this.pathFor(key);
    let raw: string;
    try {
      raw = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.corrupt(path, `unreadable (${String(err)})`);
      else this.stats.misses++;
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      this.corrupt(path, 'not valid JSON');
      return undefined;
    }
    const entry = entrySchema.safeParse(parsed);
    if (!entry.success || entry.data.key !== key) {
      this.corrupt(path, entry.success ? 'written for a different key' : 'not a cache entry of this version');
      return undefined;
    }
    this.stats.hits++;
    return entry.data.reply;
  }

  /** Store a reply; a failed write is logged and otherwise ignored (the run does not need the cache). */
  put(key: string, meta: { provider: string; model: string }, reply: BackendReply): void {
    const entry: CacheEntry = {
      format: CACHE_FORMAT,
      key,
      provider: meta.provider,
      model: meta.model,
      createdAt: new Date().toISOString(),
      reply: {
        text: reply.text,
        usage: { promptTokens: reply.usage.promptTokens, completionTokens: reply.usage.completionTokens },
        ...(reply.model !== undefined ? { model: reply.model } : {}),
        ...(reply.trace !== undefined ? { trace: reply.trace } : {}),
        ...(reply.truncated !== undefined ? { truncated: reply.truncated } : {}),
      },
    };
    try {
      writeJsonAtomic(this.pathFor(key), entry);
      this.stats.writes++;
    } catch (err) {
      // One warning: a full disk or a read-only folder fails every write after the first alike.
      const first = this.stats.writeErrors++ === 0;
      this.opts.logger?.log(
        first ? 'warn' : 'debug',
        'cache',
        `could not write cache entry ${this.pathFor(key)}: ${String(err)}${first ? '; the run goes on without keeping its replies there (further failed writes are logged with --verbose)' : ''}`,
      );
    }
  }

  private corrupt(path: string, why: string): void {
    this.stats.corrupt++;
    this.stats.misses++;
    this.opts.logger?.log('warn', 'cache', `ignoring cache entry ${path}: ${why}; it will be rewritten`);
  }
}
