/**
 * Replies saved the moment they arrive. A stage whose result file is written only after all its
 * calls (and re-asks) have answered loses what it was paid for when the run stops in between; with
 * its optimizer client wrapped here, a resumed run gets those replies back from the journal, free.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../llm/cache';
import type { ChatRequest, ModelClient } from '../llm/types';
import { appendJsonl, readJsonl } from '../store/jsonl';
import { JOURNAL_ROWS } from '../store/runRows';

/** What a reply depends on: the same request, the same saved reply. */
function journalKey(client: ModelClient, req: ChatRequest): string {
  const material = {
    model: client.model,
    messages: req.messages,
    maxTokens: req.maxTokens,
    temperature: req.temperature,
    reasoningEffort: req.reasoningEffort,
    thinkingBudget: req.thinkingBudget,
  };
  return createHash('sha256').update(canonicalJson(material)).digest('hex');
}

/** `inner`, with every reply appended to the JSONL file `path` before the caller sees it. */
export function journaledClient(inner: ModelClient, path: string): ModelClient {
  return {
    role: inner.role,
    backend: inner.backend,
    model: inner.model,
    chat: async (req, signal) => {
      const key = journalKey(inner, req);
      const saved = readJsonl(path, JOURNAL_ROWS, { repair: true }).find((r) => r.key === key);
      if (saved) {
        return {
          text: saved.text,
          usage: saved.usage,
          ...(saved.truncated ? { truncated: true } : {}),
          backend: inner.backend,
          model: saved.model ?? inner.model,
          seconds: 0,
          attempts: 0,
          // Paid for by the process that saved it: counted in the ledger then, not again.
          cached: true,
        };
      }
      const reply = await inner.chat(req, signal);
      appendJsonl(path, {
        key,
        text: reply.text,
        usage: reply.usage,
        model: reply.model,
        ...(reply.truncated ? { truncated: true } : {}),
      });
      return reply;
    },
  };
}
