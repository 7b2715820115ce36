/**
 * The JSON contracts of the optimizer's LLM calls (reference §1.9), as zod schemas shaped exactly
 * like the reference's JSON so run folders stay interchangeable. Objects are loose: unknown fields
 * are kept, so a saved raw reply looks like the model wrote it.
 *
 * Validation is stricter than the reference where a bad value would only surface later (edits are
 * checked per op at parse time, §12 item 22) and more forgiving where the intent is unambiguous
 * (numeric strings, a lone string where a list is expected, `null` for an absent field).
 *
 * Edit rules per op:
 * - `append`: non-empty `content`.
 * - `insert_after`: non-empty `target` and non-empty `content`.
 * - `replace`: non-empty `target`; `content` must be present but may be empty, which removes the
 *   target text exactly as `delete` would. Refusing it would force a re-ask for a reply whose
 *   meaning is clear.
 * - `delete`: non-empty `target`.
 * - `op` is matched case-insensitively; anything else is invalid.
 */
import { z } from 'zod';
import { payloadKey, type UpdateMode } from '../prompts/modes';
import type { Stage } from './types';

export { payloadKey };
export type { UpdateMode };

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
  | 'meta_reflect';

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

const mustBe =
  (what: string) =>
  (iss: { input?: unknown }): string =>
    iss.input === undefined ? `required (${what})` : `expected ${what}, got ${kindOf(iss.input)}`;

const nullToUndefined = (v: unknown): unknown => (v === null ? undefined : v);

/** A string field; an array of strings is joined by newlines (models sometimes split prose). */
const text = (): z.ZodType<string> =>
  z.preprocess(
    (v) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join('\n') : v),
    z.string({ error: mustBe('a string') }),
  );

const nonEmptyText = (): z.ZodType<string> =>
  text().refine((s) => s.trim().length > 0, { message: 'must not be empty' });

const optionalText = (): z.ZodType<string | undefined> => z.preprocess(nullToUndefined, text().optional());

/** Reasoning is informative only: absent or null reads as ''. */
const reasoning = (): z.ZodType<string> => z.preprocess((v) => v ?? '', text());

/** A list of strings; a lone string becomes a one-item list, numbers are stringified. */
const stringList = (): z.ZodType<string[]> =>
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

const integer = (what: string): z.ZodType<number> =>
  z.preprocess(
    toInteger,
    z.number({ error: mustBe(what) }).int({ message: `expected ${what}, got a fraction` }),
  );

/** `support_count`: display-only support estimate; fractions are truncated, then at least 1. */
const supportCount = (): z.ZodType<number | undefined> =>
  z.preprocess(
    (v) => {
      const n = toInteger(nullToUndefined(v));
      return typeof n === 'number' && Number.isFinite(n) ? Math.max(1, Math.trunc(n)) : n;
    },
    z.number({ error: mustBe('an integer ≥ 1') }).optional(),
  );

