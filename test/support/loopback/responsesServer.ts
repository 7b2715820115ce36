import type {
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

/** One item of a Responses API `input` list (messages, function calls and their outputs). */
export interface ResponsesInputItem {
  type?: string;
  role?: string;
  content?: unknown;
  name?: string;
  arguments?: string;
  call_id?: string;
  output?: unknown;
}

/** The `input` items of a recorded Responses request (a string input becomes one user message). */
export function responsesInput(req: RecordedRequest): ResponsesInputItem[] {
  const input = (req.body as { input?: unknown } | undefined)?.input;
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? (input as ResponsesInputItem[]) : [];
}

/** Everything the model was sent, as text: instructions, messages and function-call outputs. */
export function responsesPromptText(req: RecordedRequest): string {
  const body = req.body as { instructions?: unknown } | undefined;
  const parts = [typeof body?.instructions === 'string' ? body.instructions : ''];
  for (const item of responsesInput(req)) {
    if (item.type === 'function_call_output') {
      parts.push(typeof item.output === 'string' ? item.output : contentText(item.output));
    } else if (item.type === 'function_call') {
      parts.push(`${item.name ?? ''}(${item.arguments ?? ''})`);
    } else {
      parts.push(contentText(item.content));
    }
  }
  return parts.join('\n');
}

/** The last user message of a recorded Responses request. */
export function lastUserText(req: RecordedRequest): string {
  return contentText(
    responsesInput(req)
      .filter((i) => (i.type ?? 'message') === 'message' && i.role === 'user')
      .at(-1)?.content,
  );
}

let counter = 0;

type ReplyAction = Extract<Reply, { kind: 'reply' }>;

function outputItems(r: ReplyAction, n: number): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  if (r.text !== undefined || !r.toolCalls?.length) {
    items.push({
      id: `msg_loopback_${n}`,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: r.text ?? 'ok', annotations: [] }],
    });
  }
  (r.toolCalls ?? []).forEach((call, i) => {
    items.push({
      id: `fc_loopback_${n}_${i}`,
      type: 'function_call',
      status: 'completed',
      call_id: toolCallId('call_', call),
      name: call.name,
      arguments: JSON.stringify(call.input),
    });
  });
  return items;
}

function responseObject(
  r: ReplyAction,
  req: RecordedRequest,
  n: number,
  output: Array<Record<string, unknown>>,
  status: 'in_progress' | 'completed',
): Record<string, unknown> {
  const body = req.body as { model?: string } | undefined;
  const out: Record<string, unknown> = {
    id: `resp_loopback_${n}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: r.model ?? body?.model ?? 'loopback-model',
    // A reply cut at the cap (finishReason 'length') is an incomplete response, as OpenAI sends it.
    status: status === 'completed' && r.finishReason === 'length' ? 'incomplete' : status,
    ...(status === 'completed' && r.finishReason === 'length'
      ? { incomplete_details: { reason: 'max_output_tokens' } }
      : {}),
    output,
  };
  if (status === 'completed' && r.usage !== null) {
    const input = r.usage?.promptTokens ?? estimateTokens(responsesPromptText(req));
    const outputTokens = r.usage?.completionTokens ?? estimateTokens(JSON.stringify(output));
    out.usage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: r.usage?.cachedTokens ?? 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + outputTokens,
    };
  }
  return out;
}

const responsesWire: WireFormat = {
  basePath: '/v1',
  isEndpoint: (path) => path.endsWith('/responses'),
  okBody(r: ReplyAction, req) {
    const n = ++counter;
    return responseObject(r, req, n, outputItems(r, n), 'completed');
  },
  // The Responses streaming format: response.created, per output item an added/…/done sequence,
  // then response.completed carrying the usage. Every event has a sequence number.
  streamEvents(r: ReplyAction, req) {
    const n = ++counter;
    const items = outputItems(r, n);
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>): SseEvent => ({
      event: type,
      data: { type, sequence_number: seq++, ...data },
    });
    const events: SseEvent[] = [
      ev('response.created', { response: responseObject(r, req, n, [], 'in_progress') }),
    ];
    items.forEach((item, index) => {
      if (item.type === 'message') {
        const text = (item.content as Array<{ text: string }>)[0].text;
        events.push(
          ev('response.output_item.added', {
            output_index: index,
            item: { ...item, status: 'in_progress', content: [] },
          }),
          ev('response.content_part.added', {
            item_id: item.id,
            output_index: index,
            content_index: 0,
            part: { type: 'output_text', text: '', annotations: [] },
          }),
          ev('response.output_text.delta', {
            item_id: item.id,
            output_index: index,
            content_index: 0,
            delta: text,
          }),
          ev('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text }),
        );
      } else {
        events.push(
          ev('response.output_item.added', {
            output_index: index,
            item: { ...item, status: 'in_progress', arguments: '' },
          }),
          ev('response.function_call_arguments.delta', {
            item_id: item.id,
            output_index: index,
            delta: item.arguments,
          }),
          ev('response.function_call_arguments.done', {
            item_id: item.id,
            output_index: index,
            arguments: item.arguments,
          }),
        );
      }
      events.push(ev('response.output_item.done', { output_index: index, item }));
    });
    events.push(ev('response.completed', { response: responseObject(r, req, n, items, 'completed') }));
    return events;
  },
  // With store: false every function_call_output must follow its function_call in the same input.
  checkRequest: (req) => {
    const calls = new Set<string>();
    for (const item of responsesInput(req)) {
      if (item.type === 'function_call') calls.add(item.call_id ?? '');
      if (item.type === 'function_call_output' && !calls.has(item.call_id ?? ''))
        return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
    }
    return undefined;
  },
  errorBody: (code, message) => ({
    error: {
      message,
      type: code === 429 ? 'rate_limit_exceeded' : code === 401 ? 'invalid_request_error' : 'loopback_error',
      param: null,
      code: code === 401 ? 'invalid_api_key' : null,
    },
  }),
};

/**
 * An OpenAI Responses API server on 127.0.0.1 (`POST <url>/responses`), streaming when the request
 * asks (`"stream": true`, as Codex always does). Pass `url` as the provider's base URL.
 */
export function startResponsesServer(script: Script, opts?: LoopbackOptions): Promise<LoopbackServer> {
  return startLoopback(responsesWire, script, opts);
}
