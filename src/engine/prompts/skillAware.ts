/**
 * Skill-aware reflection (reference §5.4): what the analysts are additionally asked when
 * `optimizer.use_skill_aware_reflection` is on, and the prompts of the appendix consolidation.
 * The section headings are the only words the simulated optimizer looks for.
 */
import { blocks } from './shared';

export const LAPSE_HEADING = '## Defect or lapse';

/** Added to the failure analyst's system prompt. */
const failureSection = [
  LAPSE_HEADING,
  'Before you propose a change for a failure pattern, decide which of two kinds it is.',
  '- SKILL_DEFECT: the skill has no rule for this situation, or its rule is wrong or too vague to act on.',
  '  A model that followed the skill to the letter would still fail. Fix it with a change in `patch`, as usual.',
  '- EXECUTION_LAPSE: the skill already states a correct rule that would have prevented the failure, and the',
  '  model did not apply it (it skipped the rule, broke the answer format the skill asks for, stopped early).',
  '  Do not change the skill body for it. Write a one-line reminder of that existing rule instead.',
  'Ask: "is there a rule in the current skill that, applied, avoids this failure?" Yes means a lapse. When you',
  'cannot tell, treat it as a lapse: never rewrite or remove a sound rule because of a single slip.',
  'Reminders go in a top-level `appendix_notes` list of strings, beside `patch` (not inside it). Each one names',
  'the existing rule and when to apply it; it must not add a new rule. Use [] when there is no lapse. A reply',
  'may hold changes, reminders, both or neither, e.g.',
  '{"batch_size": 3, "failure_summary": [...], "patch": {...}, "appendix_notes": ["<the existing rule, when to apply it>"]}',
].join('\n');

/** Added to the success analyst's system prompt (when `skill_aware_appendix_source` is `both`). */
const successSection = [
  LAPSE_HEADING,
  'If these successes show that an existing rule of the skill is easy to overlook yet decisive, you may add a',
  'top-level `appendix_notes` list of short reminders of such rules (beside `patch`); otherwise use []. A',
  'reminder repeats an existing rule, it never adds one. This does not change what you propose in `patch`.',
].join('\n');

/** The analyst system prompt with the skill-aware section, when it applies to this kind. */
export function withSkillAware(
  system: string,
  kind: 'failure' | 'success',
  aware: { enabled: boolean; source: 'both' | 'failure_only' },
): string {
  if (!appliesTo(kind, aware)) return system;
  return `${system.trimEnd()}\n\n${kind === 'failure' ? failureSection : successSection}`;
}

/** Whether the analyst of this kind is asked for appendix notes. */
export function appliesTo(
  kind: 'failure' | 'success',
  aware: { enabled: boolean; source: 'both' | 'failure_only' },
): boolean {
  return aware.enabled && (kind === 'failure' || aware.source === 'both');
}

export const CONSOLIDATE_SYSTEM = [
  'You tidy the execution-notes appendix of a skill document. Every note reminds the model of a rule the',
  'skill already has and that the model failed to apply. Return a shorter list that keeps every distinct',
  'reminder: join notes that say the same thing, drop repeats, and make each note brief and concrete. Add no',
  'rule and no reminder that is not in the list. Reply with JSON only.',
].join(' ');

export function consolidateUserMessage(notes: readonly string[]): string {
  return blocks(
    `## Execution Notes (${notes.length})\n${notes.map((n, i) => `${i + 1}. ${n}`).join('\n')}`,
    'Return fewer notes than this list has, without losing any distinct reminder.',
  );
}
