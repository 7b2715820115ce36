import { scrubUrl } from '../llm/secrets';
import { SECTION_FIELDS } from './schema';
import type { FieldSection, SkillOptConfig } from './schema';
import { isPlainObject } from './schema/validate';

/**
 * The flat key names of the reference's config.json (and of legacy flat YAML configs and CLI
 * flags), derived from the schema's field order so the two never drift apart.
 */

/** Flat names that differ from the structured key (all others keep their own name). */
const RENAMED: Record<string, string> = {
  'model.backend': 'model_backend',
  'model.optimizer': 'optimizer_model',
  'model.target': 'target_model',
  'optimizer.learning_rate': 'edit_budget',
  'optimizer.min_learning_rate': 'min_edit_budget',
  'optimizer.meta_learning_rate': 'meta_edit_budget',
  'env.name': 'env',
  'cache.enabled': 'cache_enabled',
  'cache.dir': 'cache_dir',
  'cache.all_roles': 'cache_all_roles',
  'review.mode': 'review_mode',
  'speed.speculate': 'speed_speculate',
};

const REFERENCE_SECTIONS: readonly FieldSection[] = ['model', 'train', 'gradient', 'optimizer', 'evaluation'];
/** The only env keys with a flat mapping; every other env key is passed through under its own name. */
const ENV_MAPPED = ['name', 'skill_init', 'out_root'] as const;
const OWN_SECTIONS: readonly FieldSection[] = ['limits', 'cache', 'review', 'activation', 'speed'];
/** Own sections whose keys are flattened with the section as prefix (`activation_enabled`). */
const PREFIXED_SECTIONS: readonly FieldSection[] = ['activation'];

function entriesFor(
  section: FieldSection,
  keys: readonly string[],
): Array<readonly [readonly string[], string]> {
  const prefix = PREFIXED_SECTIONS.includes(section) ? `${section}_` : '';
  return keys.map((key) => [[section, key], RENAMED[`${section}.${key}`] ?? `${prefix}${key}`] as const);
}

/** Ordered (structured path, flat name) pairs: reference sections, mapped env keys, then ours. */
export const FLATTEN_MAP: ReadonlyArray<readonly [readonly string[], string]> = [
  ...REFERENCE_SECTIONS.flatMap((s) => entriesFor(s, Object.keys(SECTION_FIELDS[s]))),
  ...entriesFor('env', ENV_MAPPED),
  ...OWN_SECTIONS.flatMap((s) => entriesFor(s, Object.keys(SECTION_FIELDS[s]))),
  [['prices'], 'prices'],
];

/** Flat name → structured path. */
export const FLAT_TO_PATH: ReadonlyMap<string, readonly string[]> = new Map(
  FLATTEN_MAP.map(([path, flat]) => [flat, path] as const),
);

/** Flat name → dotted structured key, for "did you mean" hints. */
export const FLAT_TO_DOTTED: ReadonlyMap<string, string> = new Map(
  FLATTEN_MAP.map(([path, flat]) => [flat, path.join('.')] as const),
);

/** Legacy CLI flag name → structured path (flags not listed here become env.<name>). */
export const LEGACY_TO_PATH: ReadonlyMap<string, readonly string[]> = new Map([
  ...FLAT_TO_PATH,
  ['backend', ['model', 'backend']],
]);

/**
 * The reference train.py's judge flags, which nothing in the reference reads: what each does here,
 * shown as a warning after the flag's name when given (overrides.ts applyLegacyArgs). `judge_model` is also a key of ours.
 */
export const REFERENCE_JUDGE_FLAGS: ReadonlyMap<string, string> = new Map([
  [
    'judge_model',
    "sets evaluation.judge_model here: the model that grades your eval files' natural-language expectations, on the optimizer's backend (the reference reads the flag nowhere); drop it to grade with the optimizer model",
  ],
  [
    'judge_retries',
    "ignored (the reference reads it nowhere): the judge's calls are retried like every call, limits.max_retries times; remove it, or set limits.max_retries",
  ],
  [
    'judge_max_completion_tokens',
    "ignored (the reference reads it nowhere): a judge's grade is capped like the optimizer's replies; remove it",
  ],
]);

/** Keys config.json carries that are recomputed on every run; a flat config's copy is dropped. */
export const DERIVED_FLAT_KEYS: ReadonlySet<string> = new Set([
  'steps_per_epoch',
  'batches_per_epoch',
  'samples_per_epoch',
  'resolved_qwen_thinking_modes',
]);

