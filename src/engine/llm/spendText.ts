/**
 * The run's spend in the words summary.json, report.md and the CLI use: totals, and what the
 * providers' prompt caches took over (share of input tokens) and saved against uncached list prices.
 */
import type { AccountingSummary } from './accounting';

export interface PromptCacheSummary {
  /** Every input token of the run's paid calls. */
  input_tokens: number;
  /** Input tokens read from the providers' prompt caches. */
  cached_tokens: number;
  /** Input tokens written to them (Anthropic bills these above the input price). */
  cache_write_tokens: number;
  /** cached_tokens / input_tokens; null before any input. */
  cache_share: number | null;
  /** Dollars saved against the same calls at uncached list prices; null when a cache price is unknown. */
  saved_dollars: number | null;
}

type CacheTotals = Pick<
  AccountingSummary,
  'promptTokens' | 'cachedTokens' | 'cacheWriteTokens' | 'cacheSavedDollars'
>;

export function promptCacheSummary(t: CacheTotals): PromptCacheSummary {
  return {
    input_tokens: t.promptTokens,
    cached_tokens: t.cachedTokens,
    cache_write_tokens: t.cacheWriteTokens,
    cache_share: t.promptTokens > 0 ? t.cachedTokens / t.promptTokens : null,
    saved_dollars: t.cacheSavedDollars,
  };
}

const count = (n: number): string => n.toLocaleString('en-US');
const money = (n: number): string => `${n < 0 ? '-' : ''}$${Math.abs(n).toFixed(4)}`;

/** "62.5% of 1,000 input tokens read from the prompt cache (120 written), saved $0.0012" */
export function promptCacheText(s: PromptCacheSummary): string {
  const share = s.cache_share === null ? '0%' : `${(s.cache_share * 100).toFixed(1)}%`;
  const written = s.cache_write_tokens ? ` (${count(s.cache_write_tokens)} written)` : '';
  const saved =
    s.saved_dollars === null
      ? 'saving unknown (no cache price for a model; add cached_input_per_mtok under prices:)'
      : s.saved_dollars < 0
        ? `cost ${money(-s.saved_dollars)} more than uncached list prices (cache writes not yet read back)`
        : `saved ${money(s.saved_dollars)} against uncached list prices`;
  return `${share} of ${count(s.input_tokens)} input tokens read from the prompt cache${written}, ${saved}`;
}

/**
 * The CLI's end-of-run line: calls, tokens, dollars, and the prompt cache's share and saving. A
 * simulated run costs nothing and has no provider cache, and says so instead; a run where only
 * some roles are simulated shows what the real ones cost.
 */
export function spendLine(t: AccountingSummary, simulated = false): string {
  // Failed calls and response-cache hits are not in `calls`; what failed calls were billed is in the tokens.
  const more = [
    ...(t.failures ? [`${count(t.failures)} more failed`] : []),
    ...(t.cacheHits ? [`${count(t.cacheHits)} more answered from the response cache, free`] : []),
  ];
  const besides = more.length ? ` (${more.join('; ')})` : '';
  const calls = `Spend: ${count(t.calls)} ${t.calls === 1 ? 'call' : 'calls'}${besides}, ${count(t.promptTokens)} prompt + ${count(t.completionTokens)} completion tokens`;
  const realSpend = t.knownDollars > 0 || t.unpricedModels.length > 0;
  if (simulated && !realSpend) return `${calls}, simulated models (no price, no provider prompt cache).`;
  const free = simulated ? ' (the simulated roles cost nothing)' : '';
  const dollars =
    t.dollars !== null
      ? `${money(t.dollars)} at list prices`
      : `unknown price for ${t.unpricedModels.join(', ')}${t.knownDollars ? ` (priced part ${money(t.knownDollars)})` : ''}`;
  return `${calls}, ${dollars}${free}${cutOffText(t.cutOff)}. Prompt cache: ${promptCacheText(promptCacheSummary(t))}.`;
}

/** ", a lower bound: 2 requests were cut off …" when a stop or the request timeout cut some off. */
export function cutOffText(cutOff: number | undefined): string {
  if (!cutOff) return '';
  const n = cutOff === 1 ? '1 request was' : `${count(cutOff)} requests were`;
  return `, a lower bound: ${n} cut off before their reply (a stop, limits.request_timeout_s or an agent target's env.exec_timeout), their tokens unknown, and the provider may bill them`;
}
