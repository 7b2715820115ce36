/**
 * How one request to an OpenAI-family backend is shaped and read: the request shape fixed at
 * construction (model, completion-cap field, reasoning, temperature, cache key), the Chat
 * Completions body and reply, and the switch to the Responses API (openaiResponses.ts).
 */
import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses';
import type { OpenAiApi } from '../config/schema/enums';
import { SkillOptError } from '../errors';
import type { Logger } from '../log';
import {
  callResponses,
  needsResponsesApi,
  parseArguments,
  responsesBody,
  usesResponsesApi,
} from './openaiResponses';
import { chatCompletionsUsage, promptCacheKey } from './promptCache';
import type { BackendReply, ChatMessage, ChatRequest, ReasoningEffort, ReplyToolCall } from './types';
import { withSpent } from './types';
import { notAnApiReply } from './wire';

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

export interface RequestShape {
  model: string;
  /** Sent through the Responses API instead of Chat Completions. */
  responses: boolean;
  tokenField: TokenField;
  reasoning: ReasoningSupport;
  reasoningEffort?: ReasoningEffort;
  temperature?: number;
  maxTokensCap?: number;
  promptCacheKey: boolean;
  extraBody?: Record<string, unknown>;
}

/** What of a backend's options decides the request shape. */
export interface ShapeOptions {
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
  /** Chat Completions or the Responses API; auto: Responses for the models that serve only it. */
  api?: OpenAiApi;
}

/** One request through the API the shape names. */
export async function sendRequest(
  sdk: OpenAI,
  shape: RequestShape,
  req: ChatRequest,
  signal: AbortSignal,
  timeout: number,
  opts: { label: string; logger?: Logger },
): Promise<BackendReply> {
  if (shape.responses)
    return callResponses(sdk, responsesRequest(shape, req, opts.logger), { signal, timeout }, opts.label);
  const completion = await sdk.chat.completions.create(buildBody(shape, req, opts.logger), {
    signal,
    timeout,
    maxRetries: 0,
  });
  return parseCompletion(completion, opts.label);
}

const warnedSeed = new WeakSet<RequestShape>();

/** The Responses body: the same choices as buildBody (effort, temperature, cap, cache key). */
function responsesRequest(
  shape: RequestShape,
  req: ChatRequest,
  logger?: Logger,
): ResponseCreateParamsNonStreaming {
  const reasoning =
    shape.reasoning === 'on' ||
    (shape.reasoning === 'auto' && (isReasoningModel(shape.model) || needsResponsesApi(shape.model)));
  const temperature = req.temperature ?? shape.temperature;
  if (temperature !== undefined && reasoning) warnTemperature(shape, temperature, logger);
  if (req.seed !== undefined && !warnedSeed.has(shape)) {
    warnedSeed.add(shape);
    logger?.log(
      'info',
      'llm',
      `${shape.model}: the Responses API takes no seed; repeats vary by sampling only`,
    );
  }
  const effort = req.reasoningEffort ?? shape.reasoningEffort;
  const maxTokens =
    req.maxTokens !== undefined && shape.maxTokensCap !== undefined
      ? Math.min(req.maxTokens, shape.maxTokensCap)
      : req.maxTokens;
  const cacheKey = shape.promptCacheKey ? promptCacheKey(req) : undefined;
  return {
    ...(structuredClone(shape.extraBody) as object),
    ...responsesBody(req, {
      model: shape.model,
      reasoning,
      ...(effort ? { effort } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(cacheKey ? { promptCacheKey: cacheKey } : {}),
    }),
  };
}

export function shapeFrom(model: string, opts: ShapeOptions, defaultField: TokenField): RequestShape {
  return {
    model,
    responses: usesResponsesApi(model, opts.api),
    tokenField: opts.tokenField ?? defaultField,
    reasoning: opts.reasoning ?? 'auto',
    reasoningEffort: opts.reasoningEffort,
    temperature: opts.temperature,
    maxTokensCap: opts.maxTokensCap,
    promptCacheKey: opts.promptCacheKey ?? false,
    ...(opts.extraBody && Object.keys(opts.extraBody).length ? { extraBody: opts.extraBody } : {}),
  };
}

export function shapeParams(shape: RequestShape): Record<string, unknown> {
  return {
    tokenField: shape.tokenField,
    reasoning: shape.reasoning,
    defaultReasoningEffort: shape.reasoningEffort ?? null,
    defaultTemperature: shape.temperature ?? null,
    maxTokensCap: shape.maxTokensCap ?? null,
    ...(shape.extraBody ? { extraBody: shape.extraBody } : {}),
  };
}

export function timeoutFor(req: ChatRequest, fallback: number): number {
  const ms = req.timeoutMs !== undefined && Number.isFinite(req.timeoutMs) ? req.timeoutMs : fallback;
  return Math.max(1, Math.round(ms));
}

const warnedTemperature = new WeakSet<RequestShape>();

/** Reasoning models answer 400 to any temperature but the default; asking for 0 must not fail the run. */
function warnTemperature(shape: RequestShape, temperature: number, logger?: Logger): void {
  if (warnedTemperature.has(shape)) return;
  warnedTemperature.add(shape);
  logger?.log('info', 'llm', `${shape.model} takes no temperature; sending none (asked for ${temperature})`);
}

/** The Chat Completions body for one request. Exported for tests of the request shape. */
export function buildBody(
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
    if (reasoningModel) warnTemperature(shape, temperature, logger);
    else body.temperature = temperature;
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
    out.push({ id: c.id, name: c.function.name, arguments: parseArguments(c.function.arguments) });
  }
  return out;
}