/** Codex spellings the reference accepts, canonical name first. */
export const CODEX_ALIASES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['codex_exec_path', ['codex_path', 'codex_cli_bin', 'codex_bin']],
  ['codex_exec_sandbox', ['sandbox', 'codex_sandbox']],
];

/** Canonical name for a Codex alias; other names come back unchanged. */
export function canonicalCodexKey(name: string): string {
  for (const [canonical, aliases] of CODEX_ALIASES) if (aliases.includes(name)) return canonical;
  return name;
}

/** Values computed at run start and written into config.json next to the configured ones. */
export interface FlatDerived {
  train_size: number;
  steps_per_epoch: number;
  batches_per_epoch: number;
  samples_per_epoch: number;
  /** Anything else the run resolved (e.g. resolved_qwen_thinking_modes); appended last. */
  [extra: string]: unknown;
}

function valueAt(config: SkillOptConfig, path: readonly string[]): unknown {
  let node: unknown = config;
  for (const p of path) {
    if (!isPlainObject(node)) return undefined;
    node = node[p];
  }
  return node;
}

/**
 * The reference's flat config.json shape: mapped keys in the reference's order, every other env
 * key under its own name, this port's keys, then the derived fields. Unset optional keys are
 * left out. Not redacted: pass the result through redactSecrets before writing it.
 */
export function toFlatConfig(config: SkillOptConfig, derived: FlatDerived): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  const put = (path: readonly string[], name: string): void => {
    const value = path.join('.') === 'train.train_size' ? derived.train_size : valueAt(config, path);
    if (value !== undefined) flat[name] = value;
  };
  const own = new Set<string>(OWN_SECTIONS);
  for (const [path, name] of FLATTEN_MAP) if (!own.has(path[0]) && path[0] !== 'prices') put(path, name);
  const envMapped = new Set<string>(ENV_MAPPED);
  for (const [key, value] of Object.entries(config.env)) {
    // A mapped name wins over an env key of the same name, so the flat file stays loadable.
    if (envMapped.has(key) || value === undefined || FLAT_TO_PATH.has(key)) continue;
    flat[key] = value;
  }
  for (const [path, name] of FLATTEN_MAP) if (own.has(path[0]) || path[0] === 'prices') put(path, name);
  for (const [key, value] of Object.entries(derived)) if (key !== 'train_size') flat[key] = value;
  return flat;
}

const SECRET_NAME = /key|token|secret/i;
/** Keys whose names look like a secret's but whose values are a fixed set of words. */
const NOT_SECRET = new Set(['prompt_cache_key']);
const namesSecret = (key: string): boolean => SECRET_NAME.test(key) && !NOT_SECRET.has(key);

/** A `k=v` override as it may be shown or logged: the value masked when the key names a secret. */
export function redactOverride(override: string): string {
  const eq = override.indexOf('=');
  if (eq < 0) return override;
  const key = override.slice(0, eq);
  const value = override.slice(eq + 1);
  // Numbers are never secrets (max_completion_tokens), as in redactSecrets.
  const secret = namesSecret(key.split('.').pop() ?? '') && value !== '' && !/^-?\d+(\.\d+)?$/.test(value);
  return secret ? `${key}=${mask(value)}` : `${key}=${scrubUrl(value)}`;
}

/** A token count written as text (the reference's `minimax_max_tokens: "8000"`), not a credential. */
function isCount(key: string, value: string): boolean {
  return /tokens$/i.test(key) && /^\d+$/.test(value.trim());
}

/**
 * Only a long secret keeps its ends, to tell keys apart (a real provider key has 40 characters or
 * more): four and four of a short one would give most of it away (8 of a 9-character key).
 */
const MASK_SHOWS_ENDS_FROM = 24;

function mask(value: string): string {
  return value.length < MASK_SHOWS_ENDS_FROM ? '***' : `${value.slice(0, 4)}...${value.slice(-4)}`;
}

/**
 * Copy of `value` with every non-empty string stored under a key whose name contains "key",
 * "token" or "secret" masked (`abcd...wxyz`, `***` when shorter than 24 characters). Numbers such as
 * max_completion_tokens are left alone. Every URL-valued string loses its userinfo and the values
 * of credential-like query parameters (scrubUrl), whatever its key. Recurses through objects and arrays.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value) as T;
}

function redact(value: unknown): unknown {
  if (typeof value === 'string') return scrubUrl(value);
  if (Array.isArray(value)) return value.map(redact);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] =
      namesSecret(key) && typeof v === 'string' && v !== '' && !isCount(key, v) ? mask(v) : redact(v);
  }
  return out;
}
