import type { SkillOptConfig } from './config/schema';
import { SkillOptError } from './errors';
import { agentFor } from './llm/agents/fromConfig';
import type { PriceTable } from './llm/prices';
import type { ModelClient } from './llm/types';

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
  const priced = (c: ModelClient): boolean =>
    (c.backend === 'command' && agentFor(cfg.model.target_backend) === 'claude') ||
    prices.cost(c.model, c.billedProvider ?? c.backend, 1, 1) !== null;
  const unpriced = [...new Set(paid.filter((c) => !priced(c)).map((c) => c.model))].sort();
  if (!unpriced.length) return undefined;
  const fix = `add ${unpriced.map((m) => `prices.${m}.input_per_mtok and output_per_mtok`).join(', ')} to the config (0 for a free local model)`;
  if (paid.every((c) => !priced(c)))
    throw new SkillOptError(
      'config',
      `a cap of $${cap} cannot be enforced: no price is known for ${unpriced.join(', ')}, so the run would spend without ever reaching it`,
      {
        key: 'limits.max_dollars',
        fix: `${fix}, or cap tokens with limits.max_tokens and set limits.max_dollars: 0`,
      },
    );
  return `limits.max_dollars ($${cap}) counts only priced calls: no price is known for ${unpriced.join(', ')}, whose calls it will not count; ${fix} to count them`;
}
