import { SkillOptError } from '../errors';
import type { StopCap } from '../../protocol/events';
import type { Accounting } from './accounting';

/** Caps from the config's `limits:` section; 0 or absent = no cap. */
export interface BudgetLimits {
  maxTokens?: number;
  maxDollars?: number;
  maxWallSeconds?: number;
}

export interface BudgetGuardOptions {
  /** Called once when the dollar cap cannot be checked because some model has no price. */
  onWarning?: (message: string) => void;
  /** Wall time earlier processes of the same run already used (the time cap is per run). */
  priorSeconds?: number;
}

/**
 * Checks a run's spend against its caps between units of work. Tokens count prompt plus
 * completion over all roles (cache hits are free). When a model's price is unknown the dollar cap
 * cannot be verified: that is reported once as a warning and does not stop the run, but priced
 * spend alone exceeding the cap still does.
 */
export class BudgetGuard {
  private readonly startMs: number;
  private warned = false;
  readonly warnings: string[] = [];

  constructor(
    private readonly limits: BudgetLimits,
    private readonly accounting: Accounting,
    private readonly clock: () => number = Date.now,
    private readonly opts: BudgetGuardOptions = {},
  ) {
    this.startMs = clock() - (opts.priorSeconds ?? 0) * 1000;
  }

  /** null while within every cap; otherwise why the run must stop. */
  check(): string | null {
    return this.reached()?.reason ?? null;
  }

  /** The cap the run has reached, with why it must stop; null while within every cap. */
  reached(): (StopCap & { reason: string }) | null {
    const totals = this.accounting.totals();
    const { maxTokens, maxDollars, maxWallSeconds } = this.limits;
    if (maxTokens && maxTokens > 0) {
      const used = totals.promptTokens + totals.completionTokens;
      if (used >= maxTokens)
        return {
          key: 'limits.max_tokens',
          limit: maxTokens,
          used,
          reason: `token budget of ${maxTokens} reached (${used} used)`,
        };
    }
    if (maxDollars && maxDollars > 0) {
      if (totals.knownDollars >= maxDollars) {
        return {
          key: 'limits.max_dollars',
          limit: maxDollars,
          used: totals.knownDollars,
          reason: `dollar budget of ${dollars(maxDollars)} reached (${dollars(totals.knownDollars)} spent)`,
        };
      }
      if (totals.dollars === null && !this.warned) {
        this.warned = true;
        const models = totals.unpricedModels.join(', ');
        this.warn(
          `the dollar budget of ${dollars(maxDollars)} cannot be verified: no price is known for ${models}. ` +
            `Add ${totals.unpricedModels.length > 1 ? 'them' : 'it'} under \`prices:\` in the config ` +
            '({model: {input_per_mtok, output_per_mtok}}) to enforce it',
        );
      }
    }
    if (maxWallSeconds && maxWallSeconds > 0) {
      const elapsed = (this.clock() - this.startMs) / 1000;
      if (elapsed >= maxWallSeconds) {
        return {
          key: 'limits.max_wall_time_s',
          limit: maxWallSeconds,
          used: Math.floor(elapsed),
          reason: `wall-time budget of ${maxWallSeconds} s reached (${Math.floor(elapsed)} s elapsed)`,
        };
      }
    }
    return null;
  }

  /** Throw SkillOptError('budget') when a cap is reached. */
  assertWithinBudget(): void {
    const reason = this.check();
    if (reason) {
      throw new SkillOptError('budget', reason, {
        key: 'limits',
        fix: 'raise the cap under `limits:` (max_tokens, max_dollars, max_wall_time_s) and resume the run',
      });
    }
  }

  private warn(message: string): void {
    this.warnings.push(message);
    this.opts.onWarning?.(message);
  }
}

function dollars(n: number): string {
  return `$${n.toFixed(2)}`;
}
