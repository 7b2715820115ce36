import { z } from 'zod';
import { SkillOptError } from '../errors';
import { REVIEW_MODES } from '../../protocol/vocabulary';

/**
 * The sectioned configuration: every key the SkillOpt reference reads (so its YAML files load
 * unchanged) plus this port's own keys. Field order matters: flat.ts derives the flat
 * config.json key order from it, and the reference keys come first in the reference's order.
 */

// ── field builders (each carries a human description used in error messages) ──────────────────

function text(def: string): z.ZodDefault<z.ZodString> {
  return z.string().default(def).describe('a string');
}
function nonEmpty(def: string): z.ZodDefault<z.ZodString> {
  return z.string().trim().min(1).default(def).describe('a non-empty string');
}
function int(def: number, min: number): z.ZodDefault<z.ZodNumber> {
  return z.number().int().min(min).default(def).describe(`an integer ≥ ${min}`);
}
function num(def: number, min: number): z.ZodDefault<z.ZodNumber> {
  return z.number().min(min).default(def).describe(`a number ≥ ${min}`);
}
function positive(def: number): z.ZodDefault<z.ZodNumber> {
  return z.number().positive().default(def).describe('a number > 0');
}
function flag(def: boolean): z.ZodDefault<z.ZodBoolean> {
  return z.boolean().default(def).describe('true or false');
}
function oneOf<const T extends readonly [string, ...string[]]>(values: T, def: T[number]) {
  return z
    .enum(values)
    .default(def)
    .describe(`one of: ${values.join(', ')}`);
}
/** Reference keys whose YAML value may be a string, a number, a boolean or null (env-var style). */
const looseValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
function loose(def: string | number | boolean | null) {
  return looseValue.default(def).describe('a string, number, true/false or null');
}
function optionalLoose() {
  return looseValue.optional().describe('a string, number, true/false or null');
}
function optionalText() {
  return z.string().optional().describe('a string');
}
function nullableFlag() {
  return z.boolean().nullable().default(null).describe('true, false or null');
}

// ── enums and their aliases ──────────────────────────────────────────────────────────────────

export const UPDATE_MODES = ['patch', 'rewrite_from_suggestions', 'full_rewrite_minibatch'] as const;
export const LR_CONTROL_MODES = ['fixed', 'autonomous', 'none'] as const;
export const PAIR_POLICIES = ['mixed', 'changed', 'unchanged'] as const;
export const LR_SCHEDULERS = ['constant', 'linear', 'cosine', 'autonomous'] as const;
export const GATE_METRICS = ['hard', 'soft', 'mixed'] as const;
export const SPLIT_MODES = ['ratio', 'split_dir'] as const;
export const ANCHOR_MODES = ['strict', 'reference'] as const;

const UPDATE_MODE_ALIASES: Record<string, (typeof UPDATE_MODES)[number]> = {
  patch: 'patch',
  edits: 'patch',
  rewrite: 'rewrite_from_suggestions',
  rewrite_from_suggestions: 'rewrite_from_suggestions',
  suggestions: 'rewrite_from_suggestions',
  rewrite_suggestions: 'rewrite_from_suggestions',
  full_rewrite: 'full_rewrite_minibatch',
  full_rewrite_minibatch: 'full_rewrite_minibatch',
  minibatch_full_rewrite: 'full_rewrite_minibatch',
  skill_rewrite_minibatch: 'full_rewrite_minibatch',
};
const LR_CONTROL_ALIASES: Record<string, (typeof LR_CONTROL_MODES)[number]> = {
  fixed: 'fixed',
  manual: 'fixed',
  scheduler: 'fixed',
  scheduled: 'fixed',
  autonomous: 'autonomous',
  auto: 'autonomous',
  optimizer: 'autonomous',
  none: 'none',
  off: 'none',
  no_lr: 'none',
};
const PAIR_POLICY_ALIASES: Record<string, (typeof PAIR_POLICIES)[number]> = {
  mixed: 'mixed',
  default: 'mixed',
  random: 'mixed',
  all: 'mixed',
  changed: 'changed',
  change: 'changed',
  delta: 'changed',
  '10_01': 'changed',
  '01_10': 'changed',
  unchanged: 'unchanged',
  stable: 'unchanged',
  same: 'unchanged',
  '00_11': 'unchanged',
};

