import type { TaskItem } from '../data/tasks';
import { SkillOptError } from '../errors';
import type { ChatRequest, ChatResult, ModelClient } from '../llm/types';

/**
 * Defence in depth for the sealed test split: the optimizer client refuses any request that
 * mentions a test item (its task text, or its id as a trajectory id). The loop never builds such a
 * request; this makes a future bug fail loudly instead of silently contaminating the test score.
 */
export function guardOptimizer(
  client: ModelClient,
  testItems: readonly TaskItem[],
  otherItems: readonly TaskItem[] = [],
): ModelClient {
  // Short texts ("Yes", "42") would match innocently, and a text that also occurs in train or val
  // may legitimately appear; only distinctive test-only inputs are checked.
  const allowed = new Set(otherItems.map((t) => t.input.trim()));
  const texts = testItems.map((t) => t.input.trim()).filter((t) => t.length >= 24 && !allowed.has(t));
  const ids = testItems.map((t) => `(id=${t.id})`);
  return {
    role: client.role,
    backend: client.backend,
    model: client.model,
    chat(req: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
      for (const m of req.messages) {
        const hit = texts.find((t) => m.content.includes(t)) ?? ids.find((id) => m.content.includes(id));
        if (hit) {
          return Promise.reject(
            new SkillOptError(
              'internal',
              `refused an optimizer request (${req.stage}) that contains a test-split item`,
              {
                fix: 'this is a bug in SkillOpt; please report it with the run folder',
              },
            ),
          );
        }
      }
      return client.chat(req, signal);
    },
  };
}
