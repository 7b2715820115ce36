/**
 * The run's ledger (`ledger.jsonl`): every paid call, cache hit, failure, re-ask and fallback appended as
 * it happens, with the step and phase it belongs to and its price. A resumed run reads it back
 * into its accounting, so totals, caps, history.json, summary.json and report.md count every
 * process of the run exactly once, whatever stopped the earlier ones.
 */
import type { StageTokens } from './tokenSummary';
import { randomUUID } from 'node:crypto';
import { appendJsonl, readJsonl } from '../store/jsonl';
import { LEDGER_ROWS } from '../store/runRows';
import { ZERO_COUNTERS } from './accounting';
import type { Accounting, AccountingRecord, AccountingSnapshot, Counters, UsageEntry } from './accounting';
import type { ModelRole } from './types';

/** What the loop was doing when a call was paid. */
/** `eval`: an eval-only run (`skillopt eval`, the extension's Evaluate), which keeps a ledger of its own. */
export type LedgerPhase = 'baseline' | 'step' | 'epoch_end' | 'final' | 'eval';

export interface LedgerRow {
  /** One id per process that worked on the run. */
  session: string;
  /** Epoch milliseconds. */
  t: number;
  step: number;
  phase: LedgerPhase;
  /** `session`: the process was running at `t` (its start, a heartbeat, its end), for the time cap. */
  kind: 'usage' | 'fallback' | 'reask' | 'session';
  /** `session` for session rows. */
  stage: string;
  /** Session rows: which moment of the process. */
  event?: 'start' | 'alive' | 'end';
  role?: ModelRole;
  provider?: string;
  model?: string;
  calls?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
  /** Prompt tokens read from / written to the provider's prompt cache; absent in older ledgers = 0. */
  cached_tokens?: number;
  cache_write_tokens?: number;
  seconds?: number;
  cache_hits?: number;
  retries?: number;
  failures?: number;
  /** Requests cut off before their reply (tokens unknown); absent = 0. */
  cut_off?: number;
  /** What the agent CLI priced these calls at itself (provider `…:cli_priced`). */
  reported_dollars?: number;
  /** At the price known when it was paid; null when the model's price is unknown. */
  dollars?: number | null;
}

const FIELDS: Array<[keyof Counters, keyof LedgerRow]> = [
  ['calls', 'calls'],
  ['promptTokens', 'prompt_tokens'],
  ['completionTokens', 'completion_tokens'],
  ['cachedTokens', 'cached_tokens'],
  ['cacheWriteTokens', 'cache_write_tokens'],
  ['seconds', 'seconds'],
  ['cacheHits', 'cache_hits'],
  ['retries', 'retries'],
  ['failures', 'failures'],
  ['cutOff', 'cut_off'],
  ['reportedDollars', 'reported_dollars'],
];

/** How often a running process notes in the ledger that it is still running (the time lost to a crash). */
const HEARTBEAT_MS = 30_000;

export interface RunLedgerOptions {
  /** Epoch milliseconds; injectable for tests. */
  now?: () => number;
  heartbeatMs?: number;
}

export class RunLedger {
  private readonly session = randomUUID();
  private readonly now: () => number;
  private readonly heartbeatMs: number;
  private readonly rows: LedgerRow[];
  private readonly priorCount: number;
  private at: { step: number; phase: LedgerPhase } = { step: 0, phase: 'baseline' };
  /**
   * Work that overlaps a later step keeps its own attribution by its stage label: the baseline's
   * `selection` calls under step 1's rollouts, a speculative `rollout` under a gate. (Not
   * AsyncLocalStorage: it would hook every promise of the run.)
   */
  private readonly claims = new Map<string, { step: number; phase: LedgerPhase }>();

  constructor(
    private readonly path: string,
    opts: RunLedgerOptions = {},
  ) {
    // A row that cannot be read is refused here, before the run pays for anything.
    this.rows = readJsonl(path, LEDGER_ROWS);
    this.priorCount = this.rows.length;
    this.now = opts.now ?? Date.now;
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  }

  /** Attribute the calls that follow to this step and phase. */
  track(step: number, phase: LedgerPhase): void {
    this.at = { step, phase };
  }

  /**
   * Until `work` settles, calls of stage label `stage` are attributed to this step and phase,
   * whatever track() says meanwhile. The caller makes sure nothing else makes such calls then.
   */
  async within<T>(stage: string, step: number, phase: LedgerPhase, work: () => Promise<T>): Promise<T> {
    this.claims.set(stage, { step, phase });
    try {
      return await work();
    } finally {
      this.claims.delete(stage);
    }
  }

  /**
   * Adds what earlier processes of this run paid to `accounting`, then appends every fresh record
   * to the ledger. Returns the detach function.
   */
  attach(accounting: Accounting): () => void {
    accounting.merge(this.priorSnapshot());
    // The process's start, heartbeats and end: its wall time counts whole, not only from its first
    // paid call to its last (an agent target's first reply can come minutes after the start).
    this.mark('start');
    const beat = setInterval(() => this.mark('alive'), this.heartbeatMs);
    beat.unref();
    const off = accounting.onRecord((r) => this.append(r));
    return () => {
      clearInterval(beat);
      off();
      this.mark('end');
    };
  }

  private mark(event: NonNullable<LedgerRow['event']>): void {
    const row: LedgerRow = {
      session: this.session,
      t: this.now(),
      ...this.at,
      kind: 'session',
      stage: 'session',
      event,
    };
    this.rows.push(row);
    appendJsonl(this.path, row);
  }