/** Alias tables, keyed by `section.key`, applied before validation. */
export const ALIASED_KEYS: Record<string, Record<string, string>> = {
  'optimizer.skill_update_mode': UPDATE_MODE_ALIASES,
  'optimizer.lr_control_mode': LR_CONTROL_ALIASES,
  'optimizer.longitudinal_pair_policy': PAIR_POLICY_ALIASES,
};

/** Canonical value for an alias, or undefined when the value is not a known spelling. */
export function normalizeAlias(key: string, value: string): string | undefined {
  const table = ALIASED_KEYS[key];
  if (!table) return value;
  return table[value.trim().toLowerCase()];
}

// ── sections ─────────────────────────────────────────────────────────────────────────────────

const AZURE_DEFAULTS = {
  endpoint: '',
  api_version: '2024-12-01-preview',
  api_key: '',
  auth_mode: '',
  ad_scope: 'https://cognitiveservices.azure.com/.default',
  managed_identity_client_id: '',
} as const;

function azureFields<P extends string>(prefix: P) {
  return {
    [`${prefix}azure_openai_endpoint`]: text(AZURE_DEFAULTS.endpoint),
    [`${prefix}azure_openai_api_version`]: text(AZURE_DEFAULTS.api_version),
    [`${prefix}azure_openai_api_key`]: text(AZURE_DEFAULTS.api_key),
    [`${prefix}azure_openai_auth_mode`]: text(AZURE_DEFAULTS.auth_mode),
    [`${prefix}azure_openai_ad_scope`]: text(AZURE_DEFAULTS.ad_scope),
    [`${prefix}azure_openai_managed_identity_client_id`]: text(AZURE_DEFAULTS.managed_identity_client_id),
  } as Record<`${P}azure_openai_${keyof typeof AZURE_DEFAULTS}`, z.ZodDefault<z.ZodString>>;
}

function optionalRoleFields<P extends string, S extends string>(prefix: P, suffixes: readonly S[]) {
  const out: Record<string, ReturnType<typeof optionalLoose>> = {};
  for (const s of suffixes) out[`${prefix}${s}`] = optionalLoose();
  return out as Record<`${P}${S}`, ReturnType<typeof optionalLoose>>;
}

const QWEN_OPTIONAL = [
  'qwen_chat_base_url',
  'qwen_chat_api_key',
  'qwen_chat_temperature',
  'qwen_chat_timeout_seconds',
  'qwen_chat_max_tokens',
  'qwen_chat_enable_thinking',
] as const;
const OPENAI_COMPATIBLE_OPTIONAL = [
  'openai_compatible_base_url',
  'openai_compatible_api_key',
  'openai_compatible_model',
  'openai_compatible_temperature',
  'openai_compatible_timeout_seconds',
  'openai_compatible_max_tokens',
] as const;

