import type { EngineEvent } from '../../protocol/events';
import type { Accounting } from './accounting';

/** At most one `accounting` event per this many ms: totals change on every call, a status bar needs a few a second. */
const EMIT_EVERY_MS = 250;

/**
 * Streams the run's spend totals as `accounting` events, throttled; `close()` sends the last totals
 * and stops listening.
 */
export function streamTotals(accounting: Accounting, emit: (event: EngineEvent) => void): { close(): void } {
  let lastEmit = 0;
  let pendingTimer: ReturnType<typeof setTimeout> | undefined;
  const emitTotals = (): void => {
    pendingTimer = undefined;
    lastEmit = Date.now();
    const t = accounting.totals();
    emit({
      type: 'accounting',
      totals: {
        calls: t.calls,
        promptTokens: t.promptTokens,
        completionTokens: t.completionTokens,
        cacheHits: t.cacheHits,
        dollars: t.dollars,
        fallbacks: t.fallbacks,
        cachedTokens: t.cachedTokens,
        cacheSavedDollars: t.cacheSavedDollars,
        cutOff: t.cutOff,
      },
    });
  };
  const unsubscribe = accounting.onChange(() => {
    if (pendingTimer) return;
    pendingTimer = setTimeout(emitTotals, Math.max(0, EMIT_EVERY_MS - (Date.now() - lastEmit)));
  });
  return {
    close: () => {
      unsubscribe();
      if (pendingTimer) clearTimeout(pendingTimer);
      emitTotals();
    },
  };
}
