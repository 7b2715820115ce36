/** USD per million tokens, as the config's `prices:` section spells it. */
export interface ModelPrice {
  input_per_mtok: number;
  output_per_mtok: number;
}

/**
 * Published list prices (standard tier, no caching or batch discounts) for a few well-known
 * models, as of 2025-11. Providers change prices; anything missing or stale is set in the config
 * under `prices:`, which always wins. Models not listed cost "unknown", never 0.
 */
const OPENAI_PRICES: Record<string, ModelPrice> = {
  'gpt-4o': { input_per_mtok: 2.5, output_per_mtok: 10 },
  'gpt-4o-mini': { input_per_mtok: 0.15, output_per_mtok: 0.6 },
  'gpt-4.1': { input_per_mtok: 2, output_per_mtok: 8 },
  'gpt-4.1-mini': { input_per_mtok: 0.4, output_per_mtok: 1.6 },
  'gpt-4.1-nano': { input_per_mtok: 0.1, output_per_mtok: 0.4 },
  'gpt-5': { input_per_mtok: 1.25, output_per_mtok: 10 },
  'gpt-5-mini': { input_per_mtok: 0.25, output_per_mtok: 2 },
  'gpt-5-nano': { input_per_mtok: 0.05, output_per_mtok: 0.4 },
  o1: { input_per_mtok: 15, output_per_mtok: 60 },
  'o1-mini': { input_per_mtok: 1.1, output_per_mtok: 4.4 },
  o3: { input_per_mtok: 2, output_per_mtok: 8 },
  'o3-mini': { input_per_mtok: 1.1, output_per_mtok: 4.4 },
  'o4-mini': { input_per_mtok: 1.1, output_per_mtok: 4.4 },
};

const ANTHROPIC_PRICES: Record<string, ModelPrice> = {
  'claude-opus-4-5': { input_per_mtok: 5, output_per_mtok: 25 },
  'claude-sonnet-4-5': { input_per_mtok: 3, output_per_mtok: 15 },
  'claude-haiku-4-5': { input_per_mtok: 1, output_per_mtok: 5 },
  'claude-opus-4-1': { input_per_mtok: 15, output_per_mtok: 75 },
  'claude-opus-4-0': { input_per_mtok: 15, output_per_mtok: 75 },
  'claude-opus-4': { input_per_mtok: 15, output_per_mtok: 75 },
  'claude-sonnet-4-0': { input_per_mtok: 3, output_per_mtok: 15 },
  'claude-sonnet-4': { input_per_mtok: 3, output_per_mtok: 15 },
  'claude-3-7-sonnet': { input_per_mtok: 3, output_per_mtok: 15 },
  'claude-3-5-sonnet': { input_per_mtok: 3, output_per_mtok: 15 },
  'claude-3-5-haiku': { input_per_mtok: 0.8, output_per_mtok: 4 },
  'claude-3-opus': { input_per_mtok: 15, output_per_mtok: 75 },
  'claude-3-haiku': { input_per_mtok: 0.25, output_per_mtok: 1.25 },
};

/** Built-in prices per provider family; a price only applies to the provider that publishes it. */
const BUILTIN: Record<string, Record<string, ModelPrice>> = {
  openai: OPENAI_PRICES,
  azure_openai: OPENAI_PRICES,
  anthropic: ANTHROPIC_PRICES,
};

/**
 * What may follow a known name for a prefix match: a snapshot date (`-2024-08-06`, `-20250514`,
 * `-0613`) or `-latest`. A bare family prefix is not enough: `gpt-5` must not price `gpt-5.5`, nor
 * `claude-opus-4` price `claude-opus-4-7`, because newer family members are priced differently.
 */
const SNAPSHOT_SUFFIX = /^[-@](\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$/;

/**
 * Price lookup: the config's `prices` (any provider) first, then the built-in table for the
 * call's provider. Each is searched by exact name, then by the longest known name that the model
 * extends with a snapshot suffix. Case-insensitive. `sim` and local servers (provider
 * `openai_compatible`) have no built-in prices, so they stay unknown unless configured.
 */
export class PriceTable {
  private readonly user: Map<string, ModelPrice>;

  constructor(overrides: Record<string, ModelPrice> = {}) {
    this.user = new Map(Object.entries(overrides).map(([k, v]) => [k.trim().toLowerCase(), v]));
  }

  lookup(model: string, provider?: string): ModelPrice | undefined {
    if (provider?.endsWith(BATCH_SUFFIX)) {
      const list = this.lookup(model, provider.slice(0, -BATCH_SUFFIX.length));
      return list && scalePrice(list, BATCH_PRICE_FACTOR);
    }
    const name = model.trim().toLowerCase();
    const fromUser = find(this.user, name);
    if (fromUser) return fromUser;
    const builtin = provider ? BUILTIN[provider] : undefined;
    return builtin ? find(new Map(Object.entries(builtin)), name) : undefined;
  }

  /** Dollars for the given token counts, or null when the model's price is unknown. */
  cost(
    model: string,
    provider: string | undefined,
    promptTokens: number,
    completionTokens: number,
  ): number | null {
    const price = this.lookup(model, provider);
    if (!price) return null;
    return (promptTokens * price.input_per_mtok + completionTokens * price.output_per_mtok) / 1_000_000;
  }
}

/** Both providers bill batch-API requests at half their list price (config prices included). */
export const BATCH_PRICE_FACTOR = 0.5;
const BATCH_SUFFIX = ':batch';

/** The accounting provider of calls made through `provider`'s batch API, priced at BATCH_PRICE_FACTOR. */
export function batchProvider(provider: string): string {
  return provider + BATCH_SUFFIX;
}

function scalePrice(price: ModelPrice, factor: number): ModelPrice {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(price)) out[k] = typeof v === 'number' ? v * factor : v;
  return out as unknown as ModelPrice;
}

function find(table: Map<string, ModelPrice>, name: string): ModelPrice | undefined {
  const exact = table.get(name);
  if (exact) return exact;
  let best: [string, ModelPrice] | undefined;
  for (const [known, price] of table) {
    if (name.startsWith(known) && SNAPSHOT_SUFFIX.test(name.slice(known.length))) {
      if (!best || known.length > best[0].length) best = [known, price];
    }
  }
  return best?.[1];
}
