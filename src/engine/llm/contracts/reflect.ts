/** Contracts of the calls that read trajectories: the analyst, deep reflection, meta reflect. */
import { z } from 'zod';
import { payloadKey, type UpdateMode } from '../../prompts/modes';
import {
  type Contract,
  integer,
  looseEnum,
  mustBe,
  nonEmptyText,
  nullToUndefined,
  optionalText,
  reasoning,
  stringList,
} from './contract';
import { itemShape, notesList, patchBodySchema, type PatchBody } from './payload';

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
