/** When the loop stops before its last step: a stop request, a budget cap, or patience. */
import { STOPPED_BY_REQUEST } from '../../protocol/vocabulary';
import type { LoopContext } from './loopContext';

export { STOPPED_BY_REQUEST };

/** A reason to stop at this step boundary, or null to go on. */
export function stopReason(loop: LoopContext): string | null {
  if (loop.ctx.signal.aborted) return STOPPED_BY_REQUEST;
  return loop.input.budgetCheck?.() ?? null;
}

/** evaluation.patience: that many gated steps in a row without a new best end training early. */
export function patienceReason(loop: LoopContext): string | null {
  const { patience } = loop.s;
  const n = loop.state.noImprove;
  if (patience <= 0 || n < patience) return null;
  return `no selection improvement for ${n} gated steps (patience ${patience})`;
}
