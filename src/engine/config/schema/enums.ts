/**
 * The config's enumerated values and the other spellings the reference accepts for some of them;
 * aliases are normalised before validation (validate.ts).
 */

export const UPDATE_MODES = ['patch', 'rewrite_from_suggestions', 'full_rewrite_minibatch'] as const;
export const LR_CONTROL_MODES = ['fixed', 'autonomous', 'none'] as const;
export const PAIR_POLICIES = ['mixed', 'changed', 'unchanged'] as const;
export const LR_SCHEDULERS = ['constant', 'linear', 'cosine', 'autonomous'] as const;
export const GATE_METRICS = ['hard', 'soft', 'mixed'] as const;
export const SPLIT_MODES = ['ratio', 'split_dir'] as const;
export const ANCHOR_MODES = ['strict', 'reference'] as const;
/** Which target evaluations go through the provider's batch API (half price, answers within 24 h). */
export const BATCH_API_MODES = ['off', 'final', 'selection'] as const;
// evaluation.gate_test and on_inconclusive: defined with the gate's other words.
export { GATE_TESTS, ON_INCONCLUSIVE } from '../../../protocol/vocabulary';
/**
 * Values the agent CLIs take for the reference's *_exec_* keys (blank = the CLI's default): Codex's
 * `--sandbox` and `approval_policy` (its config.toml enum without the table-only `granular`), and
 * Claude Code's `--effort`, which the CLI would otherwise accept and ignore.
 */
export const CODEX_SANDBOXES = ['read-only', 'workspace-write', 'danger-full-access'] as const;
export const CODEX_APPROVAL_POLICIES = ['untrusted', 'on-failure', 'on-request', 'never'] as const;
export const CLAUDE_CODE_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
/** model.reasoning_effort: the reference's `--reasoning_effort` choices (blank = none sent). */
export const REASONING_EFFORTS = CLAUDE_CODE_EFFORTS;
/**
 * model.codex_exec_reasoning_effort: what OpenAI's reasoning models take; `none` is the reference's
 * default, which sends no effort (Codex passes any other text on, and the API refuses it per task).
 */
export const CODEX_REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
/** model.openai_api: which OpenAI API the openai and azure_openai backends call (llm/openaiResponses.ts). */
export const OPENAI_APIS = ['auto', 'chat_completions', 'responses'] as const;
export type OpenAiApi = (typeof OPENAI_APIS)[number];

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
