import Anthropic from '@anthropic-ai/sdk';
import type {
  Base64ImageSource,
  ImageBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { SkillOptError } from '../errors';
import { notAnApiReply, splitBaseUrl } from './wire';
import { anthropicBreakpoints, anthropicUsage } from './promptCache';
import { PLACEHOLDER_KEY, requireApiKey, scrubUrl, urlSecrets } from './secrets';
import type { BackendReply, ChatBackend, ChatMessage, ChatRequest } from './types';
import { withSpent } from './types';
import { API_KEY_ENV_VARS } from '../../protocol/vocabulary';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 16384;
/** The API refuses smaller thinking budgets. */
const MIN_THINKING_BUDGET = 1024;
const DEFAULT_TIMEOUT_MS = 300_000;

export interface AnthropicBackendOptions {
  model: string;
  apiKey?: string;
  baseUrl?: string;
  timeoutMs?: number;
  /** Completion cap when a request names none (the Messages API requires one). */
  maxTokens?: number;
  /** Extended-thinking budget when a request names none; 0 = off. */
  thinkingBudget?: number;
  /** Temperature when a request names none. */
  temperature?: number;
  /**
   * Send `temperature` at all. Off by default: the current Messages API has deprecated it and the
   * SDK no longer declares it, so only servers known to take it (older models, compatible
   * proxies) should get it.
   */
  sendTemperature?: boolean;
  keyEnvVar?: string;
  /** Mark the system block and stable prompt prefixes with cache_control (config `model.prompt_caching`). */
  promptCaching?: boolean;
}

/** Claude over the Messages API. One attempt per call: retries belong to the client. */
export class AnthropicBackend implements ChatBackend {
  readonly acceptsImages = true;
  readonly acceptsTools = true;
  readonly provider = 'anthropic';
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  readonly endpoint: string;
  readonly keyEnvVar: string;
  // `#` fields stay out of JSON.stringify and inspection, so the key never leaks via the backend.
  readonly #sdk: Anthropic;
  readonly #key: string;
  /** Credentials inside the base URL (query values, userinfo); `endpoint` is shown without them. */
  readonly #urlSecrets: readonly string[];
  readonly #opts: AnthropicBackendOptions;

  constructor(opts: AnthropicBackendOptions) {
    this.model = opts.model;
    const url = opts.baseUrl?.trim() || ANTHROPIC_DEFAULT_BASE_URL;
    this.endpoint = scrubUrl(url);
    this.#urlSecrets = urlSecrets(url);
    this.keyEnvVar = opts.keyEnvVar ?? API_KEY_ENV_VARS.anthropic;
    this.#key = requireApiKey({
      apiKey: opts.apiKey,
      provider: this.provider,
      model: opts.model,
      keyEnvVar: this.keyEnvVar,
      baseUrl: opts.baseUrl,
    });
    this.#opts = opts;
    this.cacheParams = {
      api: 'messages',
      baseUrl: this.endpoint === ANTHROPIC_DEFAULT_BASE_URL ? null : this.endpoint,
      defaultMaxTokens: opts.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      defaultThinkingBudget: opts.thinkingBudget ?? 0,
      defaultTemperature: opts.temperature ?? null,
      sendTemperature: opts.sendTemperature ?? false,
    };
    this.#sdk = new Anthropic({
      apiKey: this.#key,
      ...splitBaseUrl(url),
      maxRetries: 0,
      timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      logLevel: 'off',
    });
  }

  secrets(): readonly string[] {
    return [...(this.#key === PLACEHOLDER_KEY ? [] : [this.#key]), ...this.#urlSecrets];
  }

  async call(req: ChatRequest, signal: AbortSignal): Promise<BackendReply> {
    const body = anthropicBody(this.model, req, this.#opts);
    // An explicit timeout also skips the SDK's "use streaming for long requests" refusal, which
    // it derives from max_tokens; our per-call timeout already bounds the call.
    const fallback = this.#opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const asked = req.timeoutMs !== undefined && Number.isFinite(req.timeoutMs) ? req.timeoutMs : fallback;
    const timeout = Math.max(1, Math.round(asked));
    const message = await this.#sdk.messages.create(body, { signal, timeout, maxRetries: 0 });
    return parseMessage(message, `${this.provider} ${this.model}`);
  }

  /** This backend's client and request shape for Message Batches (src/engine/llm/batch). */
  batchWire(): AnthropicBatchWire {
    return {
      sdk: this.#sdk,
      body: (req) => anthropicBody(this.model, req, this.#opts),
      parse: (message) => parseMessage(message, `${this.provider} ${this.model}`),
    };
  }
}

/** What Message Batches need from a backend: its client, and the same body and reply reading as a call. */
export interface AnthropicBatchWire {
  sdk: Anthropic;
  body(req: ChatRequest): AnthropicBody;
  parse(message: Message): BackendReply;
}

/** The SDK forwards body fields it does not declare, which is how `temperature` still reaches servers that take it. */
export type AnthropicBody = MessageCreateParamsNonStreaming & { temperature?: number };

/** The Messages body for one request: system messages joined into `system`, thinking when budgeted. */
export function anthropicBody(
  model: string,
  req: ChatRequest,
  opts: Pick<
    AnthropicBackendOptions,
    'maxTokens' | 'thinkingBudget' | 'temperature' | 'sendTemperature' | 'promptCaching'
  > = {},
): AnthropicBody {
  const system = req.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  let messages = turnsOf(req.messages.filter((m) => m.role !== 'system'));
  // The API needs at least one turn; a system-only request becomes the user turn.
  const systemOnly = messages.length === 0;
  if (systemOnly) messages = [{ role: 'user', content: system }];

  let maxTokens = req.maxTokens ?? opts.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  const budget = req.thinkingBudget ?? opts.thinkingBudget ?? 0;
  const body: AnthropicBody = { model, max_tokens: maxTokens, messages };
  if (system && !systemOnly) body.system = system;
  if (req.tools?.length)
    body.tools = req.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { type: 'object' as const, ...t.parameters },
    }));
  if (opts.promptCaching)
    Object.assign(body, anthropicBreakpoints(req, systemOnly ? undefined : system, messages));
  if (budget > 0) {
    const budgetTokens = Math.max(MIN_THINKING_BUDGET, Math.floor(budget));
    // The thinking budget is part of max_tokens and must stay below it; keep the asked-for room for the answer.
    if (maxTokens <= budgetTokens) maxTokens = budgetTokens + maxTokens;
    body.max_tokens = maxTokens;
    body.thinking = { type: 'enabled', budget_tokens: budgetTokens };
    // Extended thinking accepts no temperature.
  } else if (opts.sendTemperature) {
    const temperature = req.temperature ?? opts.temperature;
    if (temperature !== undefined) body.temperature = temperature;
  }
  return body;
}