const modelFields = {
  backend: text('azure_openai'),
  optimizer: text('gpt-5.5'),
  target: text('gpt-5.5'),
  // Backend names are mapped by the model layer; here they only have to be present.
  optimizer_backend: nonEmpty('openai_chat'),
  target_backend: nonEmpty('openai_chat'),
  reasoning_effort: text('medium'),
  rewrite_reasoning_effort: text(''),
  rewrite_max_completion_tokens: int(64000, 1),
  codex_exec_path: text(''),
  codex_exec_sandbox: text(''),
  codex_exec_profile: text(''),
  codex_exec_full_auto: optionalLoose(),
  codex_exec_reasoning_effort: text(''),
  codex_exec_use_sdk: loose(null),
  codex_exec_network_access: nullableFlag(),
  codex_exec_web_search: nullableFlag(),
  codex_exec_approval_policy: text(''),
  claude_code_exec_path: text('claude'),
  claude_code_exec_profile: text(''),
  claude_code_exec_use_sdk: loose('auto'),
  claude_code_exec_effort: text('medium'),
  claude_code_exec_max_thinking_tokens: int(16384, 0),
  cursor_exec_path: text(''),
  cursor_exec_sandbox: text(''),
  copilot_exec_path: text(''),
  copilot_exec_home: text(''),
  copilot_exec_allow_all_tools: nullableFlag(),
  copilot_chat_optimizer_model: text(''),
  copilot_chat_target_model: text(''),
  copilot_chat_timeout: z.number().positive().nullable().default(null).describe('a number > 0 or null'),
  codex_trace_to_optimizer: flag(true),
  claude_trace_to_optimizer: z.boolean().optional().describe('true or false'),
  azure_endpoint: optionalText(),
  azure_api_version: optionalText(),
  azure_api_key: optionalText(),
  ...azureFields(''),
  ...azureFields('optimizer_'),
  ...azureFields('target_'),
  ...optionalRoleFields('', QWEN_OPTIONAL),
  qwen_chat_thinking_mode: text(''),
  ...optionalRoleFields('optimizer_', QWEN_OPTIONAL),
  optimizer_qwen_chat_thinking_mode: text(''),
  ...optionalRoleFields('target_', QWEN_OPTIONAL),
  target_qwen_chat_thinking_mode: text(''),
  minimax_region: text(''),
  minimax_base_url: text(''),
  minimax_api_key: text(''),
  minimax_model: text('MiniMax-M3'),
  minimax_temperature: loose('0.7'),
  minimax_max_tokens: loose('8000'),
  minimax_enable_thinking: loose('false'),
  ...optionalRoleFields('', OPENAI_COMPATIBLE_OPTIONAL),
  ...optionalRoleFields('optimizer_', OPENAI_COMPATIBLE_OPTIONAL),
  ...optionalRoleFields('target_', OPENAI_COMPATIBLE_OPTIONAL),
  // In the reference's default.yaml but never read there; kept so they survive into config.json.
  optimizer_minimax_base_url: text(''),
  target_minimax_base_url: text(''),
  optimizer_minimax_api_key: text(''),
  target_minimax_api_key: text(''),
  // Ours.
  optimizer_base_url: text(''),
  target_base_url: text(''),
  optimizer_temperature: z.number().min(0).nullable().default(null).describe('a number ≥ 0 or null'),
  target_temperature: num(0, 0),
  thinking_budget: int(0, 0),
  target_command: text(''),
  target_skill_name: nonEmpty('skill'),
  // Agent targets (claude_code_exec, codex_exec, copilot_exec, command): see the README's "Agent targets".
  // native: the skill sits where the CLI discovers skills and the prompt carries only the task;
  // pointer: the prompt also names the SKILL.md file.
  target_delivery: oneOf(['native', 'pointer'] as const, 'native'),
  // Parent environment variables passed to the agent beyond its preset's own credentials.
  target_env_passthrough: z.array(z.string().trim().min(1)).default([]).describe('a list of variable names'),
  // Folder for the per-task workspaces and homes; blank = <os temp>/skillopt-agents.
  target_workspace_root: text(''),
  // Keep each task's workspace after the run (for debugging an agent target).
  target_keep_workspaces: flag(false),
};

const trainFields = {
  num_epochs: int(4, 1),
  train_size: int(0, 0),
  batch_size: int(40, 1),
  accumulation: int(1, 1),
  seed: z.number().int().default(42).describe('an integer'),
};

const gradientFields = {
  minibatch_size: int(8, 1),
  merge_batch_size: int(8, 2),
  analyst_workers: int(16, 1),
  failure_only: flag(false),
  use_deep_reflect: flag(false),
  deep_reflect_failures: int(4, 0),
  deep_reflect_successes: int(2, 0),
  // Deep reflection runs when the most common failure pattern reaches this share of the batch.
  deep_reflect_threshold: z.number().min(0).max(1).default(0.25).describe('a number between 0 and 1'),
  deep_reflect_rounds: z.number().int().min(1).max(3).default(3).describe('an integer from 1 to 3'),
  deep_reflect_every_step: flag(false),
};

const optimizerFields = {
  learning_rate: int(4, 1),
  min_learning_rate: int(2, 1),
  lr_scheduler: oneOf(LR_SCHEDULERS, 'cosine'),
  lr_control_mode: oneOf(LR_CONTROL_MODES, 'fixed'),
  skill_update_mode: oneOf(UPDATE_MODES, 'patch'),
  meta_learning_rate: z.number().int().min(0).optional().describe('an integer ≥ 0'),
  use_slow_update: flag(true),
  slow_update_samples: int(20, 1),
  // The paper's setting (and issue #4): gate the slow update like any candidate. The reference defaults to false.
  slow_update_gate_with_selection: flag(true),
  longitudinal_pair_policy: oneOf(PAIR_POLICIES, 'mixed'),
  use_meta_skill: flag(true),
  use_skill_aware_reflection: flag(false),
  skill_aware_appendix_source: oneOf(['both', 'failure_only'] as const, 'both'),
  skill_aware_consolidate_threshold: int(0, 0),
  anchor_mode: oneOf(ANCHOR_MODES, 'strict'),
  decay_on_reject: flag(false),
  use_meta_reflect: flag(false),
};

