/**
 * The JSONL run files (one JSON row a line, appended as work happens): each one's row schema and
 * what a line that cannot be read means in it. Objects are loose, as in runSchemas.ts.
 */
import { z } from 'zod';
import { TARGET_ERROR_KINDS } from '../../protocol/vocabulary';
import type { RolloutRow } from '../../protocol/records';
import type { LedgerRow } from '../llm/ledger';

export interface JsonlFile<S extends z.ZodType = z.ZodType> {
  /** What one row is called in messages. */
  row: string;
  schema: S;
  /**
   * A line that is not JSON is a write a crash cut short: `drop` passes over it (the row is made
   * again), `refuse` stops with the file and line (nothing in the file may be lost unnoticed).
   */
  torn: 'drop' | 'refuse';
  /** What to do about a row that does not fit the schema (or a refused torn line). */
  fix: string;
}

const num = z.number();
const int = z.number().int();
const count = int.min(0).optional();

/** One row of `ledger.jsonl` (llm/ledger.ts): what a process of the run paid, counted again on resume. */
export const ledgerRowSchema = z.looseObject({
  session: z.string(),
  t: num,
  step: int.min(0),
  phase: z.enum(['baseline', 'step', 'epoch_end', 'final', 'eval']),
  kind: z.enum(['usage', 'fallback', 'reask', 'session']),
  stage: z.string(),
  event: z.enum(['start', 'alive', 'end']).optional(),
  role: z.enum(['optimizer', 'target']).optional(),
  provider: z.string().optional(),
  model: z.string().optional(),
  calls: count,
  prompt_tokens: count,
  completion_tokens: count,
  cached_tokens: count,
  cache_write_tokens: count,
  seconds: num.min(0).optional(),
  cache_hits: count,
  retries: count,
  failures: count,
  cut_off: count,
  reported_dollars: num.min(0).optional(),
  dollars: num.min(0).nullable().optional(),
}) satisfies z.ZodType<LedgerRow>;

/**
 * One row of `results.jsonl`: a scored target attempt. The Python reference's rows can lack the
 * fields defaulted here (none of its readers needs them); every row this engine writes has them.
 */
export const resultRowSchema = z.looseObject({
  id: z.string(),
  hard: num,
  soft: num,
  fail_reason: z.string().optional(),
  task_type: z.string().optional(),
  task_description: z.string().default(''),
  predicted_answer: z.string().default(''),
  expected: z.array(z.string()).default([]),
  n_turns: int.min(0).default(0),
  response: z.string().optional(),
  response_in: z.string().optional(),
  response_chars: int.min(0).optional(),
  outcome: z.literal('errored').optional(),
  error: z.string().optional(),
  error_kind: z.enum(TARGET_ERROR_KINDS).optional(),
  cached: z.boolean().optional(),
  agent_run: z
    .looseObject({
      exit_code: int.nullable(),
      signal: z.string().nullable(),
      timed_out: z.boolean(),
      duration_ms: num,
      stderr: z.string(),
      skill_loaded: z.boolean().optional(),
      tool_calls: z.array(z.object({ name: z.string(), detail: z.string().optional() })).optional(),
      turns: int.optional(),
    })
    .optional(),
  steps: z
    .array(
      z.object({
        turn: int,
        reply: z.string().optional(),
        cmd: z.string().optional(),
        obs: z.string().optional(),
      }),
    )
    .optional(),
}) satisfies z.ZodType<RolloutRow>;

/** One row of a reply journal (`meta_skill_replies.jsonl`): a paid reply, saved as it arrived. */
export const journalRowSchema = z.looseObject({
  key: z.string(),
  text: z.string(),
  usage: z.object({ promptTokens: num, completionTokens: num }),
  model: z.string().optional(),
  truncated: z.boolean().optional(),
});

/**
 * Money: a row that cannot be read would be spend left out of the run's totals and caps, so it is
 * refused (before anything is paid), even a line a crash cut short.
 */
export const LEDGER_ROWS: JsonlFile<typeof ledgerRowSchema> = {
  row: 'ledger row',
  schema: ledgerRowSchema,
  torn: 'refuse',
  fix: "restore the line from a backup, or delete it and resume (what it recorded is then not counted against the run's limits)",
};

/** A torn last line after a kill is an answer not saved: dropped, its item asked again. */
export const RESULT_ROWS: JsonlFile<typeof resultRowSchema> = {
  row: 'result row',
  schema: resultRowSchema,
  torn: 'drop',
  fix: 'restore the line, or delete it (a resumed run asks that item again), or start afresh with --fresh',
};

/** A torn line is a reply not saved: dropped, asked for again. */
export const JOURNAL_ROWS: JsonlFile<typeof journalRowSchema> = {
  row: 'saved reply',
  schema: journalRowSchema,
  torn: 'drop',
  fix: 'delete the line (that reply is then asked for again) and resume',
};
