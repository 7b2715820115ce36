/** Shapes written to the run folder; field names follow the reference so its users recognise them. */
import type {
  GateTestKind,
  GateTestVerdict,
  ReviewDecisionKind,
  ReviewMode,
  StepAction,
  TargetErrorKind,
} from './vocabulary';

/** One scored target attempt (a row of `results.jsonl`). */
export interface RolloutResult {
  id: string;
  hard: number;
  soft: number;
  fail_reason?: string;
  task_type?: string;
  task_description: string;
  predicted_answer: string;
  expected: string[];
  n_turns: number;
  /**
   * The target's full reply; trajectories shown to the optimizer carry a bounded excerpt. Left out
   * of a `results.jsonl` row when `response_in` names the conversation file that holds it.
   */
  response: string;
  /** A long reply's conversation file, relative to the rollout folder (the row then has no `response`). */
  response_in?: string;
  /** The length of that reply, checked when it is read back. */
  response_chars?: number;
  /**
   * Set when the target could not answer (after its retries). Such an item is *errored*, not
   * failed: it has no score (hard/soft stay 0 only for the file's shape) and is kept out of means,
   * the gate, reflection and every failure list. A resumed run asks again.
   */
  outcome?: 'errored';
  error?: string;
  error_kind?: TargetErrorKind;
  cached?: boolean;
  /** Set for agent-harness targets (`command` backend): how the agent's process ended. */
  agent_run?: AgentRun;
  /**
   * A chat target that took more than one call (OfficeQA's document tools, refinement turns): each
   * turn's reply and each function call with what it returned, bounded, for the analysts.
   */
  steps?: TurnStep[];
}

/** A row of `results.jsonl` as written: a long reply lives in its conversation file (`response_in`). */
export type RolloutRow = Omit<RolloutResult, 'response'> & { response?: string };

/** One turn of a multi-turn chat target: a reply, or a function call (`cmd`) and its observation. */
export interface TurnStep {
  turn: number;
  reply?: string;
  cmd?: string;
  obs?: string;
}

/** An agent CLI's run for one task, as the `command` backend reports it. */
export interface AgentRun {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  duration_ms: number;
  /** Head and tail of stderr, bounded like every trajectory text. */
  stderr: string;
  /** From the CLI's machine-readable events: whether the agent opened the skill (absent for plain text). */
  skill_loaded?: boolean;
  /** Tool calls in order (name and a short detail), and model turns. */
  tool_calls?: Array<{ name: string; detail?: string }>;
  turns?: number;
}

export interface ConversationRecord {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** The model call this message belongs to, when an item took several. */
  turn?: number;
}

/** A function call in `conversation.json`, in the reference's shape (`type`, `cmd`, `obs`). */
export interface ToolCallRecord {
  type: 'tool_call';
  turn: number;
  cmd: string;
  obs: string;
}

export interface Score {
  hard: number;
  soft: number;
}

/** The test split read with its uncertainty (summary.json `test_check`, report.md). */
export interface TestCheck {
  /** 1 − evaluation.alpha. */
  level: number;
  /** Wilson intervals of each skill's hard test score. */
  intervals: { initial?: [number, number]; best?: [number, number]; final?: [number, number] };
  /** best − initial on the test items both answered, with a paired bootstrap interval. */
  best_vs_initial?: { n: number; mean_delta: number; interval: [number, number] };
  /** best − initial on the selection split (what the gate saw). */
  selection_gain: number;
  /** `not_confirmed`: a selection gain whose test interval does not exclude 0 (overfitting?). */
  verdict: 'confirmed' | 'not_confirmed' | 'no_gain';
}

/**
 * Ours: the paired gate's test of a candidate against the current skill on the same selection
 * items (evaluation.gate_test: paired). Deltas are candidate − current, per item, on the gate metric.
 */
export interface GateTestRecord {
  /** `sign`: exact sign test (McNemar) on 0–1 scores; `permutation`: sign-flip permutation test. */
  test: 'sign' | 'permutation';
  /** Items scored under both skills. */
  n: number;
  /** Samples per item (evaluation.repeats, or more after on_inconclusive: more_repeats). */
  repeats: number;
  improved: number;
  regressed: number;
  mean_delta: number;
  /** One-sided p-value of "the candidate is better". */
  p_value: number;
  /** false: the p-value is a seeded Monte Carlo estimate (many items with fractional scores). */
  exact: boolean;
  alpha: number;
  /** The two-sided (1 − alpha) bootstrap interval of the mean delta. */
  ci_low: number;
  ci_high: number;
  verdict: GateTestVerdict;
}

