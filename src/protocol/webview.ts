/**
 * Messages between the extension host and the Gate History webview, defined once for both sides.
 * The webview says `ready` first; the host then posts the run's data and posts it again whenever
 * the run changes. The webview keeps only navigation state (`GateHistoryState`) in `setState`, so
 * after a reload the host's serializer knows which run to show and sends the data again.
 */

import type {
  AaRecord,
  ActivationRecord,
  GatePower,
  GateTestRecord,
  ItemRegressions,
  NoSkillScores,
} from './records';
import { CANDIDATE_ORIGINS, type CandidateDecision, type CandidateOrigin } from './vocabulary';

export type { CandidateOrigin };

export const gateHistoryViewType = 'skillopt.gateHistory';

/** What produced a candidate: a training step, or one of the epoch-end stages. */
export function isCandidateOrigin(v: unknown): v is CandidateOrigin {
  return typeof v === 'string' && (CANDIDATE_ORIGINS as readonly string[]).includes(v);
}

/** "step 3", "epoch 1 slow update", "epoch 1 meta reflection": how the UI names a candidate. */
export function candidateName(origin: CandidateOrigin, step: number, epoch: number): string {
  if (origin === 'slow_update') return `epoch ${epoch} slow update`;
  if (origin === 'meta_reflect') return `epoch ${epoch} meta reflection`;
  return `step ${step}`;
}

/** What happened to one edit of a step. */
export type EditFate =
  'kept' | 'rejected-by-gate' | 'accepted-by-you' | 'rejected-by-you' | 'skipped' | 'pending';

export interface GateEditRow {
  id: string;
  op: string;
  target?: string;
  /** Written by the optimizer model: the webview must show it as text, never as HTML. */
  content?: string;
  supportCount?: number;
  sourceType?: string;
  /** Apply status from the engine (`applied_append`, `skipped_ambiguous_target`, ...). */
  status?: string;
  fate: EditFate;
  /** The person's reason for rejecting it, or why a skipped edit was not applied. */
  reason?: string;
}

export interface GateStepRow {
  step: number;
  epoch: number;
  origin: CandidateOrigin;
  /** Gate action (`accept_new_best`, `accept`, `reject`, `force_accept`, `skip_no_patches`, ...) or `pending`. */
  action: string;
  candidateScore?: number;
  currentScore?: number;
  bestScore?: number;
  /** Current score before this step: what the candidate had to beat. */
  previousScore?: number;
  /** Score of the train rollouts at the start of the step. */
  rolloutScore?: number;
  editBudget?: number | null;
  /** `skill_tokens` from the history record when the engine wrote one. */
  skillTokens?: number;
  /** Skill length in characters, for an estimate when `skillTokens` is missing. */
  skillLen?: number;
  costUsd?: number | null;
  /** Prompt plus completion tokens of every model call in the step. */
  tokens?: number;
  /** The person's decision on this candidate, when there was one. */
  human?: CandidateDecision | 'mixed';
  edits: GateEditRow[];
  /** A candidate file exists, so the row can open its diff. */
  hasCandidate: boolean;
  /** The paired gate's test (p-value, interval of the per-item delta), when it ran. */
  gateTest?: GateTestRecord;
  /** Items the candidate broke (evaluation.max_item_regressions), when the rule is on. */
  itemRegressions?: ItemRegressions;
}

export interface GateHistoryData {
  runId: string;
  runName: string;
  status: string;
  simulated: boolean;
  gateMetric?: string;
  baselineScore?: number;
  totalSteps?: number;
  steps: GateStepRow[];
  /** Totals so far; `dollars` is null when some model's price is unknown. */
  spend: { dollars: number | null; tokens: number };
  /** The description's own gate per epoch (activation.enabled), from the run folder and live events. */
  activation?: ActivationRecord[];
  /** What the gate can tell from noise on the selection split (the power check). */
  gatePower?: GatePower;
  /** The target with no skill at all, once the run has finished. */
  noSkill?: NoSkillScores;
  /** The run finished without scoring the target alone (evaluation.no_skill_baseline: false). */
  noSkillOff?: boolean;
  /** The newest A/A check of this run's skills (`<run>/eval_only/`). */
  aa?: AaRecord;
}

/** host → webview */
export type HostMessage =
  { type: 'history'; data: GateHistoryData } | { type: 'missing'; runId: string; message: string };

/** webview → host */
export type WebviewMessage =
  | { type: 'ready'; runId?: string }
  | { type: 'openStep'; runId: string; step: number; origin: CandidateOrigin };

/** Persisted by the webview with `setState`; the serializer reads it back after a reload. */
export interface GateHistoryState {
  runId: string;
  /** `step:origin` of the selected table row. */
  selected?: string;
  /** Chart series the person switched off in a legend. */
  hidden?: string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Guards for messages that cross the boundary (the other side is another process). */
export function isWebviewMessage(v: unknown): v is WebviewMessage {
  if (!isObject(v)) return false;
  if (v.type === 'ready') return v.runId === undefined || typeof v.runId === 'string';
  return (
    v.type === 'openStep' &&
    typeof v.runId === 'string' &&
    typeof v.step === 'number' &&
    Number.isInteger(v.step) &&
    isCandidateOrigin(v.origin)
  );
}

export function isHostMessage(v: unknown): v is HostMessage {
  if (!isObject(v)) return false;
  if (v.type === 'missing') return typeof v.runId === 'string' && typeof v.message === 'string';
  return (
    v.type === 'history' &&
    isObject(v.data) &&
    Array.isArray(v.data.steps) &&
    typeof v.data.runId === 'string'
  );
}

export function isGateHistoryState(v: unknown): v is GateHistoryState {
  return isObject(v) && typeof v.runId === 'string';
}
