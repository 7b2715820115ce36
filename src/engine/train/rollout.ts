import { dirname } from 'node:path';
import type { TaskItem } from '../data/tasks';
import { SkillOptError, splitFix } from '../errors';
import { TARGET_ERROR_LABELS, type TargetErrorKind } from '../../protocol/vocabulary';
import { Semaphore } from '../llm/limiter';
import type { ModelClient, Stage } from '../llm/types';
import type { Scorer } from '../scoring/scorers';
import { prepareDirs } from '../store/atomic';
import { appendJsonl, readJsonl } from '../store/jsonl';
import { RESULT_ROWS } from '../store/runRows';
import { evalPaths } from '../store/layout';
import { assignPredictionNames } from '../store/predictionNames';
import { rolloutByBatch, type RolloutBatch } from './batchRollout';
import type { RunContext } from './context';
import type { TargetTurns } from './turns/types';
import { renderTargetSystem, runItem, type ItemOptions } from './rolloutItem';
import type { RolloutResult, Score } from '../../protocol/records';
import { rowToStore, withReply } from './storedReply';

export interface RolloutOptions {
  items: readonly TaskItem[];
  skill: string;
  /** Rollout directory: `results.jsonl` and `predictions/<id>/conversation.json`. */
  dir: string;
  client: ModelClient;
  scorer: Scorer;
  stage: Stage;
  answerTag: string;
  /** A user-supplied system prompt template with `{skill}`; our default otherwise. */
  systemTemplate?: string;
  maxTokens?: number;
  temperature?: number;
  /** A repeated sample (evaluation.repeats), counted from 0: sent with a seed of its own, cached apart. */
  repeat?: number;
  signal: AbortSignal;
  /** Called as each item finishes (resumed items first), with the count done so far. */
  onResult?: (result: RolloutResult, done: number, total: number) => void;
  /** How a chat target answers an item beyond one call (OfficeQA's document tools); absent = one call. */
  turns?: TargetTurns;
  /** Send the pending items through the target's batch API instead of one call each. */
  batch?: RolloutBatch;
  /**
   * evaluation.early_stop: items are sent at most `inFlight` at a time, and an item not sent yet is
   * left out once `stop()` says the rest cannot matter (calls already sent finish and are kept).
   */
  earlyStop?: { inFlight: number; stop: () => boolean };
  /**
   * Ids in the order to send them (the rest after, in item order): the streaming reflector's order,
   * so its minibatches fill while replies arrive. Results are still returned in item order.
   */
  sendOrder?: readonly string[];
  /** Called once every item's request has left (the baseline beside step 1 waits for it). */
  onSent?: () => void;
}

/**
 * When a stage's prediction folders are made, if no reply has needed them yet: once its requests
 * have left (made at once, they delayed the requests) and, for any real model, well before replies.
 */
const PREPARE_AFTER_MS = 50;

/**
 * Run the target on every item with the skill as its system prompt, score each reply, and write the
 * reference's rollout layout. Resume-aware per item: rows already in `results.jsonl` are reused.
 * A target call that fails after retries is a scored failure, not an exception; cancellation is.
 */
