/**
 * Issue 14: dollars per run at list prices for the bench workload, with provider prompt caching
 * off and on. The bench server plays OpenAI's prompt cache deterministically (requests under one
 * `prompt_cache_key` share their longest common prefix, reported as `cached_tokens`), and the
 * engine reads those counts like a real reply's. Both runs are priced with one list price from the
 * built-in table, so the difference is what caching saves on this workload.
 */
import { join } from 'node:path';
import { PRICE_TABLE_DATE, PriceTable } from '../src/engine/llm/prices';
import { recordTraining, type ChildServer } from './harness';
import { fmt, table } from './stats';

/** The list price the workload is priced at (OpenAI, with a published cached-input rate). */
export const PRICE_MODEL = 'gpt-4.1-mini';

export interface CachingSpend {
  caching: 'off' | 'on';
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** cachedTokens / promptTokens. */
  cacheShare: number;
  /** At PRICE_MODEL's list prices, cached input at its cached rate. */
  dollars: number;
}

export interface SpendResult {
  priceModel: string;
  priceDate: string;
  runs: CachingSpend[];
  /** 1 - dollars(on) / dollars(off). */
  savedShare: number;
}

export async function runSpend(
  server: ChildServer,
  work: string,
  log: (line: string) => void,
): Promise<SpendResult> {
  const prices = new PriceTable();
  const runs: CachingSpend[] = [];
  for (const caching of ['off', 'on'] as const) {
    await server.reset();
    const dir = join(work, `spend-caching-${caching}`);
    const run = await recordTraining({
      server,
      outDir: join(dir, 'run'),
      cacheDir: join(dir, 'cache'),
      // The bench server is "OpenAI-compatible", which gets the key only when asked for.
      overrides: caching === 'on' ? ['model.prompt_cache_key=on'] : ['model.prompt_caching=false'],
    });
    if (run.error) throw new Error(`spend bench (caching ${caching}): ${run.error}`);
    const t = run.prepared.models.accounting.totals();
    const dollars = prices.cost(PRICE_MODEL, 'openai', t.promptTokens, t.completionTokens, {
      cachedTokens: t.cachedTokens,
    });
    if (dollars === null) throw new Error(`no built-in price for ${PRICE_MODEL}`);
    runs.push({
      caching,
      calls: t.calls,
      promptTokens: t.promptTokens,
      cachedTokens: t.cachedTokens,
      completionTokens: t.completionTokens,
      cacheShare: t.promptTokens ? t.cachedTokens / t.promptTokens : 0,
      dollars,
    });
    log(`  caching ${caching}: ${t.calls} calls, $${dollars.toFixed(4)}`);
  }
  const [off, on] = runs;
  return {
    priceModel: PRICE_MODEL,
    priceDate: PRICE_TABLE_DATE,
    runs,
    savedShare: off.dollars > 0 ? 1 - on.dollars / off.dollars : 0,
  };
}

export function spendSection(s: SpendResult): string[] {
  return [
    `Dollars per bench run at ${s.priceModel} list prices (built-in table, ${s.priceDate}), prompt caching off and on:`,
    table(
      ['prompt caching', 'calls', 'prompt tokens', 'cached', 'cache share', 'completion tokens', 'dollars'],
      s.runs.map((r) => [
        r.caching,
        String(r.calls),
        String(r.promptTokens),
        String(r.cachedTokens),
        `${fmt(r.cacheShare * 100, 1)}%`,
        String(r.completionTokens),
        `$${r.dollars.toFixed(4)}`,
      ]),
    ),
    `Caching saves ${fmt(s.savedShare * 100, 1)}% of the run's list price on this workload.`,
  ];
}
