import OpenAI, { AzureOpenAI } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { SkillOptError } from '../errors';
import { notAnApiReply, splitBaseUrl } from './wire';
import { chatCompletionsUsage, promptCacheKey } from './promptCache';
import type { Logger } from '../log';
import { PLACEHOLDER_KEY, requireApiKey, scrubUrl, urlSecrets } from './secrets';
import type {
  BackendReply,
  ChatBackend,
  ChatMessage,
  ChatRequest,
  ReasoningEffort,
  ReplyToolCall,
} from './types';
import { API_KEY_ENV_VARS } from '../../protocol/vocabulary';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const AZURE_DEFAULT_API_VERSION = '2024-12-01-preview';
const DEFAULT_TIMEOUT_MS = 300_000;

/** Which request field carries the completion cap. */
export type TokenField = 'max_completion_tokens' | 'max_tokens';

/** Whether to send `reasoning_effort`: by model name, always, or never. */
export type ReasoningSupport = 'auto' | 'on' | 'off';

/**
 * OpenAI models that take `reasoning_effort` and reject any temperature but the default: the
 * o-series and gpt-5* (not the `-chat` variants). Judged on the last path segment so OpenRouter
 * names such as `openai/gpt-5` count too.
 */
export function isReasoningModel(model: string): boolean {
  const name = (model.split('/').pop() ?? model).trim().toLowerCase();
  if (/^o\d/.test(name)) return true;
  return /^gpt-5/.test(name) && !/-chat/.test(name);
}

interface RequestShape {
  model: string;
  tokenField: TokenField;
  reasoning: ReasoningSupport;
  reasoningEffort?: ReasoningEffort;
  temperature?: number;
  maxTokensCap?: number;
  promptCacheKey: boolean;
  extraBody?: Record<string, unknown>;
}

export interface OpenAiCommonOptions {
  /** Default per-call timeout; the client's per-call signal governs as well. */
  timeoutMs?: number;
  tokenField?: TokenField;
  reasoning?: ReasoningSupport;
  /** Effort used when a request names none. */
  reasoningEffort?: ReasoningEffort;
  /** Temperature used when a request names none. */
  temperature?: number;
  /** Largest completion cap the server accepts; larger requests are clipped to it. */
  maxTokensCap?: number;
  /** Send `prompt_cache_key` per skill version (config `model.prompt_caching` / `prompt_cache_key`). */
  promptCacheKey?: boolean;
  /** Fields a server expects beyond Chat Completions (Qwen's chat_template_kwargs, MiniMax's thinking). */
  extraBody?: Record<string, unknown>;
  logger?: Logger;
}

export interface OpenAiBackendOptions extends OpenAiCommonOptions {
  model: string;
  apiKey?: string;
  /** Any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp, OpenRouter); default OpenAI. */
  baseUrl?: string;
  /** Provider name for limits, prices and cache keys; default `openai`, or `openai_compatible` with a base URL. */
  provider?: string;
  /** Named in the missing-key message; default `API_KEY_ENV_VARS.openai`. */
  keyEnvVar?: string;
}

/** Chat Completions over the `openai` SDK. One attempt per call: retries belong to the client. */
export class OpenAiBackend implements ChatBackend {
  readonly acceptsImages = true;
  readonly provider: string;
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  readonly endpoint: string;
  readonly keyEnvVar: string;
  // `#` fields stay out of JSON.stringify and inspection, so the key never leaks via the backend.
  readonly #sdk: OpenAI;
  readonly #key: string;
  /** Credentials inside the base URL (query values, userinfo); `endpoint` is shown without them. */
  readonly #urlSecrets: readonly string[];
  readonly #shape: RequestShape;
  readonly #timeoutMs: number;
  readonly #logger?: Logger;

