/**
 * What happens to every key of the reference SkillOpt's config (skillopt-reference.md §7.2, and the
 * keys of its shipped configs/<env>/default.yaml): honoured, mapped with a one-line notice, or
 * refused by `validate` with the key, the reason and the alternative. Never silently ignored;
 * test/unit/config/disposition.test.ts fails on a reference key missing here.
 */

export type Disposition =
  | { kind: 'honoured' }
  /** Read differently here: the notice is shown whenever the key is set to a value `applies` accepts. */
  | { kind: 'mapped'; notice: string; applies?: (value: unknown) => boolean; drop?: boolean }
  /**
   * Not supported: refused when set to a value that would do something (`inert` says which values
   * are harmless, e.g. the reference default that switches the feature off).
   */
  | { kind: 'refused'; reason: string; alternative: string; inert: (value: unknown) => boolean };

const honoured: Disposition = { kind: 'honoured' };
const blank = (v: unknown): boolean => v === undefined || v === null || v === '' || v === false;
const refused = (
  reason: string,
  alternative: string,
  inert: (v: unknown) => boolean = blank,
): Disposition => ({
  kind: 'refused',
  reason,
  alternative,
  inert,
});
const mapped = (
  notice: string,
  extra: Omit<Extract<Disposition, { kind: 'mapped' }>, 'kind' | 'notice'> = {},
) => ({ kind: 'mapped', notice, ...extra }) as Disposition;
/** A key read only by a refused benchmark adapter: refused through env.name, harmless otherwise. */
const benchmarkKey = (bench: string): Disposition =>
  refused(
    `is read by the reference's ${bench} adapter`,
    `it takes effect only with env.name: ${bench}, which a run refuses before any call (it needs a simulator or code execution; use an agent target)`,
    () => true,
  );

const ROLES = ['', 'optimizer_', 'target_'] as const;
const each = (names: readonly string[], d: Disposition): Record<string, Disposition> =>
  Object.fromEntries(names.map((n) => [n, d]));
const azure = ['endpoint', 'api_version', 'api_key', 'auth_mode', 'ad_scope', 'managed_identity_client_id'];
const qwen = [
  'base_url',
  'api_key',
  'temperature',
  'timeout_seconds',
  'max_tokens',
  'enable_thinking',
  'thinking_mode',
];

