/**
 * The items a reflection or merge reply proposes, per update mode (edits, suggestions, skill
 * candidates), and the `{reasoning, <payload key>: [...]}` body that carries them.
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
import { payloadKey, type UpdateMode } from '../../prompts/modes';
import {
  looseEnum,
  mustBe,
  nonEmptyText,
  nullToUndefined,
  optionalText,
  reasoning,
  stringList,
  supportCount,
} from './contract';

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
  /** A skill package's file the edit changes or creates (default SKILL.md); see skill/package/edits.ts. */
  file?: string;
  support_count?: number;
  source_type?: SourceType;
  [key: string]: unknown;
}

export const editSchema: z.ZodType<Edit> = z
  .looseObject(
    {
      op: looseEnum(EDIT_OPS),
      target: optionalText(),
      content: optionalText(),
      file: optionalText(),
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

export function itemShape(mode: UpdateMode): string {
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

/** `patch` / merge body: `{reasoning, <payload key>: [...]}`. */
export interface PatchBody {
  reasoning: string;
  [key: string]: unknown;
}

/** Appendix notes as the reference accepts them: strings, `{note}` / `{content}` objects, or one string. */
export const notesList = (): z.ZodType<string[]> =>
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

export function patchBodySchema(mode: UpdateMode): z.ZodType<PatchBody> {
  // The payload key is computed, which zod cannot type; the shape is {reasoning, <key>: items[]}.
  const shape = { reasoning: reasoning(), [payloadKey(mode)]: listOf(mode) };
  return z.looseObject(shape, { error: mustBe('an object') }) as unknown as z.ZodType<PatchBody>;
}