/** Lower-cased, trimmed enum (models capitalise freely). */
function looseEnum<const T extends readonly [string, ...string[]]>(values: T): z.ZodType<T[number]> {
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

// ── payload items ────────────────────────────────────────────────────────────────────────────

export const EDIT_OPS = ['append', 'insert_after', 'replace', 'delete'] as const;
export type EditOp = (typeof EDIT_OPS)[number];
export const SOURCE_TYPES = ['failure', 'success', 'mixed'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];
export const SUGGESTION_TYPES = [
  'add_rule',
  'remove_rule',
  'merge_rules',
  'reorganize',
  'compress',
  'clarify',
] as const;
export type SuggestionType = (typeof SUGGESTION_TYPES)[number];
export const PRIORITIES = ['high', 'medium', 'low'] as const;

const optionalSource = (): z.ZodType<SourceType | undefined> =>
  z.preprocess(nullToUndefined, looseEnum(SOURCE_TYPES).optional());

/** Fields every payload item may carry once merged (§2.1). */
const provenanceFields = {
  support_count: supportCount(),
  source_type: optionalSource(),
};

export interface Edit {
  op: EditOp;
  target?: string;
  content?: string;
  support_count?: number;
  source_type?: SourceType;
  [key: string]: unknown;
}

const editSchema: z.ZodType<Edit> = z
  .looseObject(
    {
      op: looseEnum(EDIT_OPS),
      target: optionalText(),
      content: optionalText(),
      ...provenanceFields,
    },
    { error: mustBe('an edit object') },
  )
  .superRefine((e, ctx) => {
    const filled = (s: string | undefined): boolean => s !== undefined && s.trim().length > 0;
    const need = (key: 'target' | 'content', ok: boolean, what: string): void => {
      if (!ok) ctx.addIssue({ code: 'custom', path: [key], message: `op "${e.op}" needs ${what}` });
    };
    if (e.op === 'append') need('content', filled(e.content), 'a non-empty content');
    if (e.op === 'insert_after') {
      need('target', filled(e.target), 'a non-empty target (text to insert after)');
      need('content', filled(e.content), 'a non-empty content');
    }
    if (e.op === 'replace') {
      need('target', filled(e.target), 'a non-empty target (exact text to replace)');
      need('content', e.content !== undefined, 'a content (the replacement text; "" removes the target)');
    }
    if (e.op === 'delete') need('target', filled(e.target), 'a non-empty target (exact text to delete)');
  });

export interface Suggestion {
  type: SuggestionType;
  title?: string;
  motivation?: string;
  instruction: string;
  priority_hint?: (typeof PRIORITIES)[number];
  support_count?: number;
  source_type?: SourceType;
  [key: string]: unknown;
}

const suggestionSchema: z.ZodType<Suggestion> = z.looseObject(
  {
    type: looseEnum(SUGGESTION_TYPES),
    title: optionalText(),
    motivation: optionalText(),
    instruction: nonEmptyText(),
    priority_hint: z.preprocess(nullToUndefined, looseEnum(PRIORITIES).optional()),
    ...provenanceFields,
  },
  { error: mustBe('a suggestion object') },
);

export interface SkillCandidate {
  title?: string;
  change_summary: string[];
  new_skill: string;
  support_count?: number;
  source_type?: SourceType;
  [key: string]: unknown;
}

const candidateSchema: z.ZodType<SkillCandidate> = z.looseObject(
  {
    title: optionalText(),
    change_summary: stringList(),
    new_skill: nonEmptyText(),
    ...provenanceFields,
  },
  { error: mustBe('a skill candidate object') },
);

export type PayloadItem = Edit | Suggestion | SkillCandidate;

function itemSchema(mode: UpdateMode): z.ZodType<PayloadItem> {
  if (mode === 'patch') return editSchema;
  return mode === 'rewrite_from_suggestions' ? suggestionSchema : candidateSchema;
}

function itemShape(mode: UpdateMode): string {
  if (mode === 'patch') {
    return [
      '{"op": "append", "content": string}',
      '| {"op": "insert_after", "target": string, "content": string}',
      '| {"op": "replace", "target": string, "content": string}',
      '| {"op": "delete", "target": string}',
      '(target = exact text copied from the current skill)',
    ].join('\n      ');
  }
  if (mode === 'rewrite_from_suggestions') {
    return `{"type": ${SUGGESTION_TYPES.join('|')}, "title": string, "motivation": string, "instruction": string, "priority_hint": high|medium|low}`;
  }
  return '{"title": string, "change_summary": [string], "new_skill": string (the complete new skill document)}';
}

const listOf = (mode: UpdateMode): z.ZodType<PayloadItem[]> =>
  z.array(itemSchema(mode), { error: mustBe(`a list of ${mode === 'patch' ? 'edit objects' : 'objects'}`) });

// ── contracts ────────────────────────────────────────────────────────────────────────────────

/** `patch` / merge body: `{reasoning, <payload key>: [...]}`. */
export interface PatchBody {
  reasoning: string;
  [key: string]: unknown;
}

export interface FailureSummary {
  failure_type?: string;
  count?: number;
  description?: string;
  [key: string]: unknown;
}

export interface AnalystReply {
  batch_size?: number;
  failure_summary?: FailureSummary[];
  success_patterns?: string[];
  /** Absent only when the contract allows an appendix-notes-only reply. */
  patch?: PatchBody;
  appendix_notes?: string[];
  [key: string]: unknown;
}

/** Appendix notes as the reference accepts them: strings, `{note}` / `{content}` objects, or one string. */
const notesList = (): z.ZodType<string[]> =>
  z.preprocess(
    (v) => {
      const list = typeof v === 'string' ? [v] : v;
      if (!Array.isArray(list)) return list;
      return list
        .map((n: unknown) => {
          if (n && typeof n === 'object' && !Array.isArray(n)) {
            const o = n as Record<string, unknown>;
            return o.note ?? o.content;
          }
          return n;
        })
        .filter((n) => !(typeof n === 'string' && n.trim() === ''));
    },
    z.array(z.string({ error: mustBe('a string note') }), { error: mustBe('a list of strings') }),
  );

function patchBodySchema(mode: UpdateMode): z.ZodType<PatchBody> {
  // The payload key is computed, which zod cannot type; the shape is {reasoning, <key>: items[]}.
  const shape = { reasoning: reasoning(), [payloadKey(mode)]: listOf(mode) };
  return z.looseObject(shape, { error: mustBe('an object') }) as unknown as z.ZodType<PatchBody>;
}

const failureSummarySchema = (): z.ZodType<FailureSummary[]> =>
  z.preprocess(
    (v) =>
      Array.isArray(v) ? (v as unknown[]).map((x) => (typeof x === 'string' ? { description: x } : x)) : v,
    z.array(
      z.looseObject(
        {
          failure_type: optionalText(),
          count: z.preprocess(nullToUndefined, integer('an integer').optional()),
          description: optionalText(),
        },
        { error: mustBe('an object') },
      ),
      { error: mustBe('a list of objects') },
    ),
  );

export interface AnalystOptions {
  /** Skill-aware reflection (§5.4): a reply may carry only `appendix_notes` and no `patch`. */
  appendixNotes?: boolean;
}

export function analystContract(
  mode: UpdateMode,
  kind: 'failure' | 'success',
  options: AnalystOptions = {},
): Contract<AnalystReply> {
  const key = payloadKey(mode);
  const body = patchBodySchema(mode);
  const base = z.looseObject({
    batch_size: z.preprocess(nullToUndefined, integer('an integer').optional()),
    failure_summary: z.preprocess(nullToUndefined, failureSummarySchema().optional()),
    success_patterns: z.preprocess(nullToUndefined, stringList().optional()),
    patch: options.appendixNotes ? z.preprocess(nullToUndefined, body.optional()) : body,
    appendix_notes: z.preprocess(nullToUndefined, notesList().optional()),
  });
  const schema = options.appendixNotes
    ? base.superRefine((v, ctx) => {
        if (v.patch === undefined && !(v.appendix_notes && v.appendix_notes.length > 0)) {
          ctx.addIssue({
            code: 'custom',
            path: ['patch'],
            message: 'required (or a non-empty appendix_notes list)',
          });
        }
      })
    : base;
  const summary =
    kind === 'failure'
      ? '"failure_summary": [{"failure_type": string, "count": int, "description": string}],'
      : '"success_patterns": [string],';
  const budgetNote =
    mode === 'full_rewrite_minibatch'
      ? 'one candidate with the complete rewritten skill'
      : 'within the budget';
  return {
    name: 'analyst',
    stage: 'analyst',
    schema: schema,
    describe: () =>
      [
        '{',
        '  "batch_size": int,  // trajectories analysed',
        `  ${summary}`,
        '  "patch": {',
        '    "reasoning": string,',
        `    "${key}": [  // ${budgetNote}`,
        `      ${itemShape(mode)}`,
        '    ]',
        '  }' + (options.appendixNotes ? ',' : ''),
        ...(options.appendixNotes
          ? ['  "appendix_notes": [string]  // optional execution-lapse reminders']
          : []),
        '}',
      ].join('\n'),
  };
}

export function mergeContract(mode: UpdateMode): Contract<PatchBody> {
  const key = payloadKey(mode);
  return {
    name: 'merge',
    stage: 'merge',
    schema: patchBodySchema(mode),
    describe: () =>
      [
        '{',
        '  "reasoning": string,',
        `  "${key}": [  // each item may also carry "support_count": int and "source_type": failure|success`,
        `    ${itemShape(mode)}`,
        '  ]',
        '}',
      ].join('\n'),
  };
}

export interface RankingReply {
  reasoning: string;
  selected_indices: number[];
  [key: string]: unknown;
}

export function rankingContract(): Contract<RankingReply> {
  return {
    name: 'ranking',
    stage: 'ranking',
    schema: z.looseObject({
      reasoning: reasoning(),
      selected_indices: z.preprocess(
        (v) => (typeof v === 'number' || typeof v === 'string' ? [v] : v),
        z
          .array(integer('an integer index'), { error: mustBe('a list of integer indices') })
          .min(1, { message: 'select at least one index' }),
      ),
    }),
    describe: () => '{"reasoning": string, "selected_indices": [int, ...]  // 0-based, most important first}',
  };
}

export interface RewriteReply {
  reasoning: string;
  change_summary: string[];
  new_skill: string;
  [key: string]: unknown;
}

export function rewriteContract(): Contract<RewriteReply> {
  return {
    name: 'rewrite',
    stage: 'rewrite',
    schema: z.looseObject({
      reasoning: reasoning(),
      change_summary: stringList(),
      new_skill: nonEmptyText(),
    }),
    describe: () =>
      '{"reasoning": string, "change_summary": [string], "new_skill": string  // the complete new skill document}',
  };
}

export interface SlowUpdateReply {
  reasoning: string;
  slow_update_content: string;
  [key: string]: unknown;
}

export function slowUpdateContract(): Contract<SlowUpdateReply> {
  return {
    name: 'slow_update',
    stage: 'slow_update',
    schema: z.looseObject({ reasoning: reasoning(), slow_update_content: nonEmptyText() }),
    describe: () =>
      '{"reasoning": string, "slow_update_content": string  // the new guidance for the protected block}',
  };
}

export interface MetaSkillReply {
  reasoning: string;
  meta_skill_content: string;
  [key: string]: unknown;
}

export function metaSkillContract(): Contract<MetaSkillReply> {
  return {
    name: 'meta_skill',
    stage: 'meta_skill',
    schema: z.looseObject({ reasoning: reasoning(), meta_skill_content: nonEmptyText() }),
    describe: () => '{"reasoning": string, "meta_skill_content": string  // the optimizer memory}',
  };
}

/**
 * The reference's lenient learning-rate parse (§3.4): booleans refused; integers and integral
 * floats taken as is; in a string, the first integer; negative values become 0.
 */
export function parseLearningRate(v: unknown): number | null {
  let n: number | null = null;
  if (typeof v === 'number' && Number.isInteger(v)) n = v;
  else if (typeof v === 'string') {
    const m = /-?\d+/.exec(v);
    n = m ? Number(m[0]) : null;
  }
  return n === null ? null : Math.max(0, n);
}

export interface LrAutonomousReply {
  learning_rate: number;
  reasoning: string;
  confidence: string;
  risk_notes: string[];
  [key: string]: unknown;
}

export function lrAutonomousContract(): Contract<LrAutonomousReply> {
  return {
    name: 'lr_autonomous',
    stage: 'lr_autonomous',
    schema: z.looseObject({
      learning_rate: z.preprocess(
        (v) => parseLearningRate(v) ?? v,
        z.number({ error: mustBe('a whole number ≥ 0') }).int({ message: 'expected a whole number ≥ 0' }),
      ),
      reasoning: reasoning(),
      confidence: z.preprocess((v) => (typeof v === 'number' ? String(v) : (v ?? '')), text()),
      risk_notes: stringList(),
    }),
    describe: () =>
      '{"learning_rate": int  // how many items to apply now, ≥ 0\n "reasoning": string, "confidence": string, "risk_notes": [string]}',
  };
}

export interface AppendixConsolidateReply {
  appendix_notes: string[];
  [key: string]: unknown;
}

export function appendixConsolidateContract(): Contract<AppendixConsolidateReply> {
  return {
    name: 'appendix_consolidate',
    stage: 'appendix_consolidate',
    schema: z.looseObject({ appendix_notes: notesList() }),
    describe: () => '{"appendix_notes": [string]  // the consolidated notes, shortest faithful list}',
  };
}

// ── deep reflection and meta reflect (issue 8) ───────────────────────────────────────────────

export const CONFIDENCES = ['low', 'medium', 'high'] as const;
export type Confidence = (typeof CONFIDENCES)[number];

/** One candidate systemic cause, with the trajectories it rests on. */
export interface Hypothesis {
  cause: string;
  evidence_ids: string[];
  confidence: Confidence;
  [key: string]: unknown;
}

export interface HypothesesReply {
  reasoning: string;
  hypotheses: Hypothesis[];
  [key: string]: unknown;
}

const hypothesisSchema: z.ZodType<Hypothesis> = z.looseObject(
  {
    cause: nonEmptyText(),
    evidence_ids: stringList(),
    // An omitted confidence is not worth a re-ask: the cause and its evidence are what count.
    confidence: z.preprocess((v) => v ?? 'medium', looseEnum(CONFIDENCES)),
  },
  { error: mustBe('a hypothesis object') },
);

/** Deep reflection's hypothesis turns: `{reasoning, hypotheses: [{cause, evidence_ids, confidence}]}`. */
export function deepReflectContract(): Contract<HypothesesReply> {
  return {
    name: 'deep_reflect',
    stage: 'deep_reflect',
    schema: z.looseObject({
      reasoning: reasoning(),
      hypotheses: z.array(hypothesisSchema, { error: mustBe('a list of hypothesis objects') }),
    }),
    describe: () =>
      [
        '{',
        '  "reasoning": string,',
        '  "hypotheses": [  // may be empty when no cause is systemic',
        '    {"cause": string, "evidence_ids": [string]  // trajectory ids, "confidence": low|medium|high}',
        '  ]',
        '}',
      ].join('\n'),
  };
}

/** Meta reflect: higher-level edits over an epoch, in the patch shape `{reasoning, edits: [...]}`. */
export function metaReflectContract(): Contract<PatchBody> {
  return {
    name: 'meta_reflect',
    stage: 'meta_reflect',
    schema: patchBodySchema('patch'),
    describe: () =>
      ['{', '  "reasoning": string,', '  "edits": [', `    ${itemShape('patch')}`, '  ]', '}'].join('\n'),
  };
}
