/** Token totals per stage from an accounting snapshot, in the shapes history.json and summary.json keep. */
import type { AccountingSnapshot } from './accounting';

export interface StageTokens {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/** Per-stage `{calls, prompt_tokens, completion_tokens}` as history.json's `tokens` field holds it. */
export function stageTokens(snapshot: AccountingSnapshot): Record<string, StageTokens> {
  const out: Record<string, StageTokens> = {};
  for (const e of snapshot.entries) {
    if (e.calls === 0 && e.promptTokens === 0 && e.completionTokens === 0) continue;
    const s = (out[e.stage] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 });
    s.calls += e.calls;
    s.prompt_tokens += e.promptTokens;
    s.completion_tokens += e.completionTokens;
  }
  return out;
}

/**
 * The reference's `get_token_summary()` shape for summary.json: per stage with `total_tokens`, plus
 * a `_total` row.
 */
export function tokenSummary(
  snapshot: AccountingSnapshot,
): Record<string, StageTokens & { total_tokens: number }> {
  const out: Record<string, StageTokens & { total_tokens: number }> = {};
  const total = { calls: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const [stage, s] of Object.entries(stageTokens(snapshot))) {
    out[stage] = { ...s, total_tokens: s.prompt_tokens + s.completion_tokens };
    total.calls += s.calls;
    total.prompt_tokens += s.prompt_tokens;
    total.completion_tokens += s.completion_tokens;
  }
  total.total_tokens = total.prompt_tokens + total.completion_tokens;
  out._total = total;
  return out;
}
