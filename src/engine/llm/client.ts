import { cancelledError, SkillOptError } from '../errors';
import type { Logger } from '../log';
import { silentLogger } from '../log';
import type { Accounting, UsageKey } from './accounting';
import type { CachePolicy, ResponseCache } from './cache';
import { cacheKey, shouldCache } from './cache';
import type { LimitRegistry } from './limiter';
import { cliPricedProvider } from './prices';
import {
  errorKind,
  backoffMs,
  CallTimeoutError,
  describeError,
  fixForError,
  isTransient,
  retryAfterMs,
  sleep as abortableSleep,
} from './retry';
import { SecretRegistry } from './secrets';
import type {
  BackendReply,
  ChatBackend,
  ChatRequest,
  ChatResult,
  ModelClient,
  ModelRole,
  Usage,
} from './types';
import { spentBy, sumUsage } from './types';

export interface RetryPolicy {
  /** Attempts per call, the first included (the reference's `retries=5` means 5 attempts). Default 5. */
  maxAttempts?: number;
  /** Backoff base and cap in ms (defaults 500 and 30000). */
  baseMs?: number;
  capMs?: number;
  /** Longest wait a `retry-after` header may impose (default 60000 ms). */
  retryAfterCapMs?: number;
  /** Jitter source; injectable for tests. */
  random?: () => number;
}

export interface ModelClientOptions {
  role: ModelRole;
  backend: ChatBackend;
  /** Label in results, logs and errors; default the backend's provider. */
  name?: string;
  limits?: LimitRegistry;
  retry?: RetryPolicy;
  /** Per-attempt timeout when a request names none (default 300000 ms). */
  timeoutMs?: number;
  /** The config key `timeoutMs` comes from, named in a timeout's fix (default limits.request_timeout_s). */
  timeoutKey?: string;
  cache?: ResponseCache;
  cachePolicy?: CachePolicy;
  accounting?: Accounting;
  logger?: Logger;
  /** Extra secrets to redact, or the run's shared registry; the backend's own keys are always added. */
  secrets?: readonly string[] | SecretRegistry;
  /** Wait between attempts; injectable so tests can record waits instead of sleeping. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Monotonic milliseconds for measuring attempt time. */
  now?: () => number;
}

const DEFAULT_TIMEOUT_MS = 300_000;
const DEFAULT_ATTEMPTS = 5;

/** Wrap a backend with limits, cache, per-attempt timeout, retries, accounting and redaction. */
export function createModelClient(opts: ModelClientOptions): ModelClient {
  return new RetryingModelClient(opts);
}

class RetryingModelClient implements ModelClient {
  readonly role: ModelRole;
  readonly backend: string;
  readonly billedProvider?: string;
  readonly model: string;
  readonly acceptsImages: boolean;
  readonly acceptsTools: boolean;
  private readonly impl: ChatBackend;
  private readonly secrets: SecretRegistry;
  private readonly logger: Logger;
  private readonly maxAttempts: number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly now: () => number;

  constructor(private readonly opts: ModelClientOptions) {
    this.role = opts.role;
    this.impl = opts.backend;
    this.backend = opts.name ?? opts.backend.provider;
    if (opts.backend.billedProvider) this.billedProvider = opts.backend.billedProvider;
    this.model = opts.backend.model;
    this.acceptsImages = opts.backend.acceptsImages === true;
    this.acceptsTools = opts.backend.acceptsTools === true;
    this.secrets =
      opts.secrets instanceof SecretRegistry ? opts.secrets : new SecretRegistry(opts.secrets ?? []);
    for (const s of opts.backend.secrets?.() ?? []) this.secrets.add(s);
    this.logger = this.secrets.wrapLogger(opts.logger ?? silentLogger);
    this.maxAttempts = Math.max(1, Math.floor(opts.retry?.maxAttempts ?? DEFAULT_ATTEMPTS));
    this.sleep = opts.sleep ?? abortableSleep;
    this.now = opts.now ?? (() => performance.now());
  }

  chat(req: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const call = this.chatNow(req, signal);
    return this.opts.accounting ? this.opts.accounting.opened(call) : call;
  }

