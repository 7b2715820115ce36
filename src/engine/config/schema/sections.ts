import { z } from 'zod';
import { REVIEW_MODES } from '../../../protocol/vocabulary';
import { SKILL_DIR_NAME, SKILL_DIR_NAME_RULE } from '../../skill/dirName';
import { DESCRIPTION_BUDGETS, DESCRIPTION_MAX_CHARS } from '../../skill/lint';
import {
  ANCHOR_MODES,
  BATCH_API_MODES,
  CLAUDE_CODE_EFFORTS,
  CODEX_APPROVAL_POLICIES,
  CODEX_REASONING_EFFORTS,
  CODEX_SANDBOXES,
  GATE_METRICS,
  GATE_TESTS,
  LR_CONTROL_MODES,
  LR_SCHEDULERS,
  ON_INCONCLUSIVE,
  OPENAI_APIS,
  PAIR_POLICIES,
  REASONING_EFFORTS,
  UPDATE_MODES,
} from './enums';
export { envFields } from './envFields';
import {
  blankOr,
  flag,
  int,
  loose,
  nonEmpty,
  nullableFlag,
  num,
  oneOf,
  optionalLoose,
  optionalText,
  positive,
  text,
} from './fields';

/**
 * The fields of each config section: type, default and description. Field order matters: flat.ts
 * derives the flat config.json key order from it, and the reference keys come first in the
 * reference's order.
 */

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

export const modelFields = {
  backend: text('azure_openai'),
  optimizer: text('gpt-5.5'),
  target: text('gpt-5.5'),
  // Backend names are mapped by the model layer; here they only have to be present.
  optimizer_backend: nonEmpty('openai_chat'),
  target_backend: nonEmpty('openai_chat'),
  reasoning_effort: blankOr(REASONING_EFFORTS, 'medium'),
  rewrite_reasoning_effort: text(''),
  rewrite_max_completion_tokens: int(64000, 1),
  codex_exec_path: text(''),
  codex_exec_sandbox: blankOr(CODEX_SANDBOXES, ''),
  codex_exec_profile: text(''),
  codex_exec_full_auto: optionalLoose(),
  codex_exec_reasoning_effort: blankOr(CODEX_REASONING_EFFORTS, ''),
  codex_exec_use_sdk: loose(null),
  codex_exec_network_access: nullableFlag(),
  codex_exec_web_search: nullableFlag(),
  codex_exec_approval_policy: blankOr(CODEX_APPROVAL_POLICIES, ''),
  // Empty, like the other agents' paths: then CLAUDE_CODE_EXEC_PATH, then `claude` on PATH (presetProgram).
  claude_code_exec_path: text(''),
  claude_code_exec_profile: text(''),
  claude_code_exec_use_sdk: loose('auto'),
  claude_code_exec_effort: blankOr(CLAUDE_CODE_EFFORTS, 'medium'),
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
  // The agent's skill folder name: checked here so a bad one stops before any call (skill/dirName.ts).
  target_skill_name: z.string().trim().regex(SKILL_DIR_NAME).default('skill').describe(SKILL_DIR_NAME_RULE),
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
  // The OpenAI-compatible server at target_base_url implements OpenAI's Batch API (files + batches).
  target_supports_batch: flag(false),
  // Provider prompt caching (README "Prompt caching"): Anthropic cache_control breakpoints and
  // OpenAI's prompt_cache_key. prompt_cache_key: auto sends it to OpenAI's own API only; on also
  // to Azure and OpenAI-compatible servers (which may refuse unknown fields); off never.
  prompt_caching: flag(true),
  prompt_cache_key: oneOf(['auto', 'on', 'off'] as const, 'auto'),
  // OpenAI and Azure OpenAI: Chat Completions, or the Responses API. auto uses Responses for the
  // models that serve only it (gpt-5.x-codex, codex-mini, the -pro models), as the reference does.
  openai_api: oneOf(OPENAI_APIS, 'auto'),
};

export const trainFields = {
  num_epochs: int(4, 1),
  train_size: int(0, 0),
  batch_size: int(40, 1),
  accumulation: int(1, 1),
  seed: z.number().int().default(42).describe('an integer'),
};

