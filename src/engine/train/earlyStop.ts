/**
 * evaluation.early_stop: a selection evaluation that stops sending items once the ones left cannot
 * change the gate's verdict. Only where that is certain:
 *
 * - the strict gate (ties reject), one sample per item, no per-item regression rule, no person
 *   reviewing the verdict, the gate on, and no provider batch: the verdict is then a step function
 *   of the mean score, so bounding the mean bounds the verdict. The paired gate's p-value, repeats
 *   (on_inconclusive: more_repeats samples again) and max_item_regressions read every item: never
 *   stopped early.
 * - only a certain reject stops: an accepted candidate's score becomes the score later gates beat,
 *   so it must be the full one; a rejected one's partial score is never cached as the skill's score.
 * - the mean is over answered items (errored ones are left out), so each item left may be errored
 *   or score anywhere in [0, 1]: the mean can reach at most (sum + r) / (n + r). The stop also needs
 *   every item left to be errored without the batch crossing limits.max_errored_share, so that the
 *   full evaluation could not have stopped the run instead.
 */
import type { RolloutResult, Score } from '../../protocol/records';
import { decideGate } from '../optimizer/gate';
import { isErrored } from './rollout';

/** Below this margin under the current score a float sum in another order could not tip the verdict. */
const MARGIN = 1e-9;

export interface EarlyStopWatch {
  /** Feed every result as it arrives (resumed rows too). */
  observe(r: RolloutResult): void;
  /** True once the items not yet sent cannot change the verdict from reject. */
  certainReject(): boolean;
  /** Items seen so far. */
  readonly seen: number;
}

export function earlyStopWatch(opts: {
  total: number;
  /** The gate metric of a mean score, with the skill's own bonus (semantic density) if any. */
  project: (score: Score) => number;
  current: number;
  best: number;
  maxErroredShare: number;
}): EarlyStopWatch {
  let n = 0;
  let errored = 0;
  let hard = 0;
  let soft = 0;
  let seen = 0;
  return {
    get seen() {
      return seen;
    },
    observe(r) {
      seen++;
      if (isErrored(r)) {
        errored++;
        return;
      }
      n++;
      hard += r.hard;
      soft += r.soft;
    },
    certainReject() {
      const left = opts.total - seen;
      if (left <= 0 || n === 0) return false;
      if (errored + left > opts.maxErroredShare * opts.total) return false;
      // Both means rise with every answered item left (each at most 1): the highest the score can reach.
      const highest = opts.project({ hard: (hard + left) / (n + left), soft: (soft + left) / (n + left) });
      return (
        highest <= opts.current - MARGIN &&
        decideGate({ candidate: highest, current: opts.current, best: opts.best, useGate: true }) === 'reject'
      );
    },
  };
}
