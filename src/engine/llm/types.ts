/**
 * The one interface the engine uses to talk to models. Stages build a ChatRequest; a ModelClient
 * (retries, limits, cache, accounting around a backend) returns a ChatResult.
 */

import type { ImageInput } from '../data/images';
import type { REASONING_EFFORTS } from '../config/schema/enums';

export type ModelRole = 'optimizer' | 'target';

/**
 * Stage labels, as the reference's token accounting names them, plus our own evaluation stages.
 * Accounting is keyed by these strings.
 */
export type Stage =
  | 'rollout'
  | 'selection'
  | 'test'
  | 'eval'
  | 'analyst'
  | 'merge'
  | 'ranking'
  | 'lr_autonomous'
  | 'rewrite'
  | 'slow_update'
  | 'meta_skill'
  | 'appendix_consolidate'
  | 'slow_rollout'
  | 'deep_reflect'
  | 'meta_reflect'
  /** The judge model grading the eval file's natural-language expectations (scoring/judge.ts). */
  | 'judge'
  | 'trigger'
  | 'describe';

export interface ChatMessage {
  /** `tool`: the result of one function call the previous assistant message made (`toolCallId`). */
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** The function calls an assistant message made (a tool loop's history, sent back as the wire spells them). */
  toolCalls?: ReplyToolCall[];
  /** The call a `tool` message answers: the id the provider gave it. */
  toolCallId?: string;
  /** Images shown with a user message (only backends with `acceptsImages` get such requests). */
  images?: ImageInput[];
  /**
   * Characters at the start of `content` that other calls of the same step send unchanged (the
   * skill and the step's context before the trajectories): a prompt-cache breakpoint goes there.
   */
  stablePrefix?: number;
}

export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** What an agent-harness target (the `command` backend) needs beyond plain messages. */
export interface TaskContext {
  taskId: string;
  /** The skill document to install into the workspace. */
  skill: string;
  /** Directory name under `.agents/skills/`. */
  skillName: string;
  /** Task text written to `task.md`. */
  prompt: string;
  /** Input files the task gives (skill-creator `files`), copied into the workspace under `name`; `digest` keys the cache. */
  files?: Array<{ name: string; path: string; digest: string }>;
  /** Folders copied read-only into the workspace under `name` (OfficeQA's documents); `digest` keys the cache. */
  folders?: Array<{ name: string; path: string; digest: string }>;
  /** How the prompt reaches the agent for this call; absent = the backend's `target_delivery`. */
  delivery?: 'native' | 'pointer';
}

/** A function the model may call (the activation track's skill-loading tool for chat targets). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** A function call in a reply; chat backends put these in `trace.toolCalls` (cached with the reply). */
export interface ReplyToolCall {
  /** The provider's id of the call (OpenAI `id`/`call_id`, Anthropic `tool_use.id`): a result names it. */
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatRequest {
  role: ModelRole;
  stage: Stage;
  messages: ChatMessage[];
  /** Completion cap; backends clip to what they support. */
  maxTokens?: number;
  temperature?: number;
  reasoningEffort?: ReasoningEffort;
  /** Anthropic extended thinking budget, when asked for. */
  thinkingBudget?: number;
  /** Per-call timeout; the client's default applies when absent. */
  timeoutMs?: number;
  /** Only for target calls that run an agent harness. */
  task?: TaskContext;
  /**
   * The skill version an optimizer call works on; with the role it names the provider's prompt
   * cache (target calls use `task.skill`).
   */
  cacheSkill?: string;
  /**
   * Which repeated sample of the same prompt this is (`evaluation.repeats`), counted from 0; absent
   * or 0 is the first. Part of the cache key, so each repeat is cached (and paid) on its own.
   */
  repeat?: number;
  /** Sampling seed, sent by backends whose provider takes one (OpenAI `seed`); part of the cache key. */
  seed?: number;
  /** Functions the model may call (OpenAI and Anthropic backends, sim); part of the cache key. */
  tools?: ToolSpec[];
}

export interface Usage {
  /** Every input token, those read from or written to the provider's prompt cache included. */
  promptTokens: number;
  completionTokens: number;
  /** Input tokens the provider read from its prompt cache (billed at its cache-read rate). */
  cachedTokens?: number;
  /** Input tokens the provider wrote to its prompt cache (Anthropic bills them at a write rate). */
  cacheWriteTokens?: number;
  /**
   * Dollars the backend itself priced the call at from list prices it knows (an agent CLI's own
   * count); the accounting keeps it under prices.cliPricedProvider.
   */
  costUsd?: number;
}

/**
 * The tokens a failed call had already spent, when its error carries them (an agent run that timed
 * out or crashed after some model requests): the model client records them, so the ledger and the
 * caps count what the provider billed.
 */
export function spentBy(err: unknown): Usage | undefined {
  const spent = err instanceof Error ? (err as { spent?: Partial<Usage> }).spent : undefined;
  if (!spent) return undefined;
  const promptTokens = Number(spent.promptTokens) || 0;
  const completionTokens = Number(spent.completionTokens) || 0;
  const cachedTokens = Number(spent.cachedTokens) || 0;
  const cacheWriteTokens = Number(spent.cacheWriteTokens) || 0;
  return promptTokens + completionTokens > 0
    ? {
        promptTokens,
        completionTokens,
        ...(cachedTokens ? { cachedTokens } : {}),
        ...(cacheWriteTokens ? { cacheWriteTokens } : {}),
      }
    : undefined;
}

/** Tokens of several calls (or runs) as one; the CLI's own price only when every one reported it. */
export function sumUsage(parts: ReadonlyArray<Usage | undefined>): Usage {
  const all = parts.filter((u): u is Usage => u !== undefined);
  const add = (pick: (u: Usage) => number | undefined): number => all.reduce((n, u) => n + (pick(u) ?? 0), 0);
  const cached = add((u) => u.cachedTokens);
  const written = add((u) => u.cacheWriteTokens);
  const priced = all.length > 0 && all.every((u) => u.costUsd !== undefined);
  return {
    promptTokens: add((u) => u.promptTokens),
    completionTokens: add((u) => u.completionTokens),
    ...(cached ? { cachedTokens: cached } : {}),
    ...(written ? { cacheWriteTokens: written } : {}),
    ...(priced ? { costUsd: add((u) => u.costUsd) } : {}),
  };
}

/**
 * `err` carrying the usage of the reply it was made from: a reply the provider answered and billed
 * but that cannot be used (empty, refused) is paid for all the same (read back by spentBy).
 */
export function withSpent<E extends Error>(err: E, usage: Usage): E {
  return Object.assign(err, { spent: usage });
}

/** What a backend returns for one successful HTTP/process call. */
export interface BackendReply {
  text: string;
  usage: Usage;
  /** Model name the provider reports (may differ from the requested one). */
  model?: string;
  /** Extra trajectory data for agent harnesses (stdout/stderr/exit code). */
  trace?: Record<string, unknown>;
  /** True when the provider stopped at the completion-token cap (the text may be cut short). */
  truncated?: boolean;
}

export interface ChatResult extends BackendReply {
  backend: string;
  model: string;
  seconds: number;
  attempts: number;
  cached: boolean;
}

/** A concrete provider. Backends do one attempt; retrying is the client's job. */
export interface ChatBackend {
  /** True when the backend sends ChatMessage.images as image parts (run.ts refuses image tasks otherwise). */
  readonly acceptsImages?: boolean;
  /** True when the backend sends `tools`, reads function calls with their ids and sends tool results back. */
  readonly acceptsTools?: boolean;
  /** Provider family for concurrency limits and cache keys: `openai`, `anthropic`, `sim`, ... */
  readonly provider: string;
  /**
   * The provider whose prices apply to the calls when it is not `provider`: the API an agent CLI
   * talks to (accounting rows and the dollar estimate are keyed by it).
   */
  readonly billedProvider?: string;
  readonly model: string;
  /** Parameters that change replies, folded into the cache key. */
  readonly cacheParams: Record<string, unknown>;
  /** Where calls go (base URL or endpoint), for error messages that say what to check. */
  readonly endpoint?: string;
  /** The environment variable the key comes from, for "set your key" fixes. */
  readonly keyEnvVar?: string;
  /** Credentials this backend sends, so the client can redact them from logs, errors and cache files. */
  secrets?(): readonly string[];
  /**
   * `spentAtExit`: what a call still running when this process exits at once (a second Ctrl-C)
   * had spent, reported synchronously as it exits (agent runs; a request over HTTP reports nothing).
   */
  call(req: ChatRequest, signal: AbortSignal, spentAtExit?: (u: Usage) => void): Promise<BackendReply>;
}

/**
 * What stages call: a backend wrapped with limits, retries, timeout, cache and accounting
 * (src/engine/llm/client.ts). Throws SkillOptError('llm') after retries are exhausted, and
 * SkillOptError('cancelled') when the signal fires.
 */
export interface ModelClient {
  readonly role: ModelRole;
  /** The backend's `acceptsImages`. */
  readonly acceptsImages?: boolean;
  /** The backend's `acceptsTools`: a tool loop can run through it. */
  readonly acceptsTools?: boolean;
  readonly backend: string;
  /** The provider whose prices apply, when it is not `backend` (an agent CLI's API). */
  readonly billedProvider?: string;
  readonly model: string;
  chat(req: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
}
