import type {
  LoopbackOptions,
  ReceivedImage,
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

/** Image blocks in a recorded Messages request's user turns, decoded as the API does. */
export function anthropicImages(req: RecordedRequest): ReceivedImage[] {
  const out: ReceivedImage[] = [];
  for (const m of anthropicMessages(req)) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const block of m.content as {
      type?: string;
      source?: { type?: string; media_type?: string; data?: string };
    }[]) {
      if (block.type !== 'image') continue;
      if (
        block.source?.type !== 'base64' ||
        !block.source.media_type ||
        typeof block.source.data !== 'string'
      ) {
        throw new Error(`image block without a base64 source: ${JSON.stringify(block.source).slice(0, 60)}`);
      }
      out.push({ mediaType: block.source.media_type, bytes: Buffer.from(block.source.data, 'base64') });
    }
  }
  return out;
}

/**
 * The Messages API's tool rules: every `tool_use` of an assistant turn has its `tool_result` in the
 * user turn right after it, and a `tool_result` answers a `tool_use` of the turn before.
 */
export function checkToolResults(messages: readonly AnthropicMessage[]): string | undefined {
  const blocks = (
    m: AnthropicMessage | undefined,
  ): Array<{ type?: string; id?: string; tool_use_id?: string }> =>
    Array.isArray(m?.content)
      ? (m.content as Array<{ type?: string; id?: string; tool_use_id?: string }>)
      : [];
  for (const [i, m] of messages.entries()) {
    const uses =
      m.role === 'assistant'
        ? blocks(m)
            .filter((b) => b.type === 'tool_use')
            .map((b) => b.id)
        : [];
    const next = messages[i + 1];
    const answered =
      next?.role === 'user'
        ? blocks(next)
            .filter((b) => b.type === 'tool_result')
            .map((b) => b.tool_use_id)
        : [];
    const missing = uses.filter((id) => !answered.includes(id));
    if (missing.length && next)
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    if (m.role === 'user') {
      const prev = messages[i - 1];
      const known =
        prev?.role === 'assistant'
          ? blocks(prev)
              .filter((b) => b.type === 'tool_use')
              .map((b) => b.id)
          : [];
      const stray = blocks(m).find((b) => b.type === 'tool_result' && !known.includes(b.tool_use_id));
      if (stray)
        return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(stray.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return undefined;
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

type ReplyAction = Extract<Reply, { kind: 'reply' }>;

/** Everything the model was sent, as text: system, messages, tool results. */
export function anthropicPromptText(req: RecordedRequest): string {
  const body = req.body as { system?: unknown } | undefined;
  const blockText = (content: unknown): string =>
    Array.isArray(content)
      ? (content as unknown[])
          .map((b) => {
            const block = b as { type?: string; text?: unknown; content?: unknown };
            if (block?.type === 'tool_result') return blockText(block.content);
            return typeof block?.text === 'string' ? block.text : '';
          })
          .join('\n')
      : contentText(content);
  return [blockText(body?.system), ...anthropicMessages(req).map((m) => blockText(m.content))].join('\n');
}

function contentBlocks(r: ReplyAction): unknown[] {
  if (r.blocks) return r.blocks;
  const blocks: unknown[] = [];
  if (r.text !== undefined || !r.toolCalls?.length) blocks.push({ type: 'text', text: r.text ?? 'ok' });
  for (const call of r.toolCalls ?? []) {
    blocks.push({ type: 'tool_use', id: toolCallId('toolu_', call), name: call.name, input: call.input });
  }
  return blocks;
}

/**
 * The Messages usage object: `input_tokens` counts only the input that was neither read from nor
 * written to the prompt cache; the cache fields appear when the reply names them.
 */
function usageOf(r: ReplyAction, req: RecordedRequest, blocks: unknown[]): Record<string, number> {
  const total = r.usage?.promptTokens ?? estimateTokens(anthropicPromptText(req));
  const read = r.usage?.cachedTokens;
  const written = r.usage?.cacheWriteTokens;
  const cacheFields = read !== undefined || written !== undefined;
  return {
    input_tokens: Math.max(0, total - (read ?? 0) - (written ?? 0)),
    output_tokens: r.usage?.completionTokens ?? estimateTokens(JSON.stringify(blocks)),
    ...(cacheFields ? { cache_read_input_tokens: read ?? 0, cache_creation_input_tokens: written ?? 0 } : {}),
  };
}

const anthropicWire: WireFormat = {
  basePath: '',
  isEndpoint: (path) => path === '/v1/messages',
  okBody(r: ReplyAction, req) {
    const body = req.body as { model?: string } | undefined;
    const blocks = contentBlocks(r);
    const usage = usageOf(r, req, blocks);
    return {
      id: `msg_loopback_${++counter}`,
      type: 'message',
      role: 'assistant',
      model: r.model ?? body?.model ?? 'loopback-model',
      content: blocks,
      stop_reason: r.finishReason ?? (r.toolCalls?.length ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      ...(r.usage === null ? {} : { usage }),
    };
  },
  // The Messages streaming format: message_start, a start/delta/stop triple per content block,
  // message_delta with the stop reason and output tokens, message_stop.
  streamEvents(r: ReplyAction, req) {
    const body = req.body as { model?: string } | undefined;
    const blocks = contentBlocks(r) as Array<{
      type: string;
      text?: string;
      id?: string;
      name?: string;
      input?: unknown;
    }>;
    const usage = usageOf(r, req, blocks);
    const ev = (type: string, data: Record<string, unknown>): SseEvent => ({
      event: type,
      data: { type, ...data },
    });
    const events: SseEvent[] = [
      ev('message_start', {
        message: {
          id: `msg_loopback_${++counter}`,
          type: 'message',
          role: 'assistant',
          model: r.model ?? body?.model ?? 'loopback-model',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          // As the API does: input and cache counts at the start, output tokens in message_delta.
          usage: r.usage === null ? { input_tokens: 0, output_tokens: 1 } : { ...usage, output_tokens: 1 },
        },
      }),
    ];
    blocks.forEach((block, index) => {
      if (block.type === 'tool_use') {
        events.push(
          ev('content_block_start', {
            index,
            content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
          }),
          ev('content_block_delta', {
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) },
          }),
        );
      } else {
        events.push(
          ev('content_block_start', { index, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index, delta: { type: 'text_delta', text: block.text ?? '' } }),
        );
      }
      events.push(ev('content_block_stop', { index }));
    });
    events.push(
      ev('message_delta', {
        delta: {
          stop_reason: r.finishReason ?? (r.toolCalls?.length ? 'tool_use' : 'end_turn'),
          stop_sequence: null,
        },
        usage: { output_tokens: r.usage === null ? 0 : usage.output_tokens },
      }),
      ev('message_stop', {}),
    );
    return events;
  },
  checkRequest: (req) => checkToolResults(anthropicMessages(req)),
  errorBody: (code, message) => ({
    type: 'error',
    error: { type: ERROR_TYPES[code] ?? 'api_error', message },
  }),
};

/**
 * An Anthropic Messages server on 127.0.0.1 (`POST /v1/messages`), streaming when the request asks
 * (`"stream": true`, as Claude Code always does). Pass `url` as the SDK's baseURL or ANTHROPIC_BASE_URL.
 */
export function startAnthropicServer(script: Script, opts?: LoopbackOptions): Promise<LoopbackServer> {
  return startLoopback(anthropicWire, script, opts);
}
