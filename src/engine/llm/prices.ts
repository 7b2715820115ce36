/** USD per million tokens, as the config's `prices:` section spells it. */
export interface ModelPrice {
  input_per_mtok: number;
  output_per_mtok: number;
  /** Input tokens read from the provider's prompt cache; absent = unknown (never assumed free). */
  cached_input_per_mtok?: number;
  /** Input tokens written to the provider's prompt cache; absent = unknown. */
  cache_write_per_mtok?: number;
}

/** The date of the built-in table, shown wherever a price from it is used. */
export const PRICE_TABLE_DATE = '2025-11';

/** Prompt-cache token counts of calls to price; both are part of the calls' prompt tokens. */
export interface CacheTokens {
  cachedTokens?: number;
  cacheWriteTokens?: number;
  /** What an agent CLI priced these calls at itself (rows of a cliPricedProvider). */
  reportedDollars?: number;
}

/**
 * Published list prices (standard tier, no batch discount) for a few well-known models, as of
 * PRICE_TABLE_DATE. OpenAI bills cached input at the listed rate per model and charges nothing
 * extra to write its cache (so a write costs plain input). Providers change prices; anything
 * missing or stale is set in the config under `prices:`, which always wins. Models not listed
 * cost "unknown", never 0.
 */
const openai = (input: number, cached: number, output: number): ModelPrice => ({
  input_per_mtok: input,
  output_per_mtok: output,
  cached_input_per_mtok: cached,
  cache_write_per_mtok: input,
});

const OPENAI_PRICES: Record<string, ModelPrice> = {
  'gpt-4o': openai(2.5, 1.25, 10),
  'gpt-4o-mini': openai(0.15, 0.075, 0.6),
  'gpt-4.1': openai(2, 0.5, 8),
  'gpt-4.1-mini': openai(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.025, 0.4),
  'gpt-5': openai(1.25, 0.125, 10),
  'gpt-5-mini': openai(0.25, 0.025, 2),
  'gpt-5-nano': openai(0.05, 0.005, 0.4),
  o1: openai(15, 7.5, 60),
  'o1-mini': openai(1.1, 0.55, 4.4),
  o3: openai(2, 0.5, 8),
  'o3-mini': openai(1.1, 0.55, 4.4),
  'o4-mini': openai(1.1, 0.275, 4.4),
};

/** Anthropic's cache rates are multiples of the input rate: reads 0.1x, 5-minute writes 1.25x. */
const anthropic = (input: number, output: number): ModelPrice => ({
  input_per_mtok: input,
  output_per_mtok: output,
  cached_input_per_mtok: input * 0.1,
  cache_write_per_mtok: input * 1.25,
});

const ANTHROPIC_PRICES: Record<string, ModelPrice> = {
  'claude-opus-4-5': anthropic(5, 25),
  'claude-sonnet-4-5': anthropic(3, 15),
  'claude-haiku-4-5': anthropic(1, 5),
  'claude-opus-4-1': anthropic(15, 75),
  'claude-opus-4-0': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  'claude-sonnet-4-0': anthropic(3, 15),
  'claude-sonnet-4': anthropic(3, 15),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-3-5-sonnet': anthropic(3, 15),
  'claude-3-5-haiku': anthropic(0.8, 4),
  'claude-3-opus': anthropic(15, 75),
  'claude-3-haiku': anthropic(0.25, 1.25),
};

/** `us.anthropic.claude-sonnet-4-5-20250929-v1:0` (Bedrock) → `claude-sonnet-4-5-20250929`. */
const BEDROCK_ID = /^(?:[a-z-]+\.)?anthropic\.(claude-[a-z0-9.-]+?)(?:-v\d+(?::\d+)?)?$/;

/** The Anthropic API's name of a Claude model as Bedrock names it; any other name unchanged. */
export function anthropicName(model: string): string {
  return BEDROCK_ID.exec(model)?.[1] ?? model;
}

/** A Claude model id as Bedrock (`…anthropic.claude-…-v1:0`) or Vertex (`claude-…@20250929`) spells it. */
export function isCloudClaudeId(model: string): boolean {
  const name = model.trim().toLowerCase();
  return BEDROCK_ID.test(name) || /^claude-[a-z0-9.-]+@/.test(name);
}

/**
 * The shortest prompt prefix a provider caches, in tokens, as of PRICE_TABLE_DATE (a shorter one
 * is sent at the plain input rate): OpenAI and Azure OpenAI cache any prompt from 1,024 tokens on
 * their own; Anthropic caches a `cache_control` prefix from 1,024 tokens, 2,048 for the Haiku 3
 * models, 4,096 for Opus 4.5 and Haiku 4.5. Undefined where the provider's caching is not known.
 */
