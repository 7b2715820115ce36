/** How an activation-track verdict reads in the CLI, the report and the extension. */
import type { ActivationRecord, TriggerRateRecord } from './records';
import { isAccepted } from './vocabulary';

export function rateText(r: TriggerRateRecord | undefined): string {
  if (!r) return '-';
  const rate = r.rate === null ? 'n/a' : r.rate.toFixed(3);
  return r.errored ? `${rate} (${r.errored} errored)` : rate;
}

/** One line: the epoch, the verdict and the held-out trigger rates it was decided on. */
export function describeActivation(a: ActivationRecord): string {
  const verdict = isAccepted(a.action)
    ? 'new description kept'
    : a.action === 'no_content'
      ? 'no new description'
      : 'candidate description rejected';
  const rates = a.held_out_candidate
    ? `held-out trigger rate ${rateText(a.held_out_before)} → ${rateText(a.held_out_candidate)}`
    : `held-out trigger rate ${rateText(a.held_out_before)}`;
  return `Activation (epoch ${a.epoch}): ${verdict}; ${rates}${a.reason ? ` (${a.reason})` : ''}`;
}
