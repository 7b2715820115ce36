/** What every built-in scorer shares: the synchronous wrapper, the clamped result, quoting in reasons. */
import type { TaskItem } from '../data/tasks';
import type { Scorer, ScoreResult } from './scorers';

/** Wraps a synchronous check as a Scorer. */
export function syncScorer(name: string, check: (prediction: string, item: TaskItem) => ScoreResult): Scorer {
  return {
    name,
    // No signal: a synchronous check has nothing to cancel, and a reply that arrived as the run
    // stopped must still be scored and kept, so that a resumed run does not pay for it again.
    score(prediction: string, item: TaskItem): Promise<ScoreResult> {
      try {
        return Promise.resolve(check(prediction, item));
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}

export function result(pass: boolean, soft: number, reason: string): ScoreResult {
  return { hard: pass ? 1 : 0, soft: Math.min(1, Math.max(0, soft)), reason };
}

const reasonCap = 200;

export function quote(text: string): string {
  const t = text.length > reasonCap ? `${text.slice(0, reasonCap)}…` : text;
  return JSON.stringify(t);
}

export function expected(golds: readonly string[]): string {
  if (golds.length === 0) return 'no answer (the task has none)';
  if (golds.length === 1) return quote(golds[0]);
  const shown = golds.slice(0, 5).map(quote).join(', ');
  return `one of ${shown}${golds.length > 5 ? `, … (${golds.length} in all)` : ''}`;
}
