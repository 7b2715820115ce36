import type { AccountingTotals } from '../../protocol/events';
import type { Logger } from '../log';
import type { ModelPrice } from './prices';
import { PriceTable } from './prices';
import type { ModelRole } from './types';

/** One accounting row is keyed by these; provider decides which built-in prices apply. */
export interface UsageKey {
  stage: string;
  role: ModelRole;
  provider: string;
  model: string;
}

export interface UsageEntry extends UsageKey {
  /** Successful provider calls (cache hits not included). */
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the provider read from its prompt cache (part of promptTokens). */
  cachedTokens: number;
  /** Prompt tokens the provider wrote to its prompt cache (part of promptTokens). */
  cacheWriteTokens: number;
  /** Time spent in attempts, failed ones included; queueing and retry waits excluded. */
  seconds: number;
  cacheHits: number;
  /** Extra attempts beyond the first, over all calls. */
  retries: number;
  /** Calls that failed after all attempts. */
  failures: number;
  /**
   * Requests sent and cut off before their reply (a stop, the request timeout) without saying what
   * they spent: their tokens are unknown, and the provider may bill them.
   */
  cutOff: number;
  /** Dollars agent CLIs reported for these calls (rows of a cliPricedProvider; 0 elsewhere). */
  reportedDollars: number;
  /** null when the model's price is unknown; never a made-up 0. */
  dollars: number | null;
  /** What the provider's prompt cache saved against the plain input price; null when unknown. */
  cacheSavedDollars: number | null;
}

export interface AccountingSummary extends AccountingTotals {
  seconds: number;
  retries: number;
  failures: number;
  /** Requests cut off before their reply: when above 0, the tokens and dollars are a lower bound. */
  cutOff: number;
  /** Dollars of the priced calls: the whole cost when `dollars` is set, a lower bound otherwise. */
  knownDollars: number;
  /** Models that were called but have no known price. */
  unpricedModels: string[];
  /** Prompt tokens read from and written to the providers' prompt caches (part of promptTokens). */
  cachedTokens: number;
  cacheWriteTokens: number;
  /** Dollars the prompt caches saved against the plain input price; null when a cache price is unknown. */
  cacheSavedDollars: number | null;
}

export interface FallbackRecord {
  stage: string;
  reason: string;
}

export interface AccountingSnapshot {
  entries: UsageEntry[];
  /** Structured-reply fallbacks per stage. */
  fallbacks: Record<string, number>;
  /** Structured replies asked again (one re-ask each) per stage; absent = none. */
  reasks?: Record<string, number>;
  totals: AccountingSummary;
}

export interface CallUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  seconds: number;
  attempts: number;
  /** What the backend priced the call at itself (an agent CLI's list-priced cost). */
  reportedDollars?: number;
}

export type Counters = Omit<UsageEntry, keyof UsageKey | 'dollars' | 'cacheSavedDollars'>;

export const ZERO_COUNTERS: Counters = {
  calls: 0,
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  seconds: 0,
  cacheHits: 0,
  retries: 0,
  failures: 0,
  cutOff: 0,
  reportedDollars: 0,
};
const COUNTER_NAMES = Object.keys(ZERO_COUNTERS) as Array<keyof Counters>;

/** Only the most recent fallback reasons are kept; the counts are exact. */
const FALLBACK_LOG_LIMIT = 200;

/** One fresh record as it is made (a paid call, a cache hit, a failure, a fallback), for the run ledger. */
export type AccountingRecord =
  | { kind: 'usage'; key: UsageKey; add: Partial<Counters>; dollars: number | null }
  | { kind: 'fallback'; stage: string }
  | { kind: 'reask'; stage: string };

export interface AccountingOptions {
  /** A price table, or the config's `prices:` map to extend the built-in one. */
  prices?: PriceTable | Record<string, ModelPrice>;
  logger?: Logger;
}

/**
 * Token, time and dollar accounting per (stage, role, provider, model), shared by every client of
 * a run. Unlike the reference's per-stage token tracker it also counts cache hits, retries,
 * failures and structured-reply fallbacks, and prices calls when the price is known.
 */
export class Accounting {
  private readonly rows = new Map<string, UsageKey & Counters>();
  private readonly fallbackCounts = new Map<string, number>();
  private readonly fallbackLog: FallbackRecord[] = [];
  private readonly reaskCounts = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
  private readonly recordListeners = new Set<(record: AccountingRecord) => void>();
  private readonly open = new Set<Promise<unknown>>();
  readonly prices: PriceTable;
  private readonly logger?: Logger;

  constructor(opts: AccountingOptions = {}) {
    this.prices = opts.prices instanceof PriceTable ? opts.prices : new PriceTable(opts.prices ?? {});
    this.logger = opts.logger;
  }

