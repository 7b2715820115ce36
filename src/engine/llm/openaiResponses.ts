/**
 * The OpenAI Responses API, for the models that serve only it (the reference switches to it for
 * `gpt-5.x-codex`, `codex-mini` and `gpt-5.4-pro`): the same ChatRequest as Chat Completions,
 * sent as `input` items with `max_output_tokens`, `reasoning.effort` and `store: false`, read back
 * from `output_text` with its usage (cached input included).
 */
import type OpenAI from 'openai';
import type {
  Response,
  ResponseCreateParamsNonStreaming,
  ResponseInputImage,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import type { OpenAiApi } from '../config/schema/enums';
import { SkillOptError } from '../errors';
import { notAnApiReply } from './wire';
import type { BackendReply, ChatMessage, ChatRequest, ReasoningEffort, Usage } from './types';
import { withSpent } from './types';

export type { OpenAiApi };

/**
 * Models that answer only on the Responses API: the reference's list (`gpt-5.x-codex`, `codex-mini`,
 * `gpt-5.4-pro`) and the other `-pro` reasoning models (o1-pro, o3-pro, gpt-5-pro), judged on the
 * last path segment so provider-prefixed names count too.
 */
export function needsResponsesApi(model: string): boolean {
  const name = (model.split('/').pop() ?? model).trim().toLowerCase();
  return (
    /^gpt-5(\.\d+)?-codex/.test(name) || /^codex-mini/.test(name) || /^(gpt-5(\.\d+)?|o\d+)-pro\b/.test(name)
  );
}

/** Whether calls for `model` go through the Responses API under the `model.openai_api` setting. */
export function usesResponsesApi(model: string, api: OpenAiApi = 'auto'): boolean {
  return api === 'responses' || (api === 'auto' && needsResponsesApi(model));
}

export interface ResponsesShape {
  model: string;
  /** Send `reasoning.effort` (reasoning models); otherwise a temperature may be sent. */
  reasoning: boolean;
  effort?: ReasoningEffort;
  temperature?: number;
  maxTokens?: number;
  promptCacheKey?: string;
}

/** The Responses body for one request. Our system messages become `instructions`. */
export function responsesBody(req: ChatRequest, shape: ResponsesShape): ResponseCreateParamsNonStreaming {
  const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const body: ResponseCreateParamsNonStreaming = {
    model: shape.model,
    input: req.messages.filter((m) => m.role !== 'system').flatMap(inputItems),
    // Nothing we send needs to be kept at the provider: no conversation state, no stored logs.
    store: false,
  };
  if (system.length) body.instructions = system.join('\n\n');
  if (shape.maxTokens !== undefined) body.max_output_tokens = shape.maxTokens;
  if (shape.reasoning && shape.effort) body.reasoning = { effort: shape.effort };
  if (!shape.reasoning && shape.temperature !== undefined) body.temperature = shape.temperature;
  if (shape.promptCacheKey) body.prompt_cache_key = shape.promptCacheKey;
  if (req.tools?.length)
    body.tools = req.tools.map((t) => ({
      type: 'function' as const,
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      strict: false,
    }));
  return body;
}

/** One message as input items: a tool loop's calls as `function_call` items, results as `function_call_output`. */
function inputItems(m: ChatMessage): ResponseInputItem[] {
  if (m.role === 'tool')
    return [{ type: 'function_call_output', call_id: m.toolCallId ?? '', output: m.content }];
  if (m.role === 'assistant') {
    const calls = (m.toolCalls ?? []).map((c): ResponseInputItem => ({
      type: 'function_call',
      call_id: c.id ?? '',
      name: c.name,
      arguments: JSON.stringify(c.arguments),
    }));
    return m.content || !calls.length ? [{ role: 'assistant', content: m.content }, ...calls] : calls;
  }
  if (!m.images?.length) return [{ role: 'user', content: m.content }];
  return [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: m.content },
        ...m.images.map((img): ResponseInputImage => ({
          type: 'input_image' as const,
          image_url: `data:${img.mediaType};base64,${img.data}`,
          detail: img.detail === 'low' || img.detail === 'high' ? img.detail : 'auto',
        })),
      ],
    },
  ];
}

/** A function call's JSON arguments as an object; anything else becomes `{}`. */
export function parseArguments(text: string | undefined): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Sends one request through `sdk.responses` and reads its reply. */
export async function callResponses(
  sdk: OpenAI,
  body: ResponseCreateParamsNonStreaming,
  opts: { signal: AbortSignal; timeout: number },
  label: string,
): Promise<BackendReply> {
  const response = await sdk.responses.create(body, { ...opts, maxRetries: 0 });
  return parseResponse(response, label);
}

export function parseResponse(response: Response, label: string): BackendReply {
  const foreign = notAnApiReply(response, label);
  if (foreign) throw foreign;
  const fix =
    'check that the model serves the Responses API (model.openai_api) and raise the completion-token cap if it stopped early';
  const cached = response.usage?.input_tokens_details?.cached_tokens ?? 0;
  const usage: Usage = {
    promptTokens: response.usage?.input_tokens ?? 0,
    completionTokens: response.usage?.output_tokens ?? 0,
    ...(cached > 0 ? { cachedTokens: cached } : {}),
  };
  // A response that cannot be used was billed all the same: its error carries the usage.
  const unusable = (problem: string): SkillOptError =>
    withSpent(new SkillOptError('llm-reply', problem, { fix }), usage);
  if (response.status === 'failed' || response.error)
    throw unusable(`${label}: the response failed: ${response.error?.message ?? 'no reason given'}`);
  const truncated =
    response.status === 'incomplete' && response.incomplete_details?.reason === 'max_output_tokens';
  const text = typeof response.output_text === 'string' ? response.output_text : outputText(response);
  const toolCalls = (response.output ?? []).flatMap((item) =>
    item.type === 'function_call'
      ? [{ id: item.call_id, name: item.name, arguments: parseArguments(item.arguments) }]
      : [],
  );
  // A reply that only calls a function is complete without text.
  if (text.trim() === '' && !toolCalls.length) {
    const refusal = refusalOf(response);
    throw unusable(
      refusal
        ? `${label}: the model refused: ${refusal}`
        : `${label}: the reply is empty${truncated ? ' (it stopped at the completion-token cap)' : ''}`,
    );
  }
  return {
    text,
    usage,
    ...(typeof response.model === 'string' && response.model ? { model: response.model } : {}),
    ...(truncated ? { truncated: true } : {}),
    ...(toolCalls.length ? { trace: { toolCalls } } : {}),
  };
}

/** The text parts of the output messages (what the SDK's `output_text` joins). */
function outputText(response: Response): string {
  const parts: string[] = [];
  for (const item of response.output ?? [])
    if (item.type === 'message')
      for (const c of item.content) if (c.type === 'output_text') parts.push(c.text);
  return parts.join('');
}

function refusalOf(response: Response): string | undefined {
  for (const item of response.output ?? [])
    if (item.type === 'message') for (const c of item.content) if (c.type === 'refusal') return c.refusal;
  return undefined;
}
