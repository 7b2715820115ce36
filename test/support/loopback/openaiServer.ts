import type { LoopbackOptions, LoopbackServer, RecordedRequest, Reply, Script, WireFormat } from './core';
import { contentText, estimateTokens, startLoopback } from './core';

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

let counter = 0;

const openAiWire: WireFormat = {
  basePath: '/v1',
  // `/v1/chat/completions` for OpenAI and compatible servers; Azure puts `/openai/deployments/<name>` in front.
  isEndpoint: (path) => path.endsWith('/chat/completions'),
  okBody(r: Extract<Reply, { kind: 'reply' }>, req) {
    const text = r.text ?? 'ok';
    const body = req.body as { model?: string } | undefined;
    const prompt = openAiMessages(req)
      .map((m) => contentText(m.content))
      .join('\n');
    const out: Record<string, unknown> = {
      id: `chatcmpl-loopback-${++counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: r.model ?? body?.model ?? 'loopback-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text, refusal: null },
          finish_reason: r.finishReason ?? 'stop',
          logprobs: null,
        },
      ],
    };
    if (r.usage !== null) {
      const promptTokens = r.usage?.promptTokens ?? estimateTokens(prompt);
      const completionTokens = r.usage?.completionTokens ?? estimateTokens(text);
      out.usage = {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      };
    }
    return out;
  },
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