  recordCall(key: UsageKey, usage: CallUsage): void {
    this.bump(key, {
      calls: 1,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cachedTokens: usage.cachedTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
      seconds: usage.seconds,
      retries: Math.max(0, usage.attempts - 1),
      reportedDollars: usage.reportedDollars ?? 0,
    });
  }

  recordCacheHit(key: UsageKey): void {
    this.bump(key, { cacheHits: 1 });
  }

  /**
   * A call that failed after all attempts, with the tokens its attempts had spent (an agent run cut
   * short, a billed reply that could not be used).
   */
  recordFailure(key: UsageKey, usage: Pick<CallUsage, 'seconds' | 'attempts'> & Partial<CallUsage>): void {
    this.bump(key, {
      failures: 1,
      seconds: usage.seconds,
      retries: Math.max(0, usage.attempts - 1),
      promptTokens: usage.promptTokens ?? 0,
      completionTokens: usage.completionTokens ?? 0,
      cachedTokens: usage.cachedTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    });
  }

  /**
   * Tokens paid for outside a completed call: a call stopped by the person (Ctrl-C, Stop), not a
   * failure; or the attempts before a reply its CLI priced itself, which that price does not cover.
   */
  recordStopped(key: UsageKey, usage: Omit<CallUsage, 'attempts'>): void {
    this.bump(key, {
      seconds: usage.seconds,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cachedTokens: usage.cachedTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    });
  }

  /**
   * A request sent and cut off before its reply, which said nothing of what it spent; `seen`: what
   * an agent run killed by the timeout had reported before (its cut-off request not included).
   */
  recordCutOff(
    key: UsageKey,
    seen?: Pick<CallUsage, 'promptTokens' | 'completionTokens'> & Partial<CallUsage>,
  ): void {
    this.bump(key, {
      cutOff: 1,
      promptTokens: seen?.promptTokens ?? 0,
      completionTokens: seen?.completionTokens ?? 0,
      cachedTokens: seen?.cachedTokens ?? 0,
      cacheWriteTokens: seen?.cacheWriteTokens ?? 0,
    });
  }

  /** Registers a call in progress; `settled()` waits for it. */
  opened<T>(call: Promise<T>): Promise<T> {
    this.open.add(call);
    const done = (): void => {
      this.open.delete(call);
    };
    call.then(done, done);
    return call;
  }