/**
 * A user message with images becomes text and image_url parts (base64 data URIs); a tool loop's
 * assistant calls go as `tool_calls` and each result as a `tool` message naming its call.
 */
function chatMessage(m: ChatMessage): ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content };
  if (m.role === 'assistant' && m.toolCalls?.length)
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({
        id: c.id ?? '',
        type: 'function' as const,
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      })),
    };
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

export function parseCompletion(completion: ChatCompletion, label: string): BackendReply {
  const foreign = notAnApiReply(completion, label);
  if (foreign) throw foreign;
  const fix =
    'check that the model serves chat completions and raise the completion-token cap if it stopped early';
  // A reply that cannot be used was billed all the same: its error carries the usage.
  const usage = chatCompletionsUsage(completion.usage);
  const unusable = (problem: string): SkillOptError =>
    withSpent(new SkillOptError('llm-reply', problem, { fix }), usage);
  const choice = (completion.choices as ChatCompletion['choices'] | undefined)?.[0];
  if (!choice) throw unusable(`${label}: the reply has no choices`);
  const content = (choice.message as ChatCompletion.Choice['message'] | undefined)?.content;
  const truncated = choice.finish_reason === 'length';
  const toolCalls = toolCallsOf(choice.message);
  // A reply that only calls a function is complete without text.
  if (toolCalls.length && (typeof content !== 'string' || content.trim() === '')) {
    return {
      text: '',
      usage,
      ...(typeof completion.model === 'string' && completion.model ? { model: completion.model } : {}),
      trace: { toolCalls },
    };
  }
  if (typeof content !== 'string' || content.trim() === '') {
    const refusal = choice.message?.refusal;
    throw unusable(
      refusal
        ? `${label}: the model refused: ${refusal}`
        : `${label}: the reply is empty${truncated ? ' (it stopped at the completion-token cap)' : ''}`,
    );
  }
  return {
    text: content,
    usage,
    ...(typeof completion.model === 'string' && completion.model ? { model: completion.model } : {}),
    ...(truncated ? { truncated: true } : {}),
    ...(toolCalls.length ? { trace: { toolCalls } } : {}),
  };
}
