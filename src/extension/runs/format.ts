/** How scores, deltas and spend read in the tree, the status bar and notifications. */
import { cutOffWords } from '../../protocol/words';
import type { LiveSpend } from './liveState';

export function formatScore(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(3);
}

export function formatDelta(d: number): string {
  if (Math.abs(d) < 0.0005) return '±0';
  return `${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(3)}`;
}

/** " · prompt cache 62% of input, saved $0.80" once the providers' caches served any input. */
export function formatPromptCache(spend: LiveSpend): string {
  const cached = spend.cachedTokens ?? 0;
  if (!cached || !spend.promptTokens) return '';
  const share = `${Math.round((cached / spend.promptTokens) * 100)}% of input`;
  const saved = spend.cacheSavedDollars;
  const money =
    saved === null || saved === undefined
      ? 'saving unknown'
      : `${saved < 0 ? 'cost' : 'saved'} $${Math.abs(saved).toFixed(2)}`;
  return ` · prompt cache ${share}, ${money}`;
}

/** "$0.08", or "≥ $0.08" when requests were cut off and the spend is a lower bound. */
export function formatSpend(dollars: number | null | undefined, simulated: boolean, cutOff = 0): string {
  // A simulated role costs nothing; what a real one paid (or its unknown price) still shows.
  if (simulated && dollars === 0 && !cutOff) return 'sim';
  if (dollars === null || dollars === undefined) return '$?';
  return `${cutOff ? '≥ ' : ''}$${dollars < 10 ? dollars.toFixed(2) : dollars.toFixed(0)}`;
}

/** The spend line of a run's hovers: calls, dollars, and why they are a lower bound when they are. */
export function spendLine(spend: LiveSpend, simulated: boolean, cacheHits = false): string {
  const calls = `Model calls: ${spend.calls}${cacheHits ? ` (${spend.cacheHits} from cache)` : ''}`;
  const lower = cutOffWords(spend.cutOff);
  return (
    `${calls} · spend ${formatSpend(spend.dollars, simulated, spend.cutOff)}` +
    `${lower ? `, ${lower}` : ''}${formatPromptCache(spend)}`
  );
}