  /**
   * Waits (at most `capMs`) for the calls still in progress, so that a stopped run's last calls,
   * which report what they spent only as they end (an agent CLI's transcript), reach the ledger.
   */
  async settled(capMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, capMs);
      timer.unref();
    });
    const all = (async (): Promise<void> => {
      while (this.open.size) await Promise.allSettled([...this.open]);
    })();
    await Promise.race([all, cap]);
    clearTimeout(timer);
  }

  /** A stage fell back to its reference default because a reply could not be used. */
  recordFallback(stage: string, reason: string): void {
    this.fallbackCounts.set(stage, (this.fallbackCounts.get(stage) ?? 0) + 1);
    for (const fn of this.recordListeners) fn({ kind: 'fallback', stage });
    this.fallbackLog.push({ stage, reason });
    if (this.fallbackLog.length > FALLBACK_LOG_LIMIT) this.fallbackLog.shift();
    this.notify();
  }

  /** A structured reply could not be used and was asked for once more (whatever the second gave). */
  recordReask(stage: string): void {
    this.reaskCounts.set(stage, (this.reaskCounts.get(stage) ?? 0) + 1);
    for (const fn of this.recordListeners) fn({ kind: 'reask', stage });
    this.notify();
  }

  /** The most recent fallbacks, oldest first. */
  recentFallbacks(): FallbackRecord[] {
    return this.fallbackLog.map((f) => ({ ...f }));
  }

  snapshot(): AccountingSnapshot {
    const entries = [...this.rows.values()].map((r) => this.price({ ...r }));
    const fallbacks = Object.fromEntries(this.fallbackCounts);
    const reasks = Object.fromEntries(this.reaskCounts);
    return { entries, fallbacks, reasks, totals: summarize(entries, fallbacks) };
  }

  totals(): AccountingSummary {
    return this.snapshot().totals;
  }

  /** What happened since an earlier snapshot (per-step records). Rows with no change are left out. */
  delta(since: AccountingSnapshot): AccountingSnapshot {
    const before = new Map(since.entries.map((e) => [rowKey(e), e]));
    const entries: UsageEntry[] = [];
    for (const row of this.rows.values()) {
      const prev = before.get(rowKey(row));
      const diff: UsageKey & Counters = {
        stage: row.stage,
        role: row.role,
        provider: row.provider,
        model: row.model,
        ...ZERO_COUNTERS,
      };
      let changed = false;
      for (const name of COUNTER_NAMES) {
        diff[name] = row[name] - (prev?.[name] ?? 0);
        if (diff[name] !== 0) changed = true;
      }
      if (changed) entries.push(this.price(diff));
    }
    const fallbacks: Record<string, number> = {};
    for (const [stage, n] of this.fallbackCounts) {
      const d = n - (since.fallbacks[stage] ?? 0);
      if (d !== 0) fallbacks[stage] = d;
    }
    return { entries, fallbacks, totals: summarize(entries, fallbacks) };
  }

  /** Add usage recorded earlier (a resumed run continues its totals and budgets). */
  merge(snapshot: Pick<AccountingSnapshot, 'entries' | 'fallbacks' | 'reasks'>): void {
    for (const e of snapshot.entries) {
      const add: Partial<Counters> = {};
      for (const name of COUNTER_NAMES) add[name] = e[name];
      this.bump(e, add, false);
    }
    for (const [stage, n] of Object.entries(snapshot.fallbacks)) {
      this.fallbackCounts.set(stage, (this.fallbackCounts.get(stage) ?? 0) + n);
    }
    for (const [stage, n] of Object.entries(snapshot.reasks ?? {})) {
      this.reaskCounts.set(stage, (this.reaskCounts.get(stage) ?? 0) + n);
    }
    this.notify();
  }

  /** Listen for each fresh record (not merged ones) as it is made; the run ledger appends them. */
  onRecord(listener: (record: AccountingRecord) => void): () => void {
    this.recordListeners.add(listener);
    return () => this.recordListeners.delete(listener);
  }

  /**
   * Called after every recorded call, hit, failure or fallback; `totals()` has the figures. Not
   * handed them: pricing every row runs on each reply's path, and the run's listeners only throttle
   * or check caps. Returns an unsubscribe.
   */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private bump(key: UsageKey, add: Partial<Counters>, notify = true): void {
    const k = rowKey(key);
    let row = this.rows.get(k);
    if (!row) {
      row = { stage: key.stage, role: key.role, provider: key.provider, model: key.model, ...ZERO_COUNTERS };
      this.rows.set(k, row);
    }
    for (const name of COUNTER_NAMES) row[name] += add[name] ?? 0;
    if (notify && this.recordListeners.size) {
      const dollars = this.prices.cost(
        key.model,
        key.provider,
        add.promptTokens ?? 0,
        add.completionTokens ?? 0,
        add,
      );
      for (const fn of this.recordListeners) fn({ kind: 'usage', key, add, dollars });
    }
    if (notify) this.notify();
  }

  private price(row: UsageKey & Counters): UsageEntry {
    return {
      ...row,
      dollars: this.prices.cost(row.model, row.provider, row.promptTokens, row.completionTokens, row),
      cacheSavedDollars:
        row.cachedTokens || row.cacheWriteTokens
          ? this.prices.cacheSavings(row.model, row.provider, row.promptTokens, row)
          : 0,
    };
  }

  private notify(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        // A broken listener must not fail the model call that triggered it.
        this.logger?.log('error', 'accounting', `accounting listener failed: ${String(err)}`);
      }
    }
  }
}

function rowKey(k: UsageKey): string {
  return JSON.stringify([k.stage, k.role, k.provider, k.model]);
}

function summarize(entries: UsageEntry[], fallbacks: Record<string, number>): AccountingSummary {
  const t: AccountingSummary = {
    calls: 0,
    promptTokens: 0,
    completionTokens: 0,
    cacheHits: 0,
    dollars: 0,
    fallbacks: Object.values(fallbacks).reduce((a, b) => a + b, 0),
    seconds: 0,
    retries: 0,
    failures: 0,
    cutOff: 0,
    knownDollars: 0,
    unpricedModels: [],
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cacheSavedDollars: 0,
  };
  const unpriced = new Set<string>();
  let savingsUnknown = false;
  let saved = 0;
  for (const e of entries) {
    t.calls += e.calls;
    t.promptTokens += e.promptTokens;
    t.completionTokens += e.completionTokens;
    t.cacheHits += e.cacheHits;
    t.cachedTokens += e.cachedTokens;
    t.cacheWriteTokens += e.cacheWriteTokens;
    if (e.cacheSavedDollars === null) savingsUnknown = true;
    else saved += e.cacheSavedDollars;
    t.seconds += e.seconds;
    t.retries += e.retries;
    t.failures += e.failures;
    t.cutOff += e.cutOff;
    if (e.dollars !== null) t.knownDollars += e.dollars;
    else if (e.calls > 0 || e.promptTokens + e.completionTokens > 0) unpriced.add(e.model);
  }
  t.unpricedModels = [...unpriced].sort();
  t.dollars = unpriced.size ? null : t.knownDollars;
  t.cacheSavedDollars = savingsUnknown ? null : saved;
  return t;
}