export const DISPOSITIONS: Readonly<Record<string, Disposition>> = {
  // ── model ──
  'model.backend': honoured,
  'model.optimizer': honoured,
  'model.target': honoured,
  'model.optimizer_backend': honoured,
  'model.target_backend': honoured,
  'model.reasoning_effort': honoured,
  'model.rewrite_reasoning_effort': refused(
    'has no separate rewrite effort here',
    'leave it blank; model.reasoning_effort applies to every optimizer call, the rewrite included',
  ),
  'model.rewrite_max_completion_tokens': honoured,
  ...each(
    ['path', 'sandbox', 'profile', 'reasoning_effort', 'approval_policy', 'network_access', 'web_search'].map(
      (k) => `model.codex_exec_${k}`,
    ),
    honoured,
  ),
  // true is refused when the agent target is built (llm/agents/fromConfig.ts): agent targets run the CLI.
  'model.codex_exec_use_sdk': honoured,
  'model.claude_code_exec_use_sdk': honoured,
  'model.codex_exec_full_auto': mapped(
    'codex_exec_full_auto is retired (as in the reference) and has no effect; use codex_exec_sandbox and codex_exec_approval_policy',
    {
      applies: (v) => v !== undefined,
    },
  ),
  'model.claude_code_exec_path': honoured,
  // A profile is refused when the Claude Code target is built (llm/agents/fromConfig.ts): the CLI has none.
  'model.claude_code_exec_profile': honoured,
  'model.claude_code_exec_effort': honoured,
  'model.claude_code_exec_max_thinking_tokens': honoured,
  'model.cursor_exec_path': refused(
    "is for Cursor's agent CLI, which is not a preset here",
    'set model.target_backend: command with model.target_command (e.g. "cursor-agent -p {prompt}")',
  ),
  'model.cursor_exec_sandbox': refused(
    "is for Cursor's agent CLI, which is not a preset here",
    'set model.target_backend: command with model.target_command; the workspace is isolated per task',
  ),
  'model.copilot_exec_path': honoured,
  // Refused when the Copilot target is built (llm/agents/fromConfig.ts): a shared home would leak your sessions.
  'model.copilot_exec_home': honoured,
  'model.copilot_exec_allow_all_tools': honoured,
  'model.copilot_chat_optimizer_model': refused(
    "is the Copilot CLI's model; copilot_chat runs through VS Code's language models here",
    'set model.optimizer to the language model name',
  ),
  'model.copilot_chat_target_model': refused(
    "is the Copilot CLI's model; copilot_chat runs through VS Code's language models here",
    'set model.target to the language model name',
  ),
  'model.copilot_chat_timeout': refused(
    'is a Copilot CLI timeout; copilot_chat runs through VS Code here',
    'use limits.request_timeout_s',
  ),
  'model.codex_trace_to_optimizer': refused(
    'cannot leave the agent run out of the trajectories here',
    'remove it (the analysts see each task’s agent run summary)',
    (v) => v !== false,
  ),
  'model.claude_trace_to_optimizer': refused(
    'cannot leave the agent run out of the trajectories here',
    'remove it (the analysts see each task’s agent run summary)',
    (v) => v !== false,
  ),
  ...each(
    ROLES.flatMap((r) => azure.map((k) => `model.${r}azure_openai_${k}`)),
    honoured,
  ),
  ...each(
    ['model.azure_endpoint', 'model.azure_api_version', 'model.azure_api_key'],
    mapped(
      'is the legacy spelling: it fills the azure_openai_* key of the same name when that is blank; rename it',
    ),
  ),
  ...each(
    ROLES.flatMap((r) => qwen.map((k) => `model.${r}qwen_chat_${k}`)),
    honoured,
  ),
  ...each(
    ['region', 'base_url', 'api_key', 'model', 'temperature', 'max_tokens', 'enable_thinking'].map(
      (k) => `model.minimax_${k}`,
    ),
    honoured,
  ),
  ...each(
    ['optimizer_', 'target_'].flatMap((r) => [`model.${r}minimax_base_url`, `model.${r}minimax_api_key`]),
    refused(
      'is never read (the reference drops it too): MiniMax settings are shared by both roles',
      'use model.minimax_base_url / model.minimax_api_key (or MINIMAX_API_KEY)',
    ),
  ),
  // ── train ──
  ...each(
    ['num_epochs', 'train_size', 'batch_size', 'accumulation', 'seed'].map((k) => `train.${k}`),
    honoured,
  ),
  'train.steps_per_epoch': mapped(
    'train.steps_per_epoch is ignored: steps per epoch are always derived as ceil(train_size / (batch_size × accumulation)); remove it',
    { drop: true },
  ),
  // ── gradient ──
  ...each(
    ['minibatch_size', 'merge_batch_size', 'analyst_workers', 'failure_only'].map((k) => `gradient.${k}`),
    honoured,
  ),
  'gradient.max_analyst_rounds': mapped(
    'gradient.max_analyst_rounds was retired and is ignored (the analyst call count follows from the rollout results, minibatch_size and failure_only); remove it',
    { drop: true },
  ),
  // ── optimizer ──
  ...each(
    [
      'learning_rate',
      'min_learning_rate',
      'lr_scheduler',
      'lr_control_mode',
      'skill_update_mode',
      'use_slow_update',
      'slow_update_samples',
      'slow_update_gate_with_selection',
      'longitudinal_pair_policy',
      'use_meta_skill',
    ].map((k) => `optimizer.${k}`),
    honoured,
  ),
  'optimizer.meta_learning_rate': mapped('optimizer.meta_learning_rate has no effect; remove it'),
  // Skill-aware reflection (train/step/appendix.ts); appendix options set while it is off warn (validate.ts).
  'optimizer.use_skill_aware_reflection': honoured,
  // Ours: applies when env.skill_init names a skill folder (skill/package/policy.ts).
  'optimizer.package_edits': honoured,
  'optimizer.skill_aware_appendix_source': honoured,
  'optimizer.skill_aware_consolidate_threshold': honoured,
  // ── evaluation ──
  ...each(
    [
      'use_gate',
      'sel_env_num',
      'test_env_num',
      'eval_test',
      'gate_metric',
      'gate_mixed_weight',
      'use_semantic_density',
      'semantic_density_weight',
      'leading_words',
    ].map((k) => `evaluation.${k}`),
    honoured,
  ),
  'evaluation.repeats': honoured,
  // ── env ──
  // Benchmarks that need a simulator or code execution are refused by data/benchmarks.ts, naming
  // what each needs and the agent targets, before any spending.
  'env.name': honoured,
  ...each(
    [
      'skill_init',
      'split_mode',
      'split_seed',
      'split_dir',
      'data_path',
      'split_output_dir',
      'exec_timeout',
      'out_root',
      'split_ratio',
      'limit',
      'max_completion_tokens',
    ].map((k) => `env.${k}`),
    honoured,
  ),
  // The reference's rollout workers: concurrent target calls, capped with limits.target_concurrency
  // (llm/limiter.ts targetConcurrencyOf).
  'env.workers': honoured,
  // Above 1: the reference's refinement turns for a chat target (train/turns/fromConfig.ts), a notice
  // for an agent target (modelNotices.ts).
  'env.max_turns': honoured,
  // Read by the DocVQA and LiveMathematicianBench loaders (data/benchmarks.ts).
  ...each(['env.image_detail', 'env.shuffle_choices', 'env.use_theorem', 'env.use_sketch'], honoured),
  // OfficeQA (data/officeqa/env.ts): the document folders, the tool loop and offline search; the
  // web-search modes are refused there, naming env.search_mode.
  ...each(
    ['env.data_dirs', 'env.docs_dirs', 'env.max_tool_turns', 'env.use_local_tools', 'env.search_mode'],
    honoured,
  ),
  // Read only by search_mode custom (refused): offline has no use for them, in the reference too;
  // set to other than the reference config's values, a notice says so (data/officeqa/env.ts).
  ...each(
    [
      'env.max_queries_per_turn',
      'env.search_api_url',
      'env.search_auth_env',
      'env.search_max_num_results',
      'env.search_provider',
      'env.search_timeout_seconds',
    ],
    honoured,
  ),
  ...each(['env.data_root', 'env.mode'], benchmarkKey('spreadsheetbench')),
  ...each(['env.max_steps', 'env.max_api_workers'], benchmarkKey('alfworld')),
};

/** The disposition of `section.key`, when the key is one of the reference's. */
export function dispositionOf(dotted: string): Disposition | undefined {
  return Object.prototype.hasOwnProperty.call(DISPOSITIONS, dotted) ? DISPOSITIONS[dotted] : undefined;
}