  private async chatNow(req: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const caller = signal ?? new AbortController().signal;
    const what = `${this.backend} ${this.model}`;
    if (caller.aborted) throw cancelledError(`The ${req.stage} call to ${what}`);
    const usageKey: UsageKey = {
      stage: req.stage,
      role: req.role,
      provider: this.billedProvider ?? this.impl.provider,
      model: this.model,
    };

    const cache = this.opts.cache && shouldCache(req, this.opts.cachePolicy) ? this.opts.cache : undefined;
    const key = cache ? cacheKey(this.impl, req) : undefined;
    // The cache is consulted before taking a permit: a hit costs nothing and must not queue behind real calls.
    if (cache && key) {
      const hit = await cache.get(key);
      if (caller.aborted) throw cancelledError(`The ${req.stage} call to ${what}`);
      if (hit) {
        this.opts.accounting?.recordCacheHit(usageKey);
        this.logger.log('debug', 'llm', `${req.stage} ${what}: cache hit ${key.slice(0, 12)}`);
        return {
          ...hit,
          backend: this.backend,
          model: hit.model ?? this.model,
          seconds: 0,
          attempts: 0,
          cached: true,
        };
      }
    }

    const timeoutMs = req.timeoutMs ?? this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let seconds = 0;
    // Tokens failed attempts had already spent (an agent run cut short): paid for all the same.
    let spent: Usage = { promptTokens: 0, completionTokens: 0 };
    for (let attempt = 1; ; attempt++) {
      let reply: BackendReply;
      try {
        reply = await this.attempt(
          req,
          caller,
          timeoutMs,
          (s) => (seconds += s),
          (late) => this.opts.accounting?.recordStopped(usageKey, { seconds: 0, ...late }),
          // A simulated call costs nothing, cut off or not.
          (seen) =>
            this.impl.provider === 'sim' ? undefined : this.opts.accounting?.recordCutOff(usageKey, seen),
        );
      } catch (err) {
        const lost = spentBy(err);
        if (lost) spent = sumUsage([spent, lost]);
        if (caller.aborted) {
          // Stopped, not failed: what it had spent is paid for all the same.
          if (spent.promptTokens + spent.completionTokens > 0)
            this.opts.accounting?.recordStopped(usageKey, { seconds, ...spent });
          throw cancelledError(`The ${req.stage} call to ${what}`);
        }
        if (!isTransient(err) || attempt >= this.maxAttempts) {
          this.opts.accounting?.recordFailure(usageKey, { seconds, attempts: attempt, ...spent });
          throw this.finalError(err, attempt);
        }
        const retry = this.opts.retry ?? {};
        const wait =
          retryAfterMs(err, retry.retryAfterCapMs) ??
          backoffMs(attempt, { baseMs: retry.baseMs, capMs: retry.capMs, random: retry.random });
        this.logger.log(
          'warn',
          'llm',
          `${req.stage} ${what}: ${describeError(err)}; attempt ${attempt + 1}/${this.maxAttempts} in ${(wait / 1000).toFixed(1)} s`,
        );
        try {
          await this.sleep(wait, caller);
        } catch (sleepErr) {
          if (caller.aborted) throw cancelledError(`The ${req.stage} call to ${what}`);
          throw sleepErr;
        }
        continue;
      }

      const clean = this.secrets.redactValue(reply);
      const reported = clean.usage.costUsd;
      // A reply its agent CLI priced itself keeps that price in a row of its own; the failed
      // attempts before it, which the price does not cover, are priced from the table.
      const own: Usage = reported === undefined ? spent : { promptTokens: 0, completionTokens: 0 };
      if (reported !== undefined && spent.promptTokens + spent.completionTokens > 0)
        this.opts.accounting?.recordStopped(usageKey, { seconds: 0, ...spent });
      this.opts.accounting?.recordCall(
        reported === undefined ? usageKey : { ...usageKey, provider: cliPricedProvider(usageKey.provider) },
        {
          promptTokens: clean.usage.promptTokens + own.promptTokens,
          completionTokens: clean.usage.completionTokens + own.completionTokens,
          cachedTokens: (clean.usage.cachedTokens ?? 0) + (own.cachedTokens ?? 0),
          cacheWriteTokens: (clean.usage.cacheWriteTokens ?? 0) + (own.cacheWriteTokens ?? 0),
          seconds,
          attempts: attempt,
          ...(reported !== undefined ? { reportedDollars: reported } : {}),
        },
      );
      if (cache && key) cache.put(key, { provider: this.impl.provider, model: this.model }, clean);
      this.logger.log(
        'debug',
        'llm',
        `${req.stage} ${what}: ${seconds.toFixed(2)} s, ${clean.usage.promptTokens}+${clean.usage.completionTokens} tokens` +
          (attempt > 1 ? `, ${attempt} attempts` : ''),
      );
      return {
        ...clean,
        backend: this.backend,
        model: clean.model ?? this.model,
        seconds,
        attempts: attempt,
        cached: false,
      };
    }
  }