/**
 * Ours: selection items the current skill passes and the candidate fails (evaluation.max_item_regressions);
 * an item passes when it is right in at least half of its samples.
 */
export interface ItemRegressions {
  /** The most the candidate may break. */
  max: number;
  items: string[];
  /** The candidate was turned down for breaking more than `max`. */
  rejected: boolean;
}

/**
 * Ours, the power check: what the gate can tell from noise on a run's selection split, from its size,
 * the repeats per item and alpha (halved when `on_inconclusive: more_repeats` looks twice).
 */
export interface GatePower {
  test: GateTestKind;
  items: number;
  repeats: number;
  alpha: number;
  /**
   * The gate compares partial-credit scores (gate_metric soft or mixed): an item can move by less
   * than a whole point, so the test bounds how many items must move, not how small Δ may be.
   */
  graded?: boolean;
}

/** Ours: the target's hard score with no skill at all (evaluation.no_skill_baseline). */
export interface NoSkillScores {
  selection: number;
  /** null: the run has no test split. */
  test: number | null;
}

/**
 * Ours, the A/A check (`skillopt eval --aa N`, SkillOpt: Check Gate Noise): one skill scored N times
 * on the same items, every run compared with every other as if it were a candidate.
 */
export interface AaRecord {
  runs: number;
  /** Samples per item in each run (evaluation.repeats, as the gate samples); absent for one. */
  repeats?: number;
  /** Items scored in every run. */
  items: number;
  metric: 'hard' | 'soft' | 'mixed';
  alpha: number;
  /** Each run's mean on the gate metric, over the items scored in every run. */
  scores: number[];
  /** Ordered pairs of runs compared (N × (N − 1)). */
  comparisons: number;
  /** Comparisons the strict gate (candidate > current) would accept. */
  strict_accepts: number;
  /** Comparisons the paired gate would accept, and call inconclusive. */
  paired_accepts: number;
  paired_inconclusive: number;
  /** Items whose score differs between at least two runs. */
  changed_items: number;
  /** Answers replayed from the response cache (an earlier evaluation's samples, not fresh ones). */
  cache_hits?: number;
}

/** Per-item selection scores (the mean over repeats), by task id; errored items are absent. */
export type ItemScores = Record<string, Score>;

/** A selection-cache entry: the skill's mean score, and its per-item scores when they are known. */
export interface CachedSelection extends Score {
  items?: ItemScores;
  /** Samples per item behind `items`; absent = 1. */
  repeats?: number;
}

/**
 * One changed block of lines between two skill texts (src/engine/skill/hunks.ts computes them),
 * numbered exactly as in a unified diff header: 1-based, and for an empty side
 * (`oldLines`/`newLines` = 0) the start is the line *after which* the change sits, so 0 means
 * "before the first line".
 */
export interface LineHunk {
  /** Stable for the same before/after pair: derived from the hunk's ordinal and its lines. */
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  removed: string[];
  added: string[];
}

export interface FailurePattern {
  pattern: string;
  count: number;
  task_ids: string[];
}

/** One entry of the within-epoch step buffer (`trajectory_digest.json`). */
export interface StepBufferEntry {
  step: number;
  action: StepAction;
  n_total: number;
  n_fail: number;
  failure_patterns: FailurePattern[];
  score_before?: number;
  score_after?: number;
  rejected_edits?: Array<Record<string, unknown>>;
}

