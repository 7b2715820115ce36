/**
 * How the engine's terms read to a person: one plain label per gate action, epoch-end action and
 * edit operation, used by the tree, Gate History, the review and notifications alike. The engine
 * terms stay in hovers and files; labels are what a user of the editor reads. Browser-safe.
 */
import type { StopCap } from './events';
import { HUMAN_ORIGIN_PREFIX, parseStepName, type EpochEndAction, type VerdictAction } from './vocabulary';

export type { EpochEndAction };

const ACTION_LABELS: Record<VerdictAction | EpochEndAction, string> = {
  accept_new_best: 'accepted, new best',
  accept: 'accepted',
  force_accept: 'accepted without the gate',
  reject: 'rejected by the gate',
  inconclusive: 'inconclusive: within noise, not kept',
  skip_no_patches: 'skipped: no edits proposed',
  skip_no_rewrite: 'skipped: no rewrite',
  promote: 'promoted to best',
  keep: 'kept the current skill',
  no_content: 'nothing to add',
  no_candidate: 'no candidate',
  inject_placeholder: 'empty block added, filled from the next epoch',
  skip_first_epoch: 'not run after the first epoch',
  skip_last_epoch: 'not run after the last epoch',
  write_meta_skill: 'written',
  human_accept: 'you accepted',
  human_reject: 'you rejected',
  human_revert: 'you reverted',
};

/** How an action reads; an action from another writer reads as its own words. */
export function actionLabel(action: string): string {
  return Object.hasOwn(ACTION_LABELS, action)
    ? ACTION_LABELS[action as VerdictAction | EpochEndAction]
    : action.replace(/_/g, ' ');
}

/**
 * Where the run's current skill came from, in words. The engine writes origins as
 * `initial_skill`, `step_0003`, `slow_update_epoch_02`, `slow_update_placeholder_epoch_01`,
 * `meta_reflect_epoch_02`, `human_step_0004`, `human_revert_step_0004` (reference spellings).
 */
export function originLabel(origin: string): string {
  if (origin === 'initial_skill') return 'the initial skill';
  // The longer prefix first: a revert's origin also starts with the accept's.
  for (const [by, prefix] of [
    ['revert', HUMAN_ORIGIN_PREFIX.revert],
    ['accept', HUMAN_ORIGIN_PREFIX.accept],
    ['gate', ''],
  ] as const) {
    const step = origin.startsWith(prefix) ? parseStepName(origin.slice(prefix.length)) : undefined;
    if (step === undefined) continue;
    return by === 'revert'
      ? `your revert of step ${step}`
      : by === 'accept'
        ? `your review of step ${step}`
        : `step ${step}`;
  }
  const e = /^(slow_update_placeholder|slow_update|meta_reflect)_epoch_(\d+)$/.exec(origin);
  if (e) {
    const epoch = Number(e[2]);
    if (e[1] === 'slow_update_placeholder')
      return `the epoch ${epoch} slow update (an empty block, not yet filled by a later slow update)`;
    return e[1] === 'slow_update' ? `the epoch ${epoch} slow update` : `the epoch ${epoch} meta reflection`;
  }
  return origin.replace(/_/g, ' ');
}

const EDIT_OP_LABELS: Record<string, string> = {
  append: 'add at the end',
  insert_after: 'insert after a line',
  replace: 'rewrite',
  delete: 'remove',
};

/** What an edit does and where it came from, in words ("insert after a line · 3 analyses · from failed tasks"). */
export function editTitle(e: { op?: string; supportCount?: number; sourceType?: string }): string {
  const op = e.op ? (EDIT_OP_LABELS[e.op] ?? e.op.replace(/_/g, ' ')) : 'edit';
  const parts = [op.charAt(0).toUpperCase() + op.slice(1)];
  if (e.supportCount !== undefined)
    parts.push(e.supportCount === 1 ? 'proposed once' : `proposed by ${e.supportCount} analyses`);
  const src = e.sourceType;
  if (src)
    parts.push(
      src === 'failure' ? 'from failed tasks' : src === 'success' ? 'from passed tasks' : `from ${src}`,
    );
  return parts.join(' · ');
}

/** The engine's wording of the same edit, for hovers: `insert_after · support 3 · failure`. */
export function editTerms(e: { op?: string; supportCount?: number; sourceType?: string }): string {
  return [
    e.op ?? 'edit',
    ...(e.supportCount !== undefined ? [`support_count ${e.supportCount}`] : []),
    ...(e.sourceType ? [`source_type ${e.sourceType}`] : []),
  ].join(' · ');
}

/**
 * A score pair in plain words: the share of tasks fully right (the reference's hard score) and the
 * mean with partial credit (its soft score), each formatted by `fmt`.
 */
export function scoreWords(hard: number, soft: number, fmt: (x: number) => string): string {
  return `${fmt(hard)} fully right · ${fmt(soft)} with partial credit`;
}

/** What a run used of the cap it stopped on, as the cap is written (dollars to the cent, whole tokens and seconds). */
export function capUsedText(cap: StopCap): string {
  return cap.key === 'limits.max_dollars' ? cap.used.toFixed(2) : String(Math.floor(cap.used));
}

/** Why a request cut off counts apart: the words the CLI, report.md and the editor's views all use. */
export const CUT_OFF_MEANING =
  "cut off before their reply (a stop, limits.request_timeout_s or an agent target's env.exec_timeout), their tokens unknown, and the provider may bill them";

/** "a lower bound: 2 requests were cut off …", or '' when none was: the spend beside it is then exact. */
export function cutOffWords(cutOff: number | undefined): string {
  if (!cutOff) return '';
  const n = cutOff === 1 ? '1 request was' : `${cutOff.toLocaleString('en-US')} requests were`;
  return `a lower bound: ${n} ${CUT_OFF_MEANING}`;
}