/**
 * Messages as Messages-API turns. A tool loop's assistant calls become `tool_use` blocks, and the
 * results that follow them one user turn of `tool_result` blocks (the API wants them together).
 */
function turnsOf(messages: readonly ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      const block: ToolResultBlockParam = {
        type: 'tool_result',
        tool_use_id: m.toolCallId ?? '',
        content: m.content,
      };
      const last = out.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content) && last.content.every(isToolResult))
        last.content.push(block);
      else out.push({ role: 'user', content: [block] });
    } else if (m.role === 'assistant' && m.toolCalls?.length) {
      out.push({
        role: 'assistant',
        content: [
          ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
          ...m.toolCalls.map((c): ToolUseBlockParam => ({
            type: 'tool_use',
            id: c.id ?? '',
            name: c.name,
            input: c.arguments,
          })),
        ],
      });
    } else out.push({ role: m.role === 'assistant' ? 'assistant' : 'user', content: content(m) });
  }
  return out;
}

function isToolResult(b: unknown): boolean {
  return (b as { type?: unknown }).type === 'tool_result';
}

/** A user message with images becomes image blocks (base64) followed by the text. */
function content(m: ChatMessage): MessageParam['content'] {
  if (!m.images?.length || m.role !== 'user') return m.content;
  return [
    ...m.images.map((img): ImageBlockParam => ({
      type: 'image',
      source: {
        type: 'base64',
        media_type: img.mediaType as Base64ImageSource['media_type'],
        data: img.data,
      },
    })),
    { type: 'text', text: m.content },
  ];
}

function parseMessage(message: Message, label: string): BackendReply {
  const foreign = notAnApiReply(message, label);
  if (foreign) throw foreign;
  const blocks = Array.isArray(message.content) ? message.content : [];
  const text = blocks
    .filter((b): b is Anthropic.TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
  const truncated = message.stop_reason === 'max_tokens';
  const toolCalls = blocks
    .filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')
    .map((b) => ({
      id: b.id,
      name: b.name,
      arguments:
        b.input && typeof b.input === 'object' && !Array.isArray(b.input)
          ? (b.input as Record<string, unknown>)
          : {},
    }));
  // A reply that only calls a tool is complete without text.
  const usage = anthropicUsage(message.usage);
  if (text.trim() === '' && !toolCalls.length) {
    // Billed all the same: the error carries the usage.
    throw withSpent(
      new SkillOptError(
        'llm-reply',
        `${label}: the reply has no text${truncated ? ' (it stopped at max_tokens, possibly while thinking)' : ''}`,
        { fix: 'raise the completion-token cap, or lower the thinking budget' },
      ),
      usage,
    );
  }
  return {
    text,
    usage,
    ...(typeof message.model === 'string' && message.model ? { model: message.model } : {}),
    ...(truncated ? { truncated: true } : {}),
    ...(toolCalls.length ? { trace: { toolCalls } } : {}),
  };
}
