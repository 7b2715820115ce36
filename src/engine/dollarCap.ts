import type { SkillOptConfig } from './config/schema';
import { SkillOptError } from './errors';
import { agentFor } from './llm/agents/fromConfig';
import type { PriceTable } from './llm/prices';
import type { ModelClient } from './llm/types';
import type { PreparedRun } from './run';

/**
 * `limits.max_dollars` counts the calls that have a price. When no paid role has one the cap could
 * never be reached: refused before any call. When some have none, their calls are not counted:
 * said before any call (validate, the start), not once money is spent. Free roles (`sim`) need no
 * price; Claude Code prices its own calls (the cost it reports).
 */
export function checkDollarCap(
  cfg: SkillOptConfig,
  clients: ReadonlyArray<ModelClient | undefined>,
  prices: PriceTable,
): string | undefined {
  const cap = cfg.limits.max_dollars;
  if (!(cap > 0)) return undefined;
  const paid = clients.filter((c): c is ModelClient => c !== undefined && c.backend !== 'sim');
  const cliPriced = (c: ModelClient): boolean =>
    c.backend === 'command' && agentFor(cfg.model.target_backend) === 'claude';
  const cost = (c: ModelClient, cached: number): number | null =>
    prices.cost(c.model, c.billedProvider ?? c.backend, 1, 1, { cachedTokens: cached });
  const priced = (c: ModelClient): boolean => cliPriced(c) || cost(c, 0) !== null;
  const names = (list: ModelClient[]): string[] => [...new Set(list.map((c) => c.model))].sort();
  const unpriced = names(paid.filter((c) => !priced(c)));
  // A price without a cached-input rate leaves every reply that read the provider's prompt cache
  // unpriced (never $0), so those calls are not counted either.
  const noCacheRate = names(paid.filter((c) => priced(c) && !cliPriced(c) && cost(c, 1) === null));
  if (paid.length && paid.every((c) => !priced(c))) {
    const fix = unpriced.map((m) => `prices.${m}.input_per_mtok and output_per_mtok`).join(', ');
    throw new SkillOptError(
      'config',
      `a cap of $${cap} cannot be enforced: no price is known for ${unpriced.join(', ')}, so the run would spend without ever reaching it`,
      {
        key: 'limits.max_dollars',
        fix: `add ${fix} to the config (0 for a free local model), or cap tokens with limits.max_tokens and set limits.max_dollars: 0`,
      },
    );
  }
  const parts = [
    ...(unpriced.length
      ? [
          `no price is known for ${unpriced.join(', ')} (add prices.<model>.input_per_mtok and output_per_mtok, 0 for a free local model)`,
        ]
      : []),
    ...(noCacheRate.length
      ? [
          `the prices: of ${noCacheRate.join(', ')} have no cached_input_per_mtok, so calls that read the provider's prompt cache are unpriced (add it)`,
        ]
      : []),
  ];
  return parts.length
    ? `limits.max_dollars ($${cap}) counts only priced calls, and some will not be: ${parts.join('; ')}`
    : undefined;
}

/** The check for what a command calls: training pays the target, optimizer and judge; eval-only no optimizer. */
export function dollarCapNotice(prepared: PreparedRun, command: 'train' | 'eval'): string | undefined {
  const { target, optimizer, judge, accounting } = prepared.models;
  const clients = command === 'train' ? [target, optimizer, judge] : [target, judge];
  return checkDollarCap(prepared.config, clients, accounting.prices);
}