const evaluationFields = {
  use_gate: flag(true),
  gate_metric: oneOf(GATE_METRICS, 'hard'),
  gate_mixed_weight: z.number().min(0).max(1).default(0.5).describe('a number between 0 and 1'),
  use_semantic_density: flag(false),
  semantic_density_weight: num(0.05, 0),
  // Absent = the gate's built-in list.
  leading_words: z.array(z.string()).optional().describe('a list of strings'),
  sel_env_num: int(0, 0),
  test_env_num: int(0, 0),
  eval_test: flag(true),
  patience: int(0, 0),
};

const SPLIT_RATIO = /^[1-9]\d*:[1-9]\d*:[1-9]\d*$/;

const envFields = {
  name: text(''),
  skill_init: text(''),
  out_root: text(''),
  split_mode: oneOf(SPLIT_MODES, 'ratio'),
  split_ratio: z
    .string()
    .trim()
    .regex(SPLIT_RATIO)
    .default('2:1:7')
    .describe('three positive integers "train:val:test", e.g. "2:1:7"'),
  split_seed: z.number().int().default(42).describe('an integer'),
  split_dir: text(''),
  data_path: text(''),
  split_output_dir: text(''),
  exec_timeout: positive(120),
  limit: int(0, 0),
  // Absent = limits.target_concurrency decides.
  workers: z.number().int().min(1).optional().describe('an integer ≥ 1'),
  max_turns: int(1, 1),
  max_completion_tokens: int(16384, 1),
  scorer: z
    .union([z.string().trim().min(1), z.looseObject({ type: z.string().trim().min(1) })])
    .default('normalized_exact')
    .describe('a scorer name such as normalized_exact, or a mapping {type: <name>, ...options}'),
  answer_tag: text('answer'),
  target_system_prompt: text(''),
};

const limitsFields = {
  optimizer_concurrency: int(16, 1),
  target_concurrency: int(32, 1),
  // Agent processes at once for an agent target (~300 MB each); 0 = from cores and memory.
  agent_concurrency: int(0, 0),
  provider_concurrency: z
    .record(z.string(), z.number().int().min(1))
    .default({})
    .describe('a mapping of provider name to an integer ≥ 1'),
  request_timeout_s: positive(300),
  max_retries: int(5, 0),
  max_tokens: int(0, 0),
  max_dollars: num(0, 0),
  max_wall_time_s: num(0, 0),
  /** Errored target items (auth, unreachable, crash…) above this share of a batch stop the run. */
  max_errored_share: z.number().min(0).max(1).default(0.5).describe('a share between 0 and 1'),
};

const cacheFields = {
  enabled: flag(true),
  dir: text(''),
  all_roles: flag(false),
};

const reviewFields = {
  mode: oneOf(REVIEW_MODES, 'auto'),
};

const priceSchema = z.strictObject({
  input_per_mtok: z.number().min(0).describe('a number ≥ 0 (dollars per million input tokens)'),
  output_per_mtok: z.number().min(0).describe('a number ≥ 0 (dollars per million output tokens)'),
});

/** Field schemas per section; `prices` is a map and has no fixed fields. */
export const SECTION_FIELDS = {
  model: modelFields,
  train: trainFields,
  gradient: gradientFields,
  optimizer: optimizerFields,
  evaluation: evaluationFields,
  env: envFields,
  limits: limitsFields,
  cache: cacheFields,
  review: reviewFields,
} as const;

export type FieldSection = keyof typeof SECTION_FIELDS;
export const SECTION_NAMES = [...(Object.keys(SECTION_FIELDS) as FieldSection[]), 'prices'] as const;
export type SectionName = FieldSection | 'prices';

export const configSchema = z.object({
  model: z.object(modelFields).prefault({}),
  train: z.object(trainFields).prefault({}),
  gradient: z.object(gradientFields).prefault({}),
  optimizer: z.object(optimizerFields).prefault({}),
  evaluation: z.object(evaluationFields).prefault({}),
  // Environment adapters read their own keys, so unknown env keys pass through untouched.
  env: z.looseObject(envFields).prefault({}),
  limits: z.object(limitsFields).prefault({}),
  cache: z.object(cacheFields).prefault({}),
  prices: z.record(z.string(), priceSchema).default({}),
  review: z.object(reviewFields).prefault({}),
});