  /**
   * Wall time earlier processes of the run spent: from the first to the last row of each, which
   * are its start and end (or, after a crash, its last heartbeat or paid call).
   */
  priorSeconds(): number {
    const spans = new Map<string, [number, number]>();
    for (const r of this.rows.slice(0, this.priorCount)) {
      const s = spans.get(r.session);
      spans.set(r.session, s ? [Math.min(s[0], r.t), Math.max(s[1], r.t)] : [r.t, r.t]);
    }
    let total = 0;
    for (const [a, b] of spans.values()) total += (b - a) / 1000;
    return total;
  }

  /** history.json's `tokens` of a step: its paid calls per stage, over every process of the run. */
  stepTokens(step: number): Record<string, StageTokens> {
    // Stages in the order the run first used them, as the accounting lists them.
    const out: Record<string, StageTokens> = {};
    const paid = (r: LedgerRow): boolean =>
      r.kind === 'usage' && !!(r.calls || r.prompt_tokens || r.completion_tokens);
    for (const r of this.rows)
      if (paid(r) && !(r.stage in out)) out[r.stage] = { calls: 0, prompt_tokens: 0, completion_tokens: 0 };
    for (const r of this.rows) {
      if (!paid(r) || r.phase !== 'step' || r.step !== step) continue;
      const s = (out[r.stage] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 });
      s.calls += r.calls ?? 0;
      s.prompt_tokens += r.prompt_tokens ?? 0;
      s.completion_tokens += r.completion_tokens ?? 0;
    }
    for (const [stage, s] of Object.entries(out))
      if (!s.calls && !s.prompt_tokens && !s.completion_tokens) delete out[stage];
    return out;
  }

  private append(r: AccountingRecord): void {
    const at = this.claims.get(r.kind === 'usage' ? r.key.stage : r.stage) ?? this.at;
    const base = { session: this.session, t: this.now(), step: at.step, phase: at.phase };
    let row: LedgerRow;
    if (r.kind !== 'usage') {
      row = { ...base, kind: r.kind, stage: r.stage };
    } else {
      row = {
        ...base,
        kind: 'usage',
        stage: r.key.stage,
        role: r.key.role,
        provider: r.key.provider,
        model: r.key.model,
      };
      for (const [from, to] of FIELDS) {
        const v = r.add[from];
        if (v) (row as unknown as Record<string, number>)[to] = v;
      }
      // A failed agent run that spent tokens is priced too.
      if (r.add.calls || r.add.promptTokens || r.add.completionTokens) row.dollars = r.dollars;
    }
    this.rows.push(row);
    appendJsonl(this.path, row);
  }

  /** The earlier processes' records as one accounting snapshot, to merge. */
  private priorSnapshot(): Pick<AccountingSnapshot, 'entries' | 'fallbacks' | 'reasks'> {
    const entries = new Map<string, UsageEntry>();
    const fallbacks: Record<string, number> = {};
    const reasks: Record<string, number> = {};
    for (const r of this.rows.slice(0, this.priorCount)) {
      if (r.kind === 'session') continue;
      if (r.kind === 'fallback' || r.kind === 'reask') {
        const counts = r.kind === 'fallback' ? fallbacks : reasks;
        counts[r.stage] = (counts[r.stage] ?? 0) + 1;
        continue;
      }
      const key = JSON.stringify([r.stage, r.role, r.provider, r.model]);
      let e = entries.get(key);
      if (!e) {
        e = {
          stage: r.stage,
          role: r.role ?? 'target',
          provider: r.provider ?? '',
          model: r.model ?? '',
          ...ZERO_COUNTERS,
          dollars: null,
          cacheSavedDollars: null,
        };
        entries.set(key, e);
      }
      for (const [from, to] of FIELDS) e[from] += (r[to] as number | undefined) ?? 0;
    }
    // merge() prices the counters with today's table (the rows keep what was known when paid).
    return { entries: [...entries.values()], fallbacks, reasks };
  }
}

/** A run's spend as its ledger holds it, for a view of a run no process of this session is running. */
export interface LedgerSpend {
  calls: number;
  tokens: number;
  cacheHits: number;
  /** null when some paid call's price is unknown. */
  dollars: number | null;
  promptTokens: number;
  cachedTokens: number;
  /** Requests cut off before their reply: the totals are then a lower bound. */
  cutOff: number;
  /** Every paid call was a simulated model's. */
  simulated: boolean;
}

/** The totals of the ledger at `path`; undefined when it is missing, empty or unreadable. */
export function readLedgerSpend(path: string): LedgerSpend | undefined {
  let rows: LedgerRow[];
  try {
    rows = readJsonl(path, LEDGER_ROWS);
  } catch {
    return undefined;
  }
  const usage = rows.filter((r) => r.kind === 'usage');
  if (usage.length === 0) return undefined;
  const sum = (
    k: 'calls' | 'prompt_tokens' | 'completion_tokens' | 'cache_hits' | 'cached_tokens' | 'cut_off',
  ): number => usage.reduce((n, r) => n + (r[k] ?? 0), 0);
  const unpriced = usage.some((r) => r.dollars === null);
  return {
    calls: sum('calls'),
    tokens: sum('prompt_tokens') + sum('completion_tokens'),
    cacheHits: sum('cache_hits'),
    dollars: unpriced ? null : usage.reduce((n, r) => n + (r.dollars ?? 0), 0),
    promptTokens: sum('prompt_tokens'),
    cachedTokens: sum('cached_tokens'),
    cutOff: sum('cut_off'),
    simulated: usage.every((r) => r.provider === 'sim' || !(r.calls || r.cut_off)),
  };
}
