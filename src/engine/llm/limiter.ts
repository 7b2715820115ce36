import { cancelledError } from '../errors';
import type { ModelRole } from './types';

interface Waiter {
  grant: () => void;
}

/**
 * A FIFO counting semaphore. Waiters are served strictly in arrival order; a waiter whose signal
 * fires leaves the queue at once and rejects with SkillOptError('cancelled').
 */
export class Semaphore {
  private used = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`Semaphore limit must be at least 1, got ${limit}`);
  }

  /** Permits currently held. */
  get active(): number {
    return this.used;
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Wait for a permit; resolves to a release function (calling it twice releases once). */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(cancelledError('Waiting for a model slot'));
    if (this.used < this.limit && this.queue.length === 0) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = (): void => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        reject(cancelledError('Waiting for a model slot'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** Run `fn` holding one permit. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      // The permit passes straight to the next waiter, so `used` stays the same.
      if (next) next.grant();
      else this.used--;
    };
  }
}

export interface LimitSettings {
  /** Concurrent calls per role across all stages; absent = unlimited. */
  roleLimits?: Partial<Record<ModelRole, number>>;
  /** Concurrent calls per provider (`openai`, `anthropic`, `openai_compatible`, ...); absent = unlimited. */
  providerLimits?: Record<string, number>;
}

/**
 * Hands out one shared semaphore per role and per provider, so every stage of a run (rollouts,
 * analysts, merges, gate evaluations) draws from the same limits. A call holds its role permit
 * and its provider permit; they are always taken in that order, so two calls can never wait on
 * each other crosswise.
 */
export class LimitRegistry {
  private readonly roles = new Map<ModelRole, Semaphore>();
  private readonly providers = new Map<string, Semaphore>();

  constructor(private readonly settings: LimitSettings = {}) {}

  role(role: ModelRole): Semaphore | undefined {
    return this.get(this.roles, role, this.settings.roleLimits?.[role]);
  }

  provider(provider: string): Semaphore | undefined {
    return this.get(this.providers, provider, this.settings.providerLimits?.[provider]);
  }

  /** Run `fn` holding both the role permit and the provider permit. */
  async run<T>(role: ModelRole, provider: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const roleGate = this.role(role);
    const providerGate = this.provider(provider);
    const releaseRole = roleGate ? await roleGate.acquire(signal) : undefined;
    try {
      const releaseProvider = providerGate ? await providerGate.acquire(signal) : undefined;
      try {
        return await fn();
      } finally {
        releaseProvider?.();
      }
    } finally {
      releaseRole?.();
    }
  }

  private get<K>(map: Map<K, Semaphore>, key: K, limit: number | undefined): Semaphore | undefined {
    if (limit === undefined || !Number.isFinite(limit)) return undefined;
    let sem = map.get(key);
    if (!sem) {
      sem = new Semaphore(Math.max(1, Math.floor(limit)));
      map.set(key, sem);
    }
    return sem;
  }
}

/**
 * Target calls in flight at most: limits.target_concurrency, or the reference's rollout workers
 * (env.workers) when set and lower: both are caps, so the lower one holds.
 */
export function targetConcurrencyOf(cfg: {
  limits: { target_concurrency: number };
  env: { workers?: number | undefined };
}): number {
  const workers = cfg.env.workers;
  return workers ? Math.min(workers, cfg.limits.target_concurrency) : cfg.limits.target_concurrency;
}

/** The `limits:` config section's concurrency keys (and env.workers) as LimitSettings. */
export function limitsFromConfig(cfg: {
  limits: {
    optimizer_concurrency: number;
    target_concurrency: number;
    provider_concurrency: Record<string, number>;
  };
  env: { workers?: number | undefined };
}): LimitSettings {
  return {
    roleLimits: { optimizer: cfg.limits.optimizer_concurrency, target: targetConcurrencyOf(cfg) },
    providerLimits: { ...cfg.limits.provider_concurrency },
  };
}