  constructor(opts: OpenAiBackendOptions) {
    const custom = Boolean(opts.baseUrl && opts.baseUrl.replace(/\/+$/, '') !== OPENAI_DEFAULT_BASE_URL);
    this.model = opts.model;
    this.provider = opts.provider ?? (custom ? 'openai_compatible' : 'openai');
    const url = custom ? opts.baseUrl! : OPENAI_DEFAULT_BASE_URL;
    this.endpoint = scrubUrl(url);
    this.#urlSecrets = urlSecrets(url);
    this.keyEnvVar = opts.keyEnvVar ?? API_KEY_ENV_VARS.openai;
    this.#key = requireApiKey({
      apiKey: opts.apiKey,
      provider: this.provider,
      model: opts.model,
      keyEnvVar: this.keyEnvVar,
      baseUrl: custom ? opts.baseUrl : undefined,
    });
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#logger = opts.logger;
    this.#shape = shapeFrom(opts.model, opts, custom ? 'max_tokens' : 'max_completion_tokens');
    this.cacheParams = {
      api: 'chat.completions',
      baseUrl: custom ? this.endpoint : null,
      ...shapeParams(this.#shape),
    };
    this.#sdk = new OpenAI({
      apiKey: this.#key,
      ...splitBaseUrl(url),
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.#timeoutMs,
      logLevel: 'off',
    });
  }

  secrets(): readonly string[] {
    return [...(this.#key === PLACEHOLDER_KEY ? [] : [this.#key]), ...this.#urlSecrets];
  }

  async call(req: ChatRequest, signal: AbortSignal): Promise<BackendReply> {
    const body = buildBody(this.#shape, req, this.#logger);
    const completion = await this.#sdk.chat.completions.create(body, {
      signal,
      timeout: timeoutFor(req, this.#timeoutMs),
      maxRetries: 0,
    });
    return parseCompletion(completion, `${this.provider} ${this.model}`);
  }

  /** This backend's client and request shape for the Batch API (src/engine/llm/batch). */
  batchWire(): OpenAiBatchWire {
    return {
      sdk: this.#sdk,
      body: (req) => buildBody(this.#shape, req, this.#logger),
      parse: (completion) => parseCompletion(completion, `${this.provider} ${this.model}`),
    };
  }
}

/** What the Batch API needs from a backend: its client, and the same body and reply reading as a call. */
export interface OpenAiBatchWire {
  sdk: OpenAI;
  body(req: ChatRequest): ChatCompletionCreateParamsNonStreaming;
  parse(completion: ChatCompletion): BackendReply;
}

export interface AzureOpenAiBackendOptions extends OpenAiCommonOptions {
  /** `https://<resource>.openai.azure.com` */
  endpoint: string;
  deployment: string;
  apiVersion?: string;
  apiKey?: string;
  keyEnvVar?: string;
  /** Keyless auth (azure_cli, managed_identity): a bearer token per request instead of a key. */
  adTokenProvider?: () => Promise<string>;
}

/** Azure OpenAI through the SDK's `AzureOpenAI` client; same request shape as OpenAiBackend. */
export class AzureOpenAiBackend implements ChatBackend {
  readonly acceptsImages = true;
  readonly provider = 'azure_openai';
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  readonly endpoint: string;
  readonly keyEnvVar: string;
  readonly #sdk: AzureOpenAI;
  readonly #key: string;
  readonly #urlSecrets: readonly string[];
  readonly #shape: RequestShape;
  readonly #timeoutMs: number;
  readonly #logger?: Logger;

  constructor(opts: AzureOpenAiBackendOptions) {
    this.keyEnvVar = opts.keyEnvVar ?? API_KEY_ENV_VARS.azure_openai;
    if (!opts.endpoint?.trim()) {
      throw new SkillOptError('config', `no Azure OpenAI endpoint for deployment ${opts.deployment}`, {
        key: 'model.azure_openai_endpoint',
        fix: 'set model.azure_openai_endpoint in the config or the AZURE_OPENAI_ENDPOINT environment variable',
      });
    }
    if (!opts.deployment?.trim()) {
      throw new SkillOptError('config', 'no Azure OpenAI deployment name', {
        fix: 'set the model name (model.optimizer / model.target) to the Azure deployment name',
      });
    }
    this.model = opts.deployment;
    const endpoint = opts.endpoint.trim();
    this.endpoint = scrubUrl(endpoint);
    this.#urlSecrets = urlSecrets(endpoint);
    // A keyless sign-in needs no key; the token never reaches our logs (the SDK asks per request).
    this.#key = opts.adTokenProvider
      ? PLACEHOLDER_KEY
      : requireApiKey({
          apiKey: opts.apiKey,
          provider: this.provider,
          model: opts.deployment,
          keyEnvVar: this.keyEnvVar,
          baseUrl: endpoint,
        });
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#logger = opts.logger;
    this.#shape = shapeFrom(opts.deployment, opts, 'max_completion_tokens');
    const apiVersion = opts.apiVersion?.trim() || AZURE_DEFAULT_API_VERSION;
    this.cacheParams = {
      api: 'azure.chat.completions',
      endpoint: this.endpoint,
      apiVersion,
      ...shapeParams(this.#shape),
    };
    this.#sdk = new AzureOpenAI({
      endpoint,
      // null keeps OPENAI_BASE_URL from the environment out: it would clash with `endpoint`.
      baseURL: null,
      deployment: opts.deployment,
      apiVersion,
      // '' (not undefined) keeps AZURE_OPENAI_API_KEY from the environment out of a keyless client.
      ...(opts.adTokenProvider
        ? { apiKey: '', azureADTokenProvider: opts.adTokenProvider }
        : { apiKey: this.#key }),
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.#timeoutMs,
      logLevel: 'off',
    });
  }

  secrets(): readonly string[] {
    return [...(this.#key === PLACEHOLDER_KEY ? [] : [this.#key]), ...this.#urlSecrets];
  }

  async call(req: ChatRequest, signal: AbortSignal): Promise<BackendReply> {
    const body = buildBody(this.#shape, req, this.#logger);
    const completion = await this.#sdk.chat.completions.create(body, {
      signal,
      timeout: timeoutFor(req, this.#timeoutMs),
      maxRetries: 0,
    });
    return parseCompletion(completion, `${this.provider} ${this.model}`);
  }
}

function shapeFrom(model: string, opts: OpenAiCommonOptions, defaultField: TokenField): RequestShape {
  return {
    model,
    tokenField: opts.tokenField ?? defaultField,
    reasoning: opts.reasoning ?? 'auto',
    reasoningEffort: opts.reasoningEffort,
    temperature: opts.temperature,
    maxTokensCap: opts.maxTokensCap,
    promptCacheKey: opts.promptCacheKey ?? false,
    ...(opts.extraBody && Object.keys(opts.extraBody).length ? { extraBody: opts.extraBody } : {}),
  };
}

function shapeParams(shape: RequestShape): Record<string, unknown> {
  return {
    tokenField: shape.tokenField,
    reasoning: shape.reasoning,
    defaultReasoningEffort: shape.reasoningEffort ?? null,
    defaultTemperature: shape.temperature ?? null,
    maxTokensCap: shape.maxTokensCap ?? null,
    ...(shape.extraBody ? { extraBody: shape.extraBody } : {}),
  };
}

function timeoutFor(req: ChatRequest, fallback: number): number {
  const ms = req.timeoutMs !== undefined && Number.isFinite(req.timeoutMs) ? req.timeoutMs : fallback;
  return Math.max(1, Math.round(ms));
}

const warnedTemperature = new WeakSet<RequestShape>();

/** The Chat Completions body for one request. Exported for tests of the request shape. */
function buildBody(
  shape: RequestShape,
  req: ChatRequest,
  logger?: Logger,
): ChatCompletionCreateParamsNonStreaming {
  const body: ChatCompletionCreateParamsNonStreaming = {
    ...(structuredClone(shape.extraBody) as object),
    model: shape.model,
    messages: req.messages.map(chatMessage),
  };
  let maxTokens = req.maxTokens;
  if (maxTokens !== undefined && shape.maxTokensCap !== undefined)
    maxTokens = Math.min(maxTokens, shape.maxTokensCap);
  if (maxTokens !== undefined) body[shape.tokenField] = maxTokens;

  const cacheKey = shape.promptCacheKey ? promptCacheKey(req) : undefined;
  if (cacheKey) body.prompt_cache_key = cacheKey;

  const reasoningModel = isReasoningModel(shape.model);
  const sendEffort = shape.reasoning === 'on' || (shape.reasoning === 'auto' && reasoningModel);
  const effort = req.reasoningEffort ?? shape.reasoningEffort;
  if (sendEffort && effort) body.reasoning_effort = effort;

  const temperature = req.temperature ?? shape.temperature;
  if (temperature !== undefined) {
    if (reasoningModel) {
      // These models answer 400 to any temperature but the default; asking for 0 must not fail the run.
      if (!warnedTemperature.has(shape)) {
        warnedTemperature.add(shape);
        logger?.log(
          'info',
          'llm',
          `${shape.model} takes no temperature; sending none (asked for ${temperature})`,
        );
      }
    } else {
      body.temperature = temperature;
    }
  }
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.tools?.length)
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  return body;
}

/** The function calls of a reply, with their arguments parsed (unparseable arguments become `{}`). */
function toolCallsOf(message: ChatCompletion.Choice['message'] | undefined): ReplyToolCall[] {
  const out: ReplyToolCall[] = [];
  for (const c of message?.tool_calls ?? []) {
    if (c.type !== 'function') continue;
    let args: unknown;
    try {
      args = JSON.parse(c.function.arguments || '{}');
    } catch {
      args = {};
    }
    out.push({
      name: c.function.name,
      arguments:
        args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
    });
  }
  return out;
}

/** A user message with images becomes text and image_url parts (base64 data URIs). */
function chatMessage(m: ChatMessage): ChatCompletionMessageParam {
  if (!m.images?.length || m.role !== 'user') return { role: m.role, content: m.content };
  return {
    role: 'user',
    content: [
      { type: 'text', text: m.content },
      ...m.images.map((img): ChatCompletionContentPart => ({
        type: 'image_url',
        image_url: {
          url: `data:${img.mediaType};base64,${img.data}`,
          ...(img.detail === 'low' || img.detail === 'high' ? { detail: img.detail } : {}),
        },
      })),
    ],
  };
}

function parseCompletion(completion: ChatCompletion, label: string): BackendReply {
  const foreign = notAnApiReply(completion, label);
  if (foreign) throw foreign;
  const fix =
    'check that the model serves chat completions and raise the completion-token cap if it stopped early';
  const choice = (completion.choices as ChatCompletion['choices'] | undefined)?.[0];
  if (!choice) throw new SkillOptError('llm-reply', `${label}: the reply has no choices`, { fix });
  const content = (choice.message as ChatCompletion.Choice['message'] | undefined)?.content;
  const truncated = choice.finish_reason === 'length';
  const toolCalls = toolCallsOf(choice.message);
  // A reply that only calls a function is complete without text.
  if (toolCalls.length && (typeof content !== 'string' || content.trim() === '')) {
    return {
      text: '',
      usage: chatCompletionsUsage(completion.usage),
      ...(typeof completion.model === 'string' && completion.model ? { model: completion.model } : {}),
      trace: { toolCalls },
    };
  }
  if (typeof content !== 'string' || content.trim() === '') {
    const refusal = choice.message?.refusal;
    const problem = refusal
      ? `${label}: the model refused: ${refusal}`
      : `${label}: the reply is empty${truncated ? ' (it stopped at the completion-token cap)' : ''}`;
    throw new SkillOptError('llm-reply', problem, { fix });
  }
  return {
    text: content,
    usage: chatCompletionsUsage(completion.usage),
    ...(typeof completion.model === 'string' && completion.model ? { model: completion.model } : {}),
    ...(truncated ? { truncated: true } : {}),
    ...(toolCalls.length ? { trace: { toolCalls } } : {}),
  };
}
