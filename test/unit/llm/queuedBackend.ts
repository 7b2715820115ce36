import type { Accounting } from '../../../src/engine/llm/accounting';
import { createModelClient } from '../../../src/engine/llm/client';
import type { BackendReply, ChatBackend, ModelClient } from '../../../src/engine/llm/types';

/**
 * A target client over an agent-like backend that ends each call with the next queued outcome (a
 * reply, or an error it throws), two attempts a call, no waits between them.
 */
export function queuedClient(
  accounting: Accounting,
  over: Partial<ChatBackend> = {},
): { client: ModelClient; outcomes: Array<Error | BackendReply> } {
  const outcomes: Array<Error | BackendReply> = [];
  const backend: ChatBackend = {
    provider: 'command',
    model: 'agent',
    cacheParams: {},
    call: () => {
      const next = outcomes.shift()!;
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    ...over,
  };
  const client = createModelClient({
    role: 'target',
    backend,
    accounting,
    retry: { maxAttempts: 2 },
    sleep: () => Promise.resolve(),
  });
  return { client, outcomes };
}
