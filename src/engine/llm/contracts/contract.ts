/**
 * The JSON contracts of the optimizer's LLM calls (reference §1.9), as zod schemas shaped exactly
 * like the reference's JSON so run folders stay interchangeable. Objects are loose: unknown fields
 * are kept, so a saved raw reply looks like the model wrote it.
 *
 * Validation is stricter than the reference where a bad value would only surface later (edits are
 * checked per op at parse time, §12 item 22) and more forgiving where the intent is unambiguous
 * (numeric strings, a lone string where a list is expected, `null` for an absent field).
 *
 * This module: what a contract is, and the tolerant field readers every contract is built from. The
 * contracts themselves are grouped by stage family: reflect.ts, update.ts, epochEnd.ts; the items
 * they carry are in payload.ts.
 */
import { z } from 'zod';
import type { Stage } from '../types';

export type ContractName =
  | 'analyst'
  | 'merge'
  | 'ranking'
  | 'rewrite'
  | 'slow_update'
  | 'meta_skill'
  | 'lr_autonomous'
  | 'appendix_consolidate'
  | 'deep_reflect'
  | 'meta_reflect'
  | 'judge'
  | 'describe';

export interface Contract<T> {
  readonly name: ContractName;
  readonly stage: Stage;
  readonly schema: z.ZodType<T>;
  /** The expected JSON shape, compact, for the re-ask message. */
  describe(): string;
}

// ── value helpers ────────────────────────────────────────────────────────────────────────────

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

export const mustBe =
  (what: string) =>
  (iss: { input?: unknown }): string =>
    iss.input === undefined ? `required (${what})` : `expected ${what}, got ${kindOf(iss.input)}`;

export const nullToUndefined = (v: unknown): unknown => (v === null ? undefined : v);

/** A string field; an array of strings is joined by newlines (models sometimes split prose). */
export const text = (): z.ZodType<string> =>
  z.preprocess(
    (v) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join('\n') : v),
    z.string({ error: mustBe('a string') }),
  );

export const nonEmptyText = (): z.ZodType<string> =>
  text().refine((s) => s.trim().length > 0, { message: 'must not be empty' });

export const optionalText = (): z.ZodType<string | undefined> =>
  z.preprocess(nullToUndefined, text().optional());

/** Reasoning is informative only: absent or null reads as ''. */
export const reasoning = (): z.ZodType<string> => z.preprocess((v) => v ?? '', text());

/** A list of strings; a lone string becomes a one-item list, numbers are stringified. */
export const stringList = (): z.ZodType<string[]> =>
  z.preprocess(
    (v) => {
      if (v === null || v === undefined) return [];
      if (typeof v === 'string') return v.trim() ? [v] : [];
      if (Array.isArray(v)) return (v as unknown[]).map((x) => (typeof x === 'number' ? String(x) : x));
      return v;
    },
    z.array(z.string({ error: mustBe('a string') }), { error: mustBe('a list of strings') }),
  );

/** Integers as models write them: 3, 3.0, "3". Booleans and fractions are refused. */
function toInteger(v: unknown): unknown {
  if (typeof v === 'string' && /^\s*-?\d+(?:\.0+)?\s*$/.test(v)) return Number(v);
  return v;
}

export const integer = (what: string): z.ZodType<number> =>
  z.preprocess(
    toInteger,
    z.number({ error: mustBe(what) }).int({ message: `expected ${what}, got a fraction` }),
  );

/** `support_count`: display-only support estimate; fractions are truncated, then at least 1. */
export const supportCount = (): z.ZodType<number | undefined> =>
  z.preprocess(
    (v) => {
      const n = toInteger(nullToUndefined(v));
      return typeof n === 'number' && Number.isFinite(n) ? Math.max(1, Math.trunc(n)) : n;
    },
    z.number({ error: mustBe('an integer ≥ 1') }).optional(),
  );

/** Lower-cased, trimmed enum (models capitalise freely). */
export function looseEnum<const T extends readonly [string, ...string[]]>(values: T): z.ZodType<T[number]> {
  return z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.enum(values, {
      error: (iss) =>
        iss.input === undefined
          ? `required (one of ${values.join(', ')})`
          : `expected one of ${values.join(', ')}, got ${JSON.stringify(iss.input)}`,
    }),
  );
}