/** A history.json record (reference §8.2), plus our optional fields. */
export interface StepRecord {
  step: number;
  epoch: number;
  step_in_epoch: number;
  timing: Record<string, number>;
  tokens: Record<string, { calls: number; prompt_tokens: number; completion_tokens: number }>;
  rollout_hard: number;
  rollout_soft: number;
  rollout_n: number;
  accumulation_batches: Array<{
    batch_idx: number;
    batch_seed: number;
    n_envs: number;
    hard: number;
    soft: number;
    n_failure_patches: number;
    n_success_patches: number;
  }>;
  n_patches: number;
  n_failure_patches: number;
  n_success_patches: number;
  /** Ours: items the analysts proposed before merging. */
  n_edits_proposed?: number;
  n_edits_merged?: number;
  n_edits_ranked?: number;
  edit_budget?: number | null;
  lr_control_mode?: string;
  lr_decision?: Record<string, unknown>;
  support_counts?: number[];
  candidate_hash?: string;
  candidate_skill_len?: number;
  rewrite_change_summary?: string[];
  edit_apply_summary?: { total: number; applied: number; skipped: number; errors: number };
  selection_hard?: number;
  selection_soft?: number;
  gate_metric?: string;
  candidate_gate_score?: number;
  action: StepAction;
  current_score: number;
  best_score: number;
  best_step: number;
  current_origin?: string;
  best_origin?: string;
  skill_len: number;
  wall_time_s: number;
  /** Skill-aware reflection (§5.4), only in steps whose analysts wrote notes. */
  n_execution_lapse_notes?: number;
  n_appendix_notes_added?: number;
  n_appendix_notes_total?: number;
  n_appendix_notes_consolidated?: number;
  /** Ours: rollout items the target could not answer (kept out of rollout_hard/soft); absent when 0. */
  rollout_errored?: number;
  /** Ours: selection items the target could not answer (kept out of selection_hard/soft); absent when 0. */
  selection_errored?: number;
  /** Ours: the paired gate's test (evaluation.gate_test: paired). */
  gate_test?: GateTestRecord;
  /** Ours: items the candidate broke (evaluation.max_item_regressions). */
  item_regressions?: ItemRegressions;
  /** Ours: estimated tokens of the skill after the step. */
  skill_tokens?: number;
  /** Ours: dollars spent in this step, null when a price is unknown. */
  cost_usd?: number | null;
  /** Ours: what the person decided in review (review.mode gate-then-human / human-first). */
  review?: {
    mode: ReviewMode;
    decision: ReviewDecisionKind;
    gate_action?: string;
    rejected_edits?: Array<{ id: string; reason?: string }>;
    reason?: string;
  };
  /** Ours: structured-reply fallbacks that happened in this step. */
  fallbacks?: Array<{ stage: string; reason: string }>;
}

/** runtime_state.json: the reference's keys plus what we need to resume exactly. */
export interface RuntimeState {
  /** Ours: absent in version 1 files (ours before versioning, and the reference's). */
  schema_version?: number;
  last_completed_step: number;
  current_skill_path: string;
  current_score: number;
  current_origin: string;
  best_skill_path: string;
  best_score: number;
  best_step: number;
  best_origin: string;
  /** Ours: the scheduler's counter, so a resumed run continues the same budget sequence. */
  scheduler_position?: number;
  /** Ours: the epoch the step buffer belongs to, and its entries (the reference loses these on resume). */
  step_buffer_epoch?: number;
  step_buffer?: StepBufferEntry[];
  /** Ours: the optimizer meta skill active for the current epoch. */
  active_meta_skill?: string;
  /** Ours: last epoch whose end-of-epoch stages are complete. */
  last_completed_epoch?: number;
  /** Ours: edit budget change from decay-on-reject. */
  budget_decay?: number;
  /** Ours: consecutive gated steps without improvement (patience). */
  steps_without_improvement?: number;
  /** Ours: last epoch whose slow update / meta reflect is complete (each is skipped on resume). */
  slow_done_epoch?: number;
  meta_reflect_done_epoch?: number;
  /** Ours: last epoch whose activation-track stage is complete. */
  activation_done_epoch?: number;
  /** Ours: the initial skill's selection score. */
  baseline_score?: number;
  /** Ours: selection scores by skill hash, so a resumed run never scores the same skill twice. */
  selection_cache?: Record<string, CachedSelection>;
  /** Ours: which program wrote the file (ENGINE_ID). */
  engine?: string;
}

/** A description's trigger rate on one set of trigger queries (errored runs counted, not scored). */
export interface TriggerRateRecord {
  /** Mean query score; null when every run errored. */
  rate: number | null;
  /** Should-trigger queries: share of runs that loaded the skill. */
  recall?: number;
  /** Should-not-trigger queries: share of runs that loaded it anyway. */
  false_trigger_rate?: number;
  queries: number;
  runs: number;
  errored: number;
}

/** One epoch of the activation track (`activation_history.json`): the description's gate. */
export interface ActivationRecord {
  epoch: number;
  /** The epoch's last step: the record sits after it in Gate History. */
  step: number;
  /** accept_new_best, reject, or no_content (the optimizer proposed nothing new). */
  action: string;
  /** Why a candidate was rejected or not made, in words. */
  reason?: string;
  description_before: string;
  candidate_description?: string;
  /** The description the skill carries after the verdict. */
  description_after: string;
  train_before: TriggerRateRecord;
  held_out_before: TriggerRateRecord;
  train_candidate?: TriggerRateRecord;
  held_out_candidate?: TriggerRateRecord;
  reasoning?: string;
  /** Which runs decided: the agent's own skill discovery, or the chat listing prompt. */
  mode: 'agent' | 'chat';
  simulated?: boolean;
}