export type SkillOptConfig = z.output<typeof configSchema>;

export function defaultConfig(): SkillOptConfig {
  return configSchema.parse({});
}

export function isSectionName(name: string): name is SectionName {
  return (SECTION_NAMES as readonly string[]).includes(name);
}

/** Schema of one `section.key` field, when the key is a declared field. */
export function fieldSchema(section: string, key: string): z.ZodType | undefined {
  if (!isSectionName(section) || section === 'prices') return undefined;
  const fields: Record<string, z.ZodType> = SECTION_FIELDS[section];
  return Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
}

/** Human description of what a config path accepts, for messages. */
export function describeExpected(path: readonly PropertyKey[]): string | undefined {
  const [section, key, third] = path.map(String);
  if (section === 'prices') {
    if (path.length === 1) return 'a mapping of model name to {input_per_mtok, output_per_mtok}';
    if (path.length === 2) return 'a mapping {input_per_mtok: <number>, output_per_mtok: <number>}';
    if (path.length === 3 && (third === 'input_per_mtok' || third === 'output_per_mtok')) {
      return 'a number ≥ 0 (dollars per million tokens)';
    }
    return undefined;
  }
  if (key === undefined) return isSectionName(section) ? 'a mapping of keys' : undefined;
  if (path.length === 2) return fieldSchema(section, key)?.description;
  if (path.length === 3 && section === 'limits' && key === 'provider_concurrency') return 'an integer ≥ 1';
  if (path.length === 3 && section === 'env' && key === 'scorer' && third === 'type')
    return 'a non-empty string';
  return undefined;
}

// ── warnings, problems, suggestions ──────────────────────────────────────────────────────────

/** Where a config value came from: a file and line, or a command-line source. */
export interface ConfigOrigin {
  /** File as the user wrote it, or `--cfg-options` / `--<flag>` for command-line values. */
  file: string;
  /** 1-based line, for values read from a file. */
  line?: number;
  /** Absolute directory of the file, used to resolve relative paths it sets. */
  dir?: string;
}

export interface ConfigWarning {
  message: string;
  file?: string;
  line?: number;
  key?: string;
}

export interface ConfigProblem {
  key: string;
  problem: string;
  fix: string;
  file?: string;
  line?: number;
}

export function formatConfigWarning(w: ConfigWarning): string {
  let where = w.file ?? '';
  if (w.file && w.line !== undefined) where += `:${w.line}`;
  if (w.key) where = where ? `${where} (${w.key})` : w.key;
  return where ? `${where}: ${w.message}` : w.message;
}

/** One error for all problems: the first is spelled out, the rest counted. */
export function problemsToError(problems: readonly ConfigProblem[]): SkillOptError {
  const [first] = problems;
  if (!first) return new SkillOptError('internal', 'problemsToError called without problems');
  const more = problems.length - 1;
  const suffix = more > 0 ? ` (and ${more} more problem${more === 1 ? '' : 's'})` : '';
  return new SkillOptError('config', first.problem + suffix, {
    file: first.file,
    line: first.line,
    key: first.key,
    fix: first.fix,
  });
}

export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** Closest candidate within a typo-sized distance, or undefined. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 4));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** Sections whose declared fields include `key`. */
function sectionsWithField(key: string): FieldSection[] {
  return (Object.keys(SECTION_FIELDS) as FieldSection[]).filter((s) => fieldSchema(s, key) !== undefined);
}

/** "did you mean" text for an unknown key in `section` (or at top level when section is undefined). */
export function suggestKey(
  key: string,
  section: string | undefined,
  flatNames?: ReadonlyMap<string, string>,
): string {
  const flatTwin = flatNames?.get(key);
  if (flatTwin && flatTwin !== `${section}.${key}`) return `; did you mean ${flatTwin}?`;
  const elsewhere = sectionsWithField(key).filter((s) => s !== section);
  if (elsewhere.length > 0) return `; did you mean ${elsewhere[0]}.${key}?`;
  if (section === undefined) {
    const near = closest(key, SECTION_NAMES);
    return near ? `; did you mean ${near}?` : '';
  }
  if (!isSectionName(section) || section === 'prices') return '';
  const near = closest(key, Object.keys(SECTION_FIELDS[section]));
  return near ? `; did you mean ${section}.${near}?` : '';
}