export function minCachedPrefixTokens(model: string, provider: string): number | undefined {
  if (provider === 'openai' || provider === 'azure_openai') return 1024;
  if (provider !== 'anthropic') return undefined;
  const name = model.trim().toLowerCase();
  if (name.startsWith('claude-opus-4-5') || name.startsWith('claude-haiku-4-5')) return 4096;
  if (name.startsWith('claude-3-5-haiku') || name.startsWith('claude-3-haiku')) return 2048;
  return 1024;
}

/** Built-in prices per provider family; a price only applies to the provider that publishes it. */
const SIMULATED_PRICE: ModelPrice = {
  input_per_mtok: 0,
  output_per_mtok: 0,
  cached_input_per_mtok: 0,
  cache_write_per_mtok: 0,
};

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
 * extends with a snapshot suffix. Case-insensitive. Local servers (provider `openai_compatible`)
 * have no built-in prices, so they stay unknown unless configured; `sim` costs nothing.
 */
export class PriceTable {
  private readonly user: Map<string, ModelPrice>;

  constructor(overrides: Record<string, ModelPrice> = {}) {
    this.user = new Map(Object.entries(overrides).map(([k, v]) => [k.trim().toLowerCase(), v]));
  }

  /** Whether the config's `prices:` names this model (its own figure, over any list price). */
  hasOwnPrice(model: string): boolean {
    return find(this.user, model.trim().toLowerCase()) !== undefined;
  }

  lookup(model: string, provider?: string): ModelPrice | undefined {
    if (provider?.endsWith(CLI_PRICED_SUFFIX))
      return this.lookup(model, provider.slice(0, -CLI_PRICED_SUFFIX.length));
    if (provider?.endsWith(BATCH_SUFFIX)) {
      const list = this.lookup(model, provider.slice(0, -BATCH_SUFFIX.length));
      return list && scalePrice(list, BATCH_PRICE_FACTOR);
    }
    // The simulated backend is offline: its calls cost exactly nothing, whatever the model name.
    if (provider === 'sim') return SIMULATED_PRICE;
    const name = model.trim().toLowerCase();
    const fromUser = find(this.user, name);
    if (fromUser) return fromUser;
    const builtin = provider ? BUILTIN[provider] : undefined;
    // A Bedrock id names the Anthropic model it serves: priced at Anthropic's list price (said in a
    // notice, cloudClaudeNotice), which a regional endpoint may exceed.
    const listed = provider === 'anthropic' ? anthropicName(name) : name;
    return builtin ? find(new Map(Object.entries(builtin)), listed) : undefined;
  }

  /**
   * Dollars for the given token counts, or null when the model's price is unknown, or when tokens
   * came from (or went into) the provider's prompt cache and that rate is unknown.
   */
  cost(
    model: string,
    provider: string | undefined,
    promptTokens: number,
    completionTokens: number,
    cache: CacheTokens = {},
  ): number | null {
    // Calls an agent CLI priced itself: its figure, unless the config's `prices:` names the model.
    if (provider?.endsWith(CLI_PRICED_SUFFIX) && !find(this.user, model.trim().toLowerCase()))
      return cache.reportedDollars ?? null;
    const price = this.lookup(model, provider);
    return price ? priceTokens(price, promptTokens, completionTokens, cache) : null;
  }

  /**
   * What the provider's prompt cache saved against the same tokens at the plain input rate
   * (negative when cache writes cost more than they saved); null when a price is unknown.
   */
  cacheSavings(
    model: string,
    provider: string | undefined,
    promptTokens: number,
    cache: CacheTokens,
  ): number | null {
    const price = this.lookup(model, provider);
    if (!price) return null;
    const paid = priceTokens(price, promptTokens, 0, cache);
    return paid === null ? null : (promptTokens * price.input_per_mtok) / 1_000_000 - paid;
  }
}

/**
 * Agent calls whose CLI reported their cost at list prices it knows (Claude Code's `total_cost_usd`
 * when every model of its `modelUsage` has `costBasis: "list"`) are kept apart under this suffix of
 * the provider the CLI talks to, with that cost: it counts every model the CLI used (its smaller
 * helper models too), which a price per row's model cannot. The config's `prices:` still wins.
 */
const CLI_PRICED_SUFFIX = ':cli_priced';

/** The accounting provider of calls to `provider` that an agent CLI priced itself. */
export function cliPricedProvider(provider: string): string {
  return provider + CLI_PRICED_SUFFIX;
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

function priceTokens(
  price: ModelPrice,
  promptTokens: number,
  completionTokens: number,
  cache: CacheTokens,
): number | null {
  const cached = cache.cachedTokens ?? 0;
  const written = cache.cacheWriteTokens ?? 0;
  if (cached > 0 && price.cached_input_per_mtok === undefined) return null;
  if (written > 0 && price.cache_write_per_mtok === undefined) return null;
  const plain = Math.max(0, promptTokens - cached - written);
  return (
    (plain * price.input_per_mtok +
      cached * (price.cached_input_per_mtok ?? 0) +
      written * (price.cache_write_per_mtok ?? 0) +
      completionTokens * price.output_per_mtok) /
    1_000_000
  );
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
