/**
 * Trigger rates: how often a description made the agent do the right thing. A run is right when
 * the skill loaded for a should-trigger query, or did not load for a should-not-trigger one. An
 * errored run (the agent could not run, the API failed, a timeout) says nothing about the
 * description: it is counted, and kept out of every rate.
 */
import type { TriggerQuery } from './queries';

/** One run of one query: loaded or not, or errored (with why). */
export interface TriggerRun {
  id: string;
  repeat: number;
  shouldTrigger: boolean;
  /** undefined when the run errored. */
  loaded?: boolean;
  error?: string;
  /** The target error kind of an errored run (TARGET_ERROR_KINDS). */
  errorKind?: string;
}

export interface QueryScore {
  id: string;
  query: string;
  shouldTrigger: boolean;
  /** Runs that loaded the skill / runs that answered (errored runs left out). */
  loads: number;
  runs: number;
  errored: number;
  /** Share of answered runs that were right; undefined when every run errored. */
  score?: number;
}

export interface TriggerScore {
  /** Mean query score over the queries with at least one answered run; undefined when there is none. */
  rate?: number;
  /** Should-trigger queries: share of their answered runs that loaded the skill. */
  recall?: number;
  /** Should-not-trigger queries: share of their answered runs that loaded it anyway. */
  falseTriggerRate?: number;
  queries: QueryScore[];
  /** Answered and errored runs. */
  runs: number;
  errored: number;
}

const mean = (xs: number[]): number | undefined =>
  xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined;

export function isRight(run: TriggerRun): boolean {
  return run.loaded === run.shouldTrigger;
}

/** Scores of `queries` from their runs (runs of other queries are ignored). */
export function triggerScore(queries: readonly TriggerQuery[], runs: readonly TriggerRun[]): TriggerScore {
  const scored: QueryScore[] = queries.map((q) => {
    const mine = runs.filter((r) => r.id === q.id);
    const answered = mine.filter((r) => r.loaded !== undefined);
    const loads = answered.filter((r) => r.loaded).length;
    const right = answered.filter(isRight).length;
    return {
      id: q.id,
      query: q.query,
      shouldTrigger: q.shouldTrigger,
      loads,
      runs: answered.length,
      errored: mine.length - answered.length,
      ...(answered.length ? { score: right / answered.length } : {}),
    };
  });
  const share = (kind: boolean): number | undefined => {
    const qs = scored.filter((q) => q.shouldTrigger === kind && q.runs > 0);
    return mean(qs.map((q) => q.loads / q.runs));
  };
  const rate = mean(scored.flatMap((q) => (q.score === undefined ? [] : [q.score])));
  const recall = share(true);
  const falseTriggerRate = share(false);
  return {
    ...(rate !== undefined ? { rate } : {}),
    ...(recall !== undefined ? { recall } : {}),
    ...(falseTriggerRate !== undefined ? { falseTriggerRate } : {}),
    queries: scored,
    runs: scored.reduce((n, q) => n + q.runs, 0),
    errored: scored.reduce((n, q) => n + q.errored, 0),
  };
}