export const gradientFields = {
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

export const optimizerFields = {
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
  // Ours: what the optimizer may change in a skill folder (env.skill_init naming a folder).
  package_edits: z
    .object({
      editable: z.array(z.string().min(1)).default(['SKILL.md', 'references/**']),
      read_only: z.array(z.string().min(1)).default([]),
      max_files: z.number().int().min(1).default(50),
      max_file_bytes: z.number().int().min(1).max(131_072).default(32_768),
    })
    .strict()
    .prefault({})
    .describe(
      'editable: [globs], read_only: [globs], max_files: integer ≥ 1 (the files of the skill folder, SKILL.md included), max_file_bytes: integer from 1 to 131072',
    ),
};

export const evaluationFields = {
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
  // Ours. At the end, also score the target with no skill at all on the selection and test splits
  // (does the skill help?): one more evaluation of each. On by default, so every report answers it.
  no_skill_baseline: flag(true),
  patience: int(0, 0),
  // Ours. Provider batch APIs (half price, slower): `final` = the final test evaluation and
  // `skillopt eval`; `selection` = every selection evaluation too. See the README's "Batch APIs".
  batch_api: oneOf(BATCH_API_MODES, 'off'),
  batch_poll_s: positive(30),
  // Ours: samples per selection item (each a paid call, cached on its own); the item scores their mean.
  repeats: int(1, 1),
  // Ours: strict = the reference's rule; paired = an exact test on per-item deltas at `alpha`.
  gate_test: oneOf(GATE_TESTS, 'strict'),
  // Below 0.5: the test's interval is at level 1 − 2·alpha, none from 0.5 on.
  alpha: z.number().gt(0).lt(0.5).default(0.05).describe('a number between 0 and 0.5 (exclusive)'),
  on_inconclusive: oneOf(ON_INCONCLUSIVE, 'reject'),
  // Ours: the cap of on_inconclusive: more_repeats (0 = no cap set).
  max_repeats: int(0, 0),
  // Ours: the model that grades natural-language expectations of the user's eval files (skill-creator
  // `expectations`, promptfoo `llm-rubric`), on the optimizer's backend; blank = the optimizer model.
  judge_model: text(''),
  // Ours: reject a candidate that breaks more than this many items the current skill passes (absent = off).
  max_item_regressions: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('an integer ≥ 0 (absent = no per-item rule)'),
  // Ours: stop a selection evaluation once the items left cannot change the gate's verdict (README "Speed").
  early_stop: flag(false),
};

export const limitsFields = {
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

export const cacheFields = {
  enabled: flag(true),
  dir: text(''),
  all_roles: flag(false),
};

// Ours (README "Speed"): scheduling that never changes a decision.
export const speedFields = {
  // Start the next step's rollouts under the current skill while the gate scores a candidate.
  speculate: flag(false),
};

export const reviewFields = {
  mode: oneOf(REVIEW_MODES, 'auto'),
};

// Ours: the activation track (README "Activation track"): the description trained on trigger queries.
export const activationFields = {
  enabled: flag(false),
  // A JSON array or JSONL of {query, should_trigger} (skill-creator's trigger-eval shape); '' = the
  // tasks that carry `should_trigger`.
  trigger_file: text(''),
  // Share of the trigger queries the optimizer sees; the rest is held out for the gate (60/40).
  train_share: z.number().gt(0).lt(1).default(0.6).describe('a share between 0 and 1 (exclusive)'),
  // Runs per query (each a paid agent run); the query scores the share of its runs that were right.
  repeats: int(3, 1),
  max_description_chars: z
    .number()
    .int()
    .min(1)
    .max(DESCRIPTION_MAX_CHARS)
    .default(DESCRIPTION_MAX_CHARS)
    .describe(`an integer between 1 and ${DESCRIPTION_MAX_CHARS} (hosts refuse longer descriptions)`),
  // The host's budget for all skills' descriptions together (Claude Code ~15,000 characters,
  // Codex ~8,000): the chat targets' skill listing is cut there, as the host cuts it.
  host_budget_chars: int(Math.max(...DESCRIPTION_BUDGETS.map((b) => b.chars)), 1),
};

export const priceSchema = z.strictObject({
  input_per_mtok: z.number().min(0).describe('a number ≥ 0 (dollars per million input tokens)'),
  output_per_mtok: z.number().min(0).describe('a number ≥ 0 (dollars per million output tokens)'),
  cached_input_per_mtok: z
    .number()
    .min(0)
    .optional()
    .describe('a number ≥ 0 (dollars per million input tokens read from the prompt cache)'),
  cache_write_per_mtok: z
    .number()
    .min(0)
    .optional()
    .describe('a number ≥ 0 (dollars per million input tokens written to the prompt cache)'),
});
