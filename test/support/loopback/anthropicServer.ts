import type { LoopbackOptions, LoopbackServer, RecordedRequest, Reply, Script, WireFormat } from './core';
import { contentText, estimateTokens, startLoopback } from './core';

export type { Handler, LoopbackOptions, LoopbackServer, RecordedRequest, Reply, Script } from './core';
export { hang, reply, status } from './core';

interface AnthropicMessage {
  role: string;
  content: unknown;
}

/** Messages of a recorded Messages API request. */
export function anthropicMessages(req: RecordedRequest): AnthropicMessage[] {
  const body = req.body as { messages?: AnthropicMessage[] } | undefined;
  return Array.isArray(body?.messages) ? body.messages : [];
}

/** The last user turn of a recorded Messages API request. */
export function lastUserText(req: RecordedRequest): string {
  return contentText(
    anthropicMessages(req)
      .filter((m) => m.role === 'user')
      .at(-1)?.content,
  );
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

let counter = 0;

const anthropicWire: WireFormat = {
  basePath: '',
  isEndpoint: (path) => path === '/v1/messages',
  okBody(r: Extract<Reply, { kind: 'reply' }>, req) {
    const text = r.text ?? 'ok';
    const body = req.body as { model?: string; system?: unknown } | undefined;
    const prompt = [
      contentText(body?.system),
      ...anthropicMessages(req).map((m) => contentText(m.content)),
    ].join('\n');
    const promptTokens = r.usage?.promptTokens ?? estimateTokens(prompt);
    const completionTokens = r.usage?.completionTokens ?? estimateTokens(text);
    return {
      id: `msg_loopback_${++counter}`,
      type: 'message',
      role: 'assistant',
      model: r.model ?? body?.model ?? 'loopback-model',
      content: r.blocks ?? [{ type: 'text', text }],
      stop_reason: r.finishReason ?? 'end_turn',
      stop_sequence: null,
      ...(r.usage === null ? {} : { usage: { input_tokens: promptTokens, output_tokens: completionTokens } }),
    };
  },
  errorBody: (code, message) => ({
    type: 'error',
    error: { type: ERROR_TYPES[code] ?? 'api_error', message },
  }),
};

/** An Anthropic Messages server on 127.0.0.1 (`POST /v1/messages`). Pass `url` as the SDK's baseURL. */
export function startAnthropicServer(script: Script, opts?: LoopbackOptions): Promise<LoopbackServer> {
  return startLoopback(anthropicWire, script, opts);
}
