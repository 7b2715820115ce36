/**
 * Prompt text for every LLM contract. Written for this product: the reference's contracts (JSON
 * keys, budgets, what each stage may see) carry over, its wording does not.
 *
 * Every optimizer prompt states the protected-region rule, because the reference only states it in
 * some prompts; our code enforces it anyway (src/engine/skill/applyEdits.ts).
 */
import type { UpdateMode } from './modes';

export const protectedRegionRule = [
  'The skill may contain blocks fenced by `<!-- SLOW_UPDATE_START -->` / `<!-- SLOW_UPDATE_END -->` or',
  '`<!-- APPENDIX_START -->` / `<!-- APPENDIX_END -->`. Those blocks are maintained by a separate process:',
  'never target, quote, move or reproduce their markers or their text in your proposals.',
].join('\n');

export const jsonOnly = 'Reply with one JSON object and nothing else (a ```json fenced block is fine).';

export function payloadLabel(mode: UpdateMode): string {
  return mode === 'patch'
    ? 'edits'
    : mode === 'rewrite_from_suggestions'
      ? 'suggestions'
      : 'skill candidates';
}

export const editOpsSpec = [
  'Each edit is one of:',
  '  {"op": "append", "content": "<new text>"}',
  '  {"op": "insert_after", "target": "<exact text copied from the skill>", "content": "<new text>"}',
  '  {"op": "replace", "target": "<exact text copied from the skill>", "content": "<replacement>"}',
  '  {"op": "delete", "target": "<exact text copied from the skill>"}',
  '`target` must be copied character for character from the current skill and must occur exactly once in it;',
  'pick a whole line or sentence that is unique. Keep each edit small and self-contained.',
].join('\n');

export const suggestionSpec = [
  'Each suggestion is {"type": "add_rule" | "remove_rule" | "merge_rules" | "reorganize" | "compress" | "clarify",',
  '"title": "<short name>", "motivation": "<evidence it rests on>", "instruction": "<what to change, concretely>",',
  '"priority_hint": "high" | "medium" | "low"}.',
].join('\n');

export const candidateSpec = [
  'A skill candidate is {"title": "<short name>", "change_summary": ["<change>", ...],',
  '"new_skill": "<the complete new skill document>"}.',
].join('\n');

export function itemSpec(mode: UpdateMode): string {
  return mode === 'patch'
    ? editOpsSpec
    : mode === 'rewrite_from_suggestions'
      ? suggestionSpec
      : candidateSpec;
}

export function metaSkillBlock(metaSkill: string | undefined): string {
  if (!metaSkill?.trim()) return '';
  return [
    '## Optimizer Meta Skill',
    'Notes you wrote for yourself at the end of the previous epoch about which kinds of changes help on this',
    'task family. Lean on them when the evidence is ambiguous; clear evidence in front of you wins.',
    '',
    metaSkill.trim(),
  ].join('\n');
}

export function section(title: string, body: string): string {
  return `## ${title}\n${body.trim()}`;
}

/** Join non-empty blocks with blank lines. */
export function blocks(...parts: Array<string | undefined | false>): string {
  return parts.filter((p): p is string => typeof p === 'string' && p.trim().length > 0).join('\n\n');
}
