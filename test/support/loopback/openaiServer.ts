import type {
  ReceivedImage,
  LoopbackOptions,
  LoopbackServer,
  RecordedRequest,
  Reply,
  Script,
  SseEvent,
  WireFormat,
} from './core';
import { contentText, estimateTokens, startLoopback, toolCallId } from './core';

export type { Handler, LoopbackOptions, LoopbackServer, RecordedRequest, Reply, Script } from './core';
export { hang, reply, status } from './core';

interface OpenAiMessage {
  role: string;
  content: unknown;
}

/** Messages of a recorded Chat Completions request. */
export function openAiMessages(req: RecordedRequest): OpenAiMessage[] {
  const body = req.body as { messages?: OpenAiMessage[] } | undefined;
  return Array.isArray(body?.messages) ? body.messages : [];
}

/** The last user message of a recorded Chat Completions request. */
export function lastUserText(req: RecordedRequest): string {
  return contentText(
    openAiMessages(req)
      .filter((m) => m.role === 'user')
      .at(-1)?.content,
  );
}

/** Everything the model was sent, as text: every message, tool results included. */
export function openAiPromptText(req: RecordedRequest): string {
  return openAiMessages(req)
    .map((m) => contentText(m.content))
    .join('\n');
}

/**
 * Images in a recorded Chat Completions request's user messages, decoded from their data URIs the
 * way a server must (a URL that is not a base64 data URI fails the test).
 */
export function openAiImages(req: RecordedRequest): ReceivedImage[] {
  const out: ReceivedImage[] = [];
  for (const m of openAiMessages(req)) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const part of m.content as { type?: string; image_url?: { url?: string; detail?: string } }[]) {
      if (part.type !== 'image_url') continue;
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url?.url ?? '');
      if (!match)
        throw new Error(`image_url is not a base64 data URI: ${String(part.image_url?.url).slice(0, 40)}`);
      out.push({
        mediaType: match[1],
        bytes: Buffer.from(match[2], 'base64'),
        ...(part.image_url?.detail ? { detail: part.image_url.detail } : {}),
      });
    }
  }
  return out;
}

/**
 * Chat Completions' tool-turn rules: an assistant message with `tool_calls` is followed by one `tool`
 * message per call id, and a `tool` message answers a call of the assistant message before it.
 */
export function checkToolTurns(messages: readonly OpenAiMessage[]): string | undefined {
  let pending: string[] = [];
  for (const m of messages as Array<
    OpenAiMessage & { tool_calls?: Array<{ id?: string }>; tool_call_id?: string }
  >) {
    if (m.role === 'tool') {
      const at = pending.indexOf(m.tool_call_id ?? '');
      if (at < 0)
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_id ${String(m.tool_call_id)}).`;
      pending.splice(at, 1);
      continue;
    }
    if (pending.length)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`;
    pending = m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id ?? '') : [];
  }
  return undefined;
}

let counter = 0;

type ReplyAction = Extract<Reply, { kind: 'reply' }>;

function chatToolCalls(r: ReplyAction): Array<Record<string, unknown>> {
  return (r.toolCalls ?? []).map((call) => ({
    id: toolCallId('call_', call),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
}

/** Chat Completions usage; `prompt_tokens_details.cached_tokens` when the reply says some were cached. */
function chatUsage(prompt: number, completion: number, cached: number | undefined): Record<string, unknown> {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 } } : {}),
  };
}

const openAiWire: WireFormat = {
  basePath: '/v1',
  // `/v1/chat/completions` for OpenAI and compatible servers; Azure puts `/openai/deployments/<name>` in front.
  isEndpoint: (path) => path.endsWith('/chat/completions'),
  okBody(r: Extract<Reply, { kind: 'reply' }>, req) {
    const calls = chatToolCalls(r);
    const text = r.text ?? (calls.length ? null : 'ok');
    const body = req.body as { model?: string } | undefined;
    const prompt = openAiPromptText(req);
    const out: Record<string, unknown> = {
      id: `chatcmpl-loopback-${++counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: r.model ?? body?.model ?? 'loopback-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text,
            refusal: null,
            ...(calls.length ? { tool_calls: calls } : {}),
          },
          finish_reason: r.finishReason ?? (calls.length ? 'tool_calls' : 'stop'),
          logprobs: null,
        },
      ],
    };
    if (r.usage !== null) {
      const promptTokens = r.usage?.promptTokens ?? estimateTokens(prompt);
      const completionTokens = r.usage?.completionTokens ?? estimateTokens(text ?? JSON.stringify(calls));
      out.usage = chatUsage(promptTokens, completionTokens, r.usage?.cachedTokens);
    }
    return out;
  },
  // Chat Completions streaming: `data:` chunks with deltas, a usage chunk when
  // `stream_options.include_usage` asks for it, then `data: [DONE]`.
  streamEvents(r: ReplyAction, req) {
    const body = req.body as { model?: string; stream_options?: { include_usage?: boolean } } | undefined;
    const id = `chatcmpl-loopback-${++counter}`;
    const model = r.model ?? body?.model ?? 'loopback-model';
    const calls = chatToolCalls(r);
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): SseEvent => ({
      data: {
        id,
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model,
        choices,
        ...extra,
      },
    });
    const events: SseEvent[] = [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    ];
    if (r.text !== undefined || !calls.length) {
      events.push(chunk([{ index: 0, delta: { content: r.text ?? 'ok' }, finish_reason: null }]));
    }
    calls.forEach((call, index) => {
      events.push(chunk([{ index: 0, delta: { tool_calls: [{ index, ...call }] }, finish_reason: null }]));
    });
    events.push(
      chunk([
        { index: 0, delta: {}, finish_reason: r.finishReason ?? (calls.length ? 'tool_calls' : 'stop') },
      ]),
    );
    if (r.usage !== null && body?.stream_options?.include_usage) {
      const promptTokens = r.usage?.promptTokens ?? estimateTokens(openAiPromptText(req));
      const completionTokens =
        r.usage?.completionTokens ?? estimateTokens((r.text ?? '') + JSON.stringify(calls));
      events.push(chunk([], { usage: chatUsage(promptTokens, completionTokens, r.usage?.cachedTokens) }));
    }
    events.push({ data: '[DONE]' });
    return events;
  },
  checkRequest: (req) => checkToolTurns(openAiMessages(req)),
  errorBody: (code, message) => ({
    error: {
      message,
      type: code === 429 ? 'rate_limit_exceeded' : 'loopback_error',
      param: null,
      code: null,
    },
  }),
};

/**
 * An OpenAI Chat Completions server on 127.0.0.1 (`POST <url>/chat/completions`, any prefix, so
 * Azure deployment paths work too). Pass `url` as the SDK's baseURL, or `origin` as an Azure endpoint.
 */
export function startOpenAiServer(script: Script, opts?: LoopbackOptions): Promise<LoopbackServer> {
  return startLoopback(openAiWire, script, opts);
}
