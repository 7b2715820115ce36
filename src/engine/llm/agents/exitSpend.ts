/**
 * What a task's agent runs spent, recorded as this process exits at once (a second Ctrl-C) with
 * one of them still running: the earlier (empty-answer) runs' tokens and the running one's so far,
 * read from its output and task folder before exitCleanup.ts kills it and removes the folder.
 */
import { atExitNow } from './exitCleanup';
import type { ProcessResult } from './process';
import { sumUsage, type Usage } from '../types';

/** Records what a task's agent runs spent; `now` is the running one's (if it reported any). */
export type AtExitSpend = (now: Usage | undefined) => void;

/** The task's recorder: the earlier runs (filled as they end) with the running one, if anything was spent. */
export function taskExitSpend(
  spentAtExit: ((u: Usage) => void) | undefined,
  earlier: readonly Usage[],
): AtExitSpend | undefined {
  if (!spentAtExit) return undefined;
  return (now) => {
    const all = sumUsage(now ? [...earlier, now] : [...earlier]);
    if (all.promptTokens + all.completionTokens > 0) spentAtExit(all);
  };
}

/**
 * For one run: `onStart` (runProcess's) registers the record until `off` is called, when the run
 * has ended (what follows is synchronous up to the caller's own record of it).
 */
export function runExitSpend(
  atExit: AtExitSpend | undefined,
  spent: (soFar: ProcessResult) => Usage | undefined,
): { onStart?: (soFar: () => ProcessResult) => void; off: () => void } {
  let off = (): void => undefined;
  if (!atExit) return { off: () => off() };
  return {
    onStart: (soFar) => {
      off = atExitNow(() => atExit(spent(soFar())));
    },
    off: () => off(),
  };
}