  /** One attempt holding the role and provider permits, bounded by the per-attempt timeout. */
  private attempt(
    req: ChatRequest,
    caller: AbortSignal,
    timeoutMs: number,
    addSeconds: (s: number) => void,
    /**
     * What a call stopped by the caller turns out to have spent once it ends, or as this process
     * exits with it still running (agent runs say so).
     */
    spentAfterStop: (u: Usage) => void,
    /**
     * A request cut off (stop or timeout) that said nothing of what it spent, or, timed out, only
     * part of it (`seen`: what an agent reported before it was killed, a lower bound).
     */
    cutOff: (seen?: Usage) => void,
  ): Promise<BackendReply> {
    const once = async (): Promise<BackendReply> => {
      const started = this.now();
      const controller = new AbortController();
      const onCallerAbort = (): void => controller.abort(caller.reason);
      caller.addEventListener('abort', onCallerAbort, { once: true });
      let timedOut = false;
      const timer =
        Number.isFinite(timeoutMs) && timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              controller.abort(new CallTimeoutError(timeoutMs));
            }, timeoutMs)
          : undefined;
      const call = this.impl.call({ ...req, timeoutMs }, controller.signal, spentAfterStop);
      try {
        // Racing the signal makes cancellation and timeouts prompt even for a backend that ignores it.
        return await raceAbort(call, controller.signal);
      } catch (err) {
        if (timedOut || caller.aborted) {
          // The stop is prompt, but an agent run ends with a bill for what it did until the stop
          // (its transcript): record it then, and let the run wait for it. An HTTP call rejects
          // at once when aborted and reports nothing: it was sent, so it is counted as cut off
          // (the provider may bill it; the totals are then a lower bound). An agent this timeout
          // killed had a request in flight too: what it reported is paid, with that one cut off.
          const late = call.then(
            () => undefined,
            (e: unknown) => {
              const u = spentBy(e);
              if (u && caller.aborted) spentAfterStop(u);
              else cutOff(u);
            },
          );
          void this.opts.accounting?.opened(late);
        }
        if (timedOut && !caller.aborted) throw new CallTimeoutError(timeoutMs);
        throw err;
      } finally {
        if (timer) clearTimeout(timer);
        caller.removeEventListener('abort', onCallerAbort);
        addSeconds((this.now() - started) / 1000);
      }
    };
    return this.opts.limits ? this.opts.limits.run(req.role, this.impl.provider, once, caller) : once();
  }

  private finalError(err: unknown, attempts: number): SkillOptError {
    const redact = (s: string | undefined): string | undefined =>
      s === undefined ? undefined : this.secrets.redact(s);
    if (err instanceof SkillOptError) {
      // Reply-shape and config errors keep their reason (callers branch on it); only the text is cleaned.
      const place = {
        ...err.place,
        fix: redact(err.place.fix),
        file: redact(err.place.file),
        key: redact(err.place.key),
      };
      return new SkillOptError(err.reason, this.secrets.redact(err.problem), place, { kind: errorKind(err) });
    }
    const plural = attempts === 1 ? 'attempt' : 'attempts';
    // A context overflow is named as such: the server's words vary by provider and say little.
    const overflow =
      errorKind(err) === 'context_limit' ? "the prompt is longer than the model's context: " : '';
    const problem = `${this.backend} ${this.model}: ${overflow}${describeError(err)} after ${attempts} ${plural}`;
    const fix = fixForError(err, {
      endpoint: this.impl.endpoint,
      keyEnvVar: this.impl.keyEnvVar,
      timeoutKey: this.opts.timeoutKey,
    });
    this.logger.log('error', 'llm', problem);
    // The SDK error is not attached as `cause`: it can carry request details we do not control.
    return new SkillOptError(
      'llm',
      this.secrets.redact(problem),
      { fix: this.secrets.redact(fix) },
      { kind: errorKind(err) },
    );
  }
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The backend promise is abandoned; keep its eventual rejection from going unhandled.
    work.catch(() => undefined);
    return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