export async function rollout(opts: RolloutOptions): Promise<RolloutResult[]> {
  const paths = evalPaths(opts.dir);
  const resultsPath = paths.results;
  // Every id's conversation folder is named (and recorded) once, before any conversation is written.
  const names = assignPredictionNames(
    opts.dir,
    opts.items.map((i) => i.id),
  );
  const conversationFile = (id: string): string => paths.conversationIn(names.get(id)!);
  const wanted = new Set(opts.items.map((i) => i.id));
  const done = new Map<string, RolloutResult>();
  for (const row of readJsonl(resultsPath, RESULT_ROWS, { repair: true })) {
    if (!wanted.has(row.id)) continue;
    // An errored row is not an answer, nor one whose reply file is gone: a resumed run asks again.
    const result = isErrored(row) ? undefined : withReply(row, conversationFile(row.id));
    if (result) done.set(row.id, result);
    else done.delete(row.id);
  }
  const total = opts.items.length;
  let finished = 0;
  for (const item of opts.items) {
    const prior = done.get(item.id);
    if (prior) opts.onResult?.(prior, ++finished, total);
  }
  const note = opts.systemTemplate === undefined ? opts.turns?.systemNote : undefined;
  const system =
    renderTargetSystem(opts.skill, opts.answerTag, opts.systemTemplate) + (note ? `\n\n${note}` : '');
  const itemOpts: ItemOptions = { ...opts, conversationFile };

  const finish = (item: TaskItem, result: RolloutResult, pay?: () => void): void => {
    // The row and its usage are written together (no await between): a stop never splits them.
    appendJsonl(resultsPath, rowToStore(result));
    pay?.();
    done.set(item.id, result);
    opts.onResult?.(result, ++finished, total);
  };
  const pending = inSendOrder(
    opts.items.filter((item) => !done.has(item.id)),
    opts.sendOrder,
  );
  if (opts.batch && pending.length) {
    opts.onSent?.();
    await rolloutByBatch(pending, system, itemOpts, opts.batch, finish);
  } else {
    // Settled, not raced: every reply that arrived before a stop is written, so a resumed run does
    // not pay for it again.
    const hold = opts.earlyStop ? new Semaphore(Math.max(1, opts.earlyStop.inFlight)) : undefined;
    const one = async (item: TaskItem): Promise<void> => {
      if (!hold) return finish(item, await runItem(item, system, itemOpts));
      const release = await hold.acquire(opts.signal);
      try {
        if (!opts.earlyStop!.stop()) finish(item, await runItem(item, system, itemOpts));
      } finally {
        release();
      }
    };
    // Stream dispatch: each request leaves before the next is prepared (a turn of the event loop
    // between items lets the first reach the wire instead of waiting for all of them to be built).
    // Sending them in one burst instead was measured slower: their replies then queue to be scored.
    const jobs: Array<Promise<void>> = [];
    for (const [i, item] of pending.entries()) {
      if (i > 0) await new Promise<void>((next) => setImmediate(next));
      const job = one(item);
      // Handled now: a job that fails (a stop) while later items are still being sent must not be
      // an unhandled rejection before allSettled below reads it.
      job.catch(() => undefined);
      jobs.push(job);
    }
    opts.onSent?.();
    // While the replies are on their way (once the requests have surely left): their folders, so
    // that writing a reply costs no mkdir on the step's critical path.
    const early = hold
      ? undefined
      : setTimeout(
          () => prepareDirs(pending.map((item) => dirname(conversationFile(item.id)))),
          PREPARE_AFTER_MS,
        );
    const settled = await Promise.allSettled(jobs);
    clearTimeout(early);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
  // Items left out by an early stop have no row.
  return opts.items.flatMap((i) => done.get(i.id) ?? []);
}

function inSendOrder(items: TaskItem[], order: readonly string[] | undefined): TaskItem[] {
  if (!order) return items;
  const rank = new Map(order.map((id, i) => [id, i]));
  const at = (item: TaskItem): number => rank.get(item.id) ?? order.length;
  // A stable sort: ids the order does not name keep their item order, after the named ones.
  return [...items].sort((a, b) => at(a) - at(b));
}

/** The target could not answer this item: no score, no failure, no trajectory for the analysts. */
export function isErrored(r: Pick<RolloutResult, 'outcome'>): boolean {
  return r.outcome === 'errored';
}

/** Unweighted means over the answered items, as the reference computes them over all of its. */
export function meanScore(results: readonly RolloutResult[]): Score {
  return meanOf(results.filter((r) => !isErrored(r)));
}

/** The unweighted mean of some scores, summed in their order; 0 for none. */
export function meanOf(scores: readonly Score[]): Score {
  if (scores.length === 0) return { hard: 0, soft: 0 };
  let hard = 0;
  let soft = 0;
  for (const s of scores) {
    hard += s.hard;
    soft += s.soft;
  }
  return { hard: hard / scores.length, soft: soft / scores.length };
}

/** An answered item that scored 0 (errored items are neither failures nor successes). */
export function isFailure(r: RolloutResult): boolean {
  return !isErrored(r) && (!r.hard || r.hard < 1e-9);
}

/**
 * Errored is not failed, and it must not pass for a result either: when the target could not
 * answer more than `maxShare` of a batch, the run stops here, before the optimizer is paid for
 * reflecting on it, naming the cause and the first error.
 */
export function checkErrored(results: readonly RolloutResult[], what: string, maxShare: number): void {
  const errored = results.filter(isErrored);
  if (errored.length === 0 || errored.length <= maxShare * results.length) return;
  const byKind = new Map<string, number>();
  for (const r of errored)
    byKind.set(r.error_kind ?? 'other', (byKind.get(r.error_kind ?? 'other') ?? 0) + 1);
  const causes = [...byKind.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${TARGET_ERROR_LABELS[k as TargetErrorKind] ?? k} ×${n}`)
    .join(', ');
  // The first error often carries its own fix (an agent's or a provider's): when every errored item
  // failed the same way it is the fix; otherwise it is part of the first error's text.
  const own = splitFix(errored[0].error ?? '', byKind.size > 1);
  const [first, firstFix] = [own.problem, own.fix];
  const paid = 'nothing answered so far is paid again; the skill was not judged on these items';
  const resume = `resume the run (${paid})`;
  throw new SkillOptError(
    'target',
    `the target could not answer ${errored.length} of ${results.length} items in ${what} (${causes}). First error: ${first}`,
    {
      key: 'limits.max_errored_share',
      // A provider's fix may already say to resume (a 5xx, a rate limit): not said twice.
      fix: !firstFix
        ? `fix the cause above and ${resume}`
        : /\bresume\b/.test(firstFix)
          ? `${firstFix} (${paid})`
          : `${firstFix}, then ${resume}`,
    },
  );
}

const BATCH_NAMES: Partial<Record<Stage, string>> = {
  rollout: 'a training batch',
  selection: 'a selection evaluation',
  test: 'the test split',
  eval: 'the evaluation',
};

/**
 * A rollout with the options every stage shares, from the run's settings; it stops the run when
 * errored items dominate (limits.max_errored_share).
 */
export async function rolloutFor(
  ctx: RunContext,
  items: readonly TaskItem[],
  skill: string,
  dir: string,
  stage: Stage,
  onResult?: RolloutOptions['onResult'],
  repeat?: number,
  more: Pick<RolloutOptions, 'earlyStop' | 'sendOrder' | 'onSent'> = {},
): Promise<RolloutResult[]> {
  const s = ctx.settings;
  const results = await rollout({
    items,
    skill,
    dir,
    client: ctx.target,
    scorer: ctx.scorer,
    stage,
    answerTag: s.answerTag,
    ...(s.targetSystemTemplate !== undefined ? { systemTemplate: s.targetSystemTemplate } : {}),
    maxTokens: s.targetMaxTokens,
    ...(s.targetTemperature !== undefined ? { temperature: s.targetTemperature } : {}),
    ...(repeat ? { repeat } : {}),
    ...(ctx.turns ? { turns: ctx.turns } : {}),
    signal: ctx.signal,
    ...(onResult ? { onResult } : {}),
    ...more,
    ...(ctx.batch?.stages.has(stage)
      ? {
          batch: {
            ...ctx.batch,
            logger: ctx.logger,
            onProgress: (p) =>
              ctx.emit({
                type: 'batch/progress',
                evaluation: stage,
                provider: p.provider,
                batchId: p.batchId,
                state: p.state,
                detail: p.detail,
                done: p.done,
                failed: p.failed,
                total: p.total,
                resumed: p.resumed,
              }),
          },
        }
      : {}),
  });
  checkErrored(results, `${BATCH_NAMES[stage] ?? `the ${stage} rollout`} (${dir})`, s.maxErroredShare);
  return results;
}
