/**
 * The closed word lists of the product, defined once: gate actions and what they mean, review
 * modes, providers and their key variables, stage names, candidate origins, log levels and the
 * version. No zod, no Node, no `vscode`: the engine, protocol, CLI, extension and webview all
 * import this module, and the webview runs it in a browser.
 */

// ── version ──────────────────────────────────────────────────────────────────────────────────

declare const __SKILLOPT_VERSION__: string | undefined;

/** package.json's version, put in by esbuild (`define`) and by the test setup; never typed by hand. */
export const VERSION: string = typeof __SKILLOPT_VERSION__ === 'string' ? __SKILLOPT_VERSION__ : '0.0.0-dev';

/** What our run folders say wrote them (`runtime_state.json` `engine`, `summary.json` `version`). */
export const ENGINE_ID = 'skillopt-vscode';

// ── gate actions ─────────────────────────────────────────────────────────────────────────────

/**
 * What the selection gate decides about a candidate (reference §4.2). `inconclusive` is ours: the
 * paired gate (evaluation.gate_test: paired) could not tell the candidate from the current skill
 * beyond noise; the candidate is not kept.
 */
export const GATE_ACTIONS = ['accept_new_best', 'accept', 'reject', 'force_accept', 'inconclusive'] as const;
export type GateAction = (typeof GATE_ACTIONS)[number];

/** A step that produced no candidate. */
export const SKIP_ACTIONS = ['skip_no_patches', 'skip_no_rewrite'] as const;
export type SkipAction = (typeof SKIP_ACTIONS)[number];

/** The `action` of a history.json record. */
export type StepAction = GateAction | SkipAction;

/** Verdicts that are not a step's: the final check, a person's overrule, an epoch end without content. */
export const OTHER_VERDICTS = [
  'promote',
  'keep',
  'no_content',
  'inject_placeholder',
  'human_accept',
  'human_reject',
  'human_revert',
] as const;
export type OtherVerdict = (typeof OTHER_VERDICTS)[number];

/** Every action a `gate/verdict` event or a run file may carry. */
export type VerdictAction = StepAction | OtherVerdict;

const ACCEPTED: ReadonlySet<string> = new Set<VerdictAction>([
  'accept_new_best',
  'accept',
  'force_accept',
  'promote',
  'inject_placeholder',
  'human_accept',
]);

/** The candidate became the current skill (gate, force, final promotion or a person's accept). */
export function isAccepted(action: string): boolean {
  return ACCEPTED.has(action);
}

/** The step produced no candidate, or an epoch end / final check had nothing to change. */
export function isSkipped(action: string): boolean {
  return action.startsWith('skip_') || action === 'no_content' || action === 'keep';
}

/** The candidate was turned down (by the gate or by a person); an inconclusive verdict is not this. */
export function isRejected(action: string): boolean {
  return action === 'reject' || action === 'human_reject' || action === 'human_revert';
}

/** The paired gate could not tell the candidate from the current skill: not kept, not proven worse. */
export function isInconclusive(action: string): boolean {
  return action === 'inconclusive';
}

/** One word per action for tables, counts and icons. */
export type VerdictKind = 'accepted' | 'rejected' | 'inconclusive' | 'skipped';
export function verdictKind(action: string): VerdictKind {
  if (isAccepted(action)) return 'accepted';
  if (isSkipped(action)) return 'skipped';
  if (isInconclusive(action)) return 'inconclusive';
  return 'rejected';
}

/**
 * Whether a gate action makes the candidate the new best: a gated new best, or a force-accept
 * (use_gate: false) that beats the best strictly.
 */
export function becomesBest(action: string, candidate: number, best: number): boolean {
  return action === 'accept_new_best' || (action === 'force_accept' && candidate > best);
}

/** Epoch-end results that are not gate actions (the slow update's and meta skill's `action` fields). */
export const EPOCH_END_ACTIONS = [
  'no_content',
  'no_candidate',
  'inject_placeholder',
  'skip_first_epoch',
  'skip_last_epoch',
  'write_meta_skill',
] as const;
export type EpochEndAction = (typeof EPOCH_END_ACTIONS)[number];

/** evaluation.gate_test: the reference's strict comparison of means, or a paired test on per-item deltas. */
export const GATE_TESTS = ['strict', 'paired'] as const;
export type GateTestKind = (typeof GATE_TESTS)[number];
/** evaluation.on_inconclusive: what a paired gate does when the difference is within noise. */
export const ON_INCONCLUSIVE = ['reject', 'more_repeats', 'ask'] as const;
export type OnInconclusive = (typeof ON_INCONCLUSIVE)[number];
/** What the paired gate's test says (history.json `gate_test.verdict`); the gate action follows from it. */
export const GATE_TEST_VERDICTS = ['accept', 'reject', 'inconclusive'] as const;
export type GateTestVerdict = (typeof GATE_TEST_VERDICTS)[number];

// ── candidates ───────────────────────────────────────────────────────────────────────────────

/** Where a candidate skill came from. */
export const CANDIDATE_ORIGINS = ['step', 'slow_update', 'meta_reflect'] as const;
export type CandidateOrigin = (typeof CANDIDATE_ORIGINS)[number];

/** Who decided a verdict: a candidate's own gate, the final selection check, or a person. */
export type VerdictOrigin = CandidateOrigin | 'final' | 'human';

// ── step names ───────────────────────────────────────────────────────────────────────────────

/** A step's name (the reference's spelling): its folder (`steps/step_0003`) and its skill's origin label. */
export function stepName(step: number): string {
  return `step_${String(step).padStart(4, '0')}`;
}