// ── validation ───────────────────────────────────────────────────────────────────────────────

export interface ValidateOptions {
  /** Where a dotted path was set; problems and warnings carry its file and line. */
  locate?: (path: readonly PropertyKey[]) => ConfigOrigin | undefined;
  /** File named by problems whose key has no recorded origin (a default value). */
  defaultFile?: string;
  /** Flat (config.json) name → dotted structured key, used for "did you mean" hints. */
  flatNames?: ReadonlyMap<string, string>;
}

export type ValidationResult =
  | { ok: true; config: SkillOptConfig; warnings: ConfigWarning[] }
  | { ok: false; problems: ConfigProblem[]; warnings: ConfigWarning[] };

type Dict = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null (empty)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return JSON.stringify(v);
}

function getPath(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const p of path) {
    if (!isPlainObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[p];
  }
  return node;
}

/**
 * Validate a structured (sectioned) config object: unknown keys become warnings, aliases are
 * normalised, then every wrong type or impossible value is collected as a problem. Nothing
 * throws; loadConfig turns problems into one SkillOptError.
 */
export function validateConfigObject(raw: unknown, options: ValidateOptions = {}): ValidationResult {
  const warnings: ConfigWarning[] = [];
  const problems: ConfigProblem[] = [];
  const place = (path: readonly PropertyKey[]): { file?: string; line?: number } => {
    const origin = options.locate?.(path);
    return origin ? { file: origin.file, line: origin.line } : { file: options.defaultFile };
  };
  const warn = (path: readonly PropertyKey[], message: string): void => {
    warnings.push({ message, key: path.map(String).join('.'), ...place(path) });
  };
  const fail = (path: readonly PropertyKey[], problem: string, fix: string): void => {
    problems.push({ key: path.map(String).join('.'), problem, fix, ...place(path) });
  };

  // A near-miss of a real key would leave the real one silently at its default, so a key we can name
  // a fix for stops the run before it spends anything; a key we know nothing about only warns.
  const unknown = (path: readonly PropertyKey[], what: string, hint: string): void => {
    if (hint) fail(path, `${what} would be ignored`, hint.replace(/^; /, ''));
    else warn(path, `${what} (ignored)`);
  };

  if (!isPlainObject(raw)) {
    fail(
      [],
      `the config must be a mapping of sections, got ${show(raw)}`,
      'write sections such as "train:" and "optimizer:" at the top level',
    );
    return { ok: false, problems, warnings };
  }
  const cfg = structuredClone(raw);

  for (const [top, value] of Object.entries(cfg)) {
    if (!isSectionName(top)) {
      unknown([top], `unknown section "${top}"`, suggestKey(top, undefined, options.flatNames));
      delete cfg[top];
      continue;
    }
    if (value === null || value === undefined) {
      cfg[top] = {};
      continue;
    }
    if (!isPlainObject(value)) {
      fail(
        [top],
        `section "${top}" must be a mapping, got ${show(value)}`,
        `write the ${top} keys indented under "${top}:"`,
      );
      delete cfg[top];
      continue;
    }
    if (top === 'env' || top === 'prices') continue;
    for (const key of Object.keys(value)) {
      if (top === 'gradient' && key === 'max_analyst_rounds') {
        warn(
          [top, key],
          'gradient.max_analyst_rounds was retired and is ignored (the analyst call count follows from the rollout results, minibatch_size and failure_only); remove it',
        );
        delete value[key];
      } else if (top === 'train' && key === 'steps_per_epoch') {
        warn(
          [top, key],
          'train.steps_per_epoch is ignored: steps per epoch are always derived as ceil(train_size / (batch_size × accumulation)); remove it',
        );
        delete value[key];
      } else if (fieldSchema(top, key) === undefined) {
        unknown(
          [top, key],
          `unknown key "${key}" in section ${top}`,
          suggestKey(key, top, options.flatNames),
        );
        delete value[key];
      }
    }
  }

  const optimizer = isPlainObject(cfg.optimizer) ? cfg.optimizer : undefined;
  for (const dotted of Object.keys(ALIASED_KEYS)) {
    const key = dotted.split('.')[1];
    const value = optimizer?.[key];
    if (typeof value !== 'string' || !optimizer) continue;
    const canonical = normalizeAlias(dotted, value);
    if (canonical === undefined) {
      const canonicalSet = new Set(Object.values(ALIASED_KEYS[dotted]));
      const canonicals = [...canonicalSet].join(', ');
      const spellings = Object.keys(ALIASED_KEYS[dotted])
        .filter((s) => !canonicalSet.has(s))
        .join(', ');
      fail(
        ['optimizer', key],
        `unknown ${key} ${JSON.stringify(value)}`,
        `use one of ${canonicals} (also accepted: ${spellings})`,
      );
      delete optimizer[key];
    } else {
      optimizer[key] = canonical;
    }
  }
  if (optimizer && optimizer.meta_learning_rate !== undefined) {
    warn(['optimizer', 'meta_learning_rate'], 'optimizer.meta_learning_rate has no effect; remove it');
  }

  // Cross-field rule checked on the raw values so it is reported even when other keys are wrong.
  // An unset min_learning_rate is only a default, so it follows a smaller learning_rate instead.
  const lr = optimizer?.learning_rate ?? optimizerFields.learning_rate.parse(undefined);
  const minLr = optimizer?.min_learning_rate;
  if (typeof lr === 'number' && Number.isInteger(lr) && lr >= 1) {
    if (minLr === undefined) {
      const fallback = optimizerFields.min_learning_rate.parse(undefined);
      if (fallback > lr) cfg.optimizer = { ...optimizer, min_learning_rate: lr };
    } else if (typeof minLr === 'number' && Number.isInteger(minLr) && minLr > lr) {
      fail(
        ['optimizer', 'min_learning_rate'],
        `min_learning_rate (${minLr}) is larger than learning_rate (${lr})`,
        'set optimizer.min_learning_rate to at most optimizer.learning_rate (the schedule decays from learning_rate down to min_learning_rate)',
      );
    }
  }

  const parsed = configSchema.safeParse(cfg);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.path;
      const key = path.map(String).join('.');
      const value = getPath(cfg, path);
      const expected = describeExpected(path);
      if (issue.code === 'unrecognized_keys') {
        fail(
          path,
          `unknown key(s) ${issue.keys.join(', ')}`,
          `remove them; ${key || 'this mapping'} accepts ${expected ?? 'other keys'}`,
        );
      } else if (value === undefined) {
        fail(path, 'is missing', `add ${key}: <${expected ?? 'a value'}>`);
      } else if (expected) {
        fail(path, `must be ${expected}, got ${show(value)}`, `set ${key} to ${expected}`);
      } else if (typeof path[path.length - 1] === 'number' && describeExpected(path.slice(0, -1))) {
        const listKey = path.slice(0, -1).map(String).join('.');
        const listExpected = describeExpected(path.slice(0, -1)) ?? '';
        fail(
          path,
          `entry ${String(path[path.length - 1])} is ${show(value)}, but the value must be ${listExpected}`,
          `set ${listKey} to ${listExpected}`,
        );
      } else {
        fail(path, `${issue.message}, got ${show(value)}`, `correct ${key}`);
      }
    }
    return { ok: false, problems, warnings };
  }
  if (problems.length > 0) return { ok: false, problems, warnings };

  const config = parsed.data;
  if (
    config.optimizer.skill_update_mode === 'full_rewrite_minibatch' &&
    config.optimizer.lr_control_mode !== 'none'
  ) {
    if (optimizer?.lr_control_mode !== undefined) {
      warn(
        ['optimizer', 'lr_control_mode'],
        `lr_control_mode "${config.optimizer.lr_control_mode}" does not apply to full_rewrite_minibatch (each step keeps one whole candidate); using "none"`,
      );
    }
    config.optimizer.lr_control_mode = 'none';
  }
  // Legacy azure_* names fill the azure_openai_* keys when those are blank (reference behaviour).
  const m = config.model;
  if (!m.azure_openai_endpoint && m.azure_endpoint) m.azure_openai_endpoint = m.azure_endpoint;
  if (!m.azure_openai_api_version && m.azure_api_version) m.azure_openai_api_version = m.azure_api_version;
  if (!m.azure_openai_api_key && m.azure_api_key) m.azure_openai_api_key = m.azure_api_key;
  return { ok: true, config, warnings };
}
