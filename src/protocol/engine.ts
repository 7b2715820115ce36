/**
 * Every message between the extension host and the engine process, defined once and imported by
 * both sides. Method names are `namespace/verb`; each doc comment names the sender.
 * Bump `protocolVersion` on any breaking change; the host refuses a mismatched engine.
 */
import type { EngineEvent } from './events';
import type { LmRequest, LmResponse } from './lm';
import type { AaRecord, GatePower } from './records';
import type { BatchCancelOutcome, CandidateDecision, KeyProvider, LogLevel, ReviewMode } from './vocabulary';
import { notification, request } from './rpc';

export const protocolVersion = 1;

export type ProviderKeys = Partial<Record<KeyProvider, string>>;

export interface InitializeParams {
  protocolVersion: number;
  clientVersion: string;
  workspaceRoot?: string;
  /** Workspace trust: the `command` backend refuses to run without it. */
  trusted: boolean;
  logLevel: LogLevel;
}

export interface InitializeResult {
  protocolVersion: number;
  engineVersion: string;
  pid: number;
}

export interface RunSource {
  configPath: string;
  overrides?: string[];
  /** Keys from SecretStorage; they stay in the engine's memory only. */
  keys?: ProviderKeys;
}

export interface ValidateResult {
  configPath: string;
  skillPath: string;
  splits: { train: number; val: number; test: number };
  totalSteps: number;
  estimatedCalls: number;
  /** Dollar range at list prices, null when a model's price is unknown (see `estimatedCost`). */
  estimatedDollars: { low: number; high: number } | null;
  /** The estimate for people: the range (tokens, unknown prices named), then its prompt-cache assumption on a line of its own. */
  estimatedCost: string;
  optimizer: string;
  target: string;
  simulated: boolean;
  warnings: string[];
  /** What the gate can tell from noise on the selection split (the power check). */
  gatePower?: GatePower;
  /** Calls of the no-skill baseline at the end (in `estimatedCalls`); absent when it is off. */
  noSkillCalls?: number;
  /** The run would score its end without the target alone (evaluation.no_skill_baseline: false). */
  noSkillOff?: true;
}

export interface StartParams extends RunSource {
  outDir?: string;
  resume: boolean;
  /** Overrides the config's review.mode for this run. */
  reviewMode?: ReviewMode;
}

export interface StartResult {
  runId: string;
  outDir: string;
}

export interface EvalParams extends RunSource {
  skillPath: string;
  split: 'train' | 'val' | 'test' | 'all';
  outDir?: string;
  /** The A/A check: score the skill this many times (2–20) and compare each run with every other. */
  aa?: number;
}

export interface EvalResult {
  split: string;
  n_items: number;
  hard: number;
  soft: number;
  by_type: Record<string, { hard: number; soft: number; total: number }>;
  failing: string[];
  /** Items the target could not answer (not scored); absent when none. */
  errored?: string[];
  out_dir: string;
  /** The evaluation's spend over every process that worked on it (its ledger). */
  model_calls: number;
  /** Answers taken from the response cache (free). */
  cache_hits?: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** null when a model's price is unknown. */
  dollars: number | null;
  /** The target was the offline `sim` backend: no price, nothing paid. */
  simulated?: true;
  /** The A/A check, when `aa` was asked for. */
  aa?: AaRecord;
}

export interface CancelBatchesParams extends RunSource {
  /** The run folder; its own evaluations' batches are cancelled, not those of its `eval_only/`. */
  outDir: string;
}

/** One provider batch recorded in the run folder (`provider_batch.json`), and what the cancel did. */
export interface CancelledBatchInfo {
  outcome: BatchCancelOutcome;
  /** The provider it was sent through (`openai`, `anthropic`, `openai_compatible`, …). */
  provider: string;
  /** The evaluation that sent it: `test`, `eval` or `selection`. */
  stage: string;
  /** Absent for `no_id`: the process that sent it stopped before writing it. */
  batchId?: string;
  /** Its `provider_batch.json`. */
  file: string;
  /** The provider's status after the cancel (or when found ended); absent for `no_id` and `other_provider`. */
  status?: { detail: string; total: number; done: number; failed: number };
}

export interface CancelBatchesResult {
  outDir: string;
  /** Every batch found, in folder order; empty when the folder records none. */
  batches: CancelledBatchInfo[];
}

export interface DecideParams {
  runId: string;
  step: number;
  /**
   * The `review/requested` question this answers. Absent for an overrule of a finished step. An
   * answer to a question no longer open, or one without an id while the step's question is open,
   * is `stale`: it was drawn for another question (an earlier run's, or one asked again).
   */
  questionId?: string;
  decisions: Array<{ editId: string; accept: boolean; reason?: string }>;
  candidate?: CandidateDecision;
  reason?: string;
}

/** What the engine did with a `review/decide`. */
export type DecideApplied = 'pending-review' | 'overrule' | 'stale' | 'ignored';

export const EngineRequests = {
  /** host → engine: handshake; the engine answers with its protocol version. */
  initialize: request<InitializeParams, InitializeResult>('engine/initialize'),
  /** host → engine: load and check config, skill, tasks and models; spends nothing. */
  validate: request<RunSource, ValidateResult>('config/validate'),
  /** host → engine: start (or resume) a training run; returns once it has started, progress comes as events. */
  startRun: request<StartParams, StartResult>('run/start'),
  /** host → engine: stop a run at the next safe point. */
  stopRun: request<{ runId: string }, { stopped: boolean }>('run/stop'),
  /**
   * host → engine: cancel the provider batches a stopped run left running (as `skillopt train
   * --cancel-batch`); trains nothing. Refused while the run is training, or for a target without a batch API.
   */
  cancelBatches: request<CancelBatchesParams, CancelBatchesResult>('run/cancelBatches'),
  /** host → engine: eval-only on one split; resolves with the scores (cancellable). */
  evaluate: request<EvalParams, EvalResult>('run/evaluate'),
  /**
   * host → engine: the person's review of a step. Answers a pending review (gate-then-human,
   * human-first); otherwise, for a finished step in auto mode, a candidate decision overrules the
   * gate at the next step boundary (`accept` a rejected candidate, `reject` reverts an accepted one).
   */
  decide: request<DecideParams, { ok: boolean; applied: DecideApplied }>('review/decide'),
  /** host → engine: finish in-flight work and exit. */
  shutdown: request<Record<string, never>, { ok: true }>('engine/shutdown'),
  /**
   * engine → host: one vscode.lm chat request on behalf of the `vscode-lm` backend (src/protocol/lm.ts).
   * The host answers errors with reason `llm-transient` (rate limit, quota window) or `llm`.
   */
  lmRequest: request<LmRequest, LmResponse>('lm/request'),
} as const;

export const EngineNotifications = {
  /** engine → host: a training-loop event, with a per-run monotonic sequence number. */
  runEvent: notification<{ runId: string; seq: number; event: EngineEvent }>('run/event'),
  /** engine → host: one engine log line for the LogOutputChannel. */
  log: notification<{ level: LogLevel; component: string; message: string }>('log/message'),
} as const;