/** `step_0007` back to 7; undefined for any other name. */
export function parseStepName(name: string): number | undefined {
  const m = /^step_(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The current skill's origin after a person's accept (`human_step_0004`) or revert (`human_revert_step_0004`) of a step. */
export const HUMAN_ORIGIN_PREFIX = { accept: 'human_', revert: 'human_revert_' } as const;

// ── review ───────────────────────────────────────────────────────────────────────────────────

/**
 * When the person is asked:
 * - `auto`: never; the gate decides and the person may overrule a finished step afterwards;
 * - `gate-then-human`: after the gate accepts a candidate, before it becomes current;
 * - `human-first`: before the gate; only the edits the person keeps are evaluated.
 */
export const REVIEW_MODES = ['auto', 'gate-then-human', 'human-first'] as const;
export type ReviewMode = (typeof REVIEW_MODES)[number];

/** For values from settings, run folders and command arguments. */
export function isReviewMode(v: unknown): v is ReviewMode {
  return typeof v === 'string' && (REVIEW_MODES as readonly string[]).includes(v);
}

export const REVIEW_PHASES = ['before_gate', 'after_gate'] as const;
export type ReviewPhase = (typeof REVIEW_PHASES)[number];

export const REVIEW_DECISIONS = ['human_accept', 'human_reject', 'human_pruned', 'human_kept_all'] as const;
export type ReviewDecisionKind = (typeof REVIEW_DECISIONS)[number];

/** A person's answer on a whole candidate (`review/decide`'s `candidate`); not a gate action. */
export const CANDIDATE_DECISIONS = ['accept', 'reject'] as const;
export type CandidateDecision = (typeof CANDIDATE_DECISIONS)[number];

/** A person's overrule of a finished step (`human_decisions.json`'s `decision`); not a gate action. */
export const OVERRULE_DECISIONS = ['accept', 'revert'] as const;
export type OverruleDecision = (typeof OVERRULE_DECISIONS)[number];

// ── providers ────────────────────────────────────────────────────────────────────────────────

/**
 * What cancelling a recorded provider batch found (`--cancel-batch`, Cancel Provider Batch):
 * `cancelled`: asked to stop now; `ended`: it had already ended (nothing to cancel); `no_id`: the
 * process that sent it stopped before its id was written (the next run finds it); `other_provider`:
 * sent through another provider than the config's target, which cannot cancel it.
 */
export const BATCH_CANCEL_OUTCOMES = ['cancelled', 'ended', 'no_id', 'other_provider'] as const;
export type BatchCancelOutcome = (typeof BATCH_CANCEL_OUTCOMES)[number];

/** The transports this port has. */
export const BACKEND_KINDS = ['openai', 'azure_openai', 'anthropic', 'vscode-lm', 'command', 'sim'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** `model.target_backend` values that run a real agent CLI (the reference's names); cursor_exec is refused. */
export const AGENT_TARGET_BACKENDS = ['claude_code_exec', 'codex_exec', 'copilot_exec'] as const;
export type AgentTargetBackend = (typeof AGENT_TARGET_BACKENDS)[number];

/** Providers that take an API key, and the environment variable each falls back to. */
export const API_KEY_ENV_VARS = {
  openai: 'OPENAI_API_KEY',
  azure_openai: 'AZURE_OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
} as const;
export type KeyProvider = keyof typeof API_KEY_ENV_VARS;
export const KEY_PROVIDERS = Object.keys(API_KEY_ENV_VARS) as KeyProvider[];

// ── target errors ────────────────────────────────────────────────────────────────────────────

/**
 * Why a target could not answer (after its retries). An errored item is not a wrong answer: it is
 * kept out of scores, the gate and reflection, counted, and stops the run when it dominates.
 */
export const TARGET_ERROR_KINDS = [
  'auth',
  'not_found',
  'rate_limit',
  'server',
  'context_limit',
  'bad_request',
  'timeout',
  'unreachable',
  'not_an_api',
  'bad_reply',
  'api',
  'not_installed',
  'crash',
  'other',
] as const;
export type TargetErrorKind = (typeof TARGET_ERROR_KINDS)[number];

/** One phrase per kind, for messages and the report. */
export const TARGET_ERROR_LABELS: Record<TargetErrorKind, string> = {
  auth: 'not authorised (check the key)',
  not_found: 'model or endpoint not found',
  rate_limit: 'rate-limited',
  server: 'provider error (5xx)',
  context_limit: 'prompt over the model’s context limit',
  bad_request: 'request refused (4xx)',
  timeout: 'timed out',
  unreachable: 'server unreachable',
  not_an_api: 'not an API at the base URL',
  bad_reply: 'unusable reply',
  api: 'the agent’s provider failed',
  not_installed: 'program not installed',
  crash: 'crashed',
  other: 'failed',
};

// ── stages ───────────────────────────────────────────────────────────────────────────────────

export const STAGE_NAMES = [
  'baseline',
  'rollout',
  'reflect',
  'deep_reflect',
  'meta_reflect',
  'aggregate',
  'select',
  'update',
  'evaluate',
  'slow_update',
  'meta_skill',
  'activation',
  'appendix',
  'final_selection',
  'review',
  'test',
] as const;
export type StageName = (typeof STAGE_NAMES)[number];

// ── logging ──────────────────────────────────────────────────────────────────────────────────

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// ── stop reasons ─────────────────────────────────────────────────────────────────────────────

/** The `run/stopped` reason when the person (Ctrl-C, Stop) asked for it, as opposed to a cap. */
export const STOPPED_BY_REQUEST = 'stopped by request';
