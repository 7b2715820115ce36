import type { UpdateMode } from './modes';
import { itemSpec, jsonOnly, protectedRegionRule } from './shared';
import { payloadKey } from './modes';

/** System prompt for the frozen target model: the skill is its procedural memory. */
export function targetSystemPrompt(skill: string, answerTag = 'answer'): string {
  const skillSection = skill.trim() ? `\n\n## Skill\n${skill.trim()}` : '';
  return (
    [
      'You solve one task at a time. Work it out carefully, then give the final answer on its own, wrapped as',
      `<${answerTag}>...</${answerTag}>. Apply the skill below whenever it is relevant; it was written for tasks like this.`,
    ].join(' ') + skillSection
  );
}

function budgetLine(mode: UpdateMode): string {
  if (mode === 'full_rewrite_minibatch')
    return 'Propose exactly one complete replacement skill in `skill_candidates` (a list with one item).';
  return `Propose at most the number of ${mode === 'patch' ? 'edits' : 'suggestions'} allowed by the budget in the message, fewer if fewer are justified.`;
}

export function analystSystemPrompt(kind: 'failure' | 'success', mode: UpdateMode): string {
  const key = payloadKey(mode);
  const role =
    kind === 'failure'
      ? [
          'You are the optimizer of a skill document: the instructions a frozen model follows when it solves tasks.',
          'You are shown trajectories in which the model FAILED, each with its task, its answer and why it was scored',
          'wrong. Find the causes that recur across trajectories (a missing rule, a wrong rule, a rule the model',
          'ignored because it was vague, an answer-format problem) and turn them into changes to the skill that would',
          'have prevented several of these failures, not just one. Prefer general, checkable instructions over',
          'examples that mention a single task; never copy an expected answer into the skill.',
        ]
      : [
          'You are the optimizer of a skill document: the instructions a frozen model follows when it solves tasks.',
          'You are shown trajectories in which the model SUCCEEDED. Find behaviour that made these succeed and that',
          'the skill does not yet state, and propose only changes that make such behaviour reliable. Be conservative:',
          'do not restate what the skill already says, and propose nothing if nothing is missing.',
        ];
  const shape =
    kind === 'failure'
      ? `{"batch_size": <number of trajectories you analysed>, "failure_summary": [{"failure_type": "rule_missing" | "rule_wrong" | "rule_ignored" | "answer_format" | "other", "count": <int>, "description": "<cause, in one sentence>"}], "patch": {"reasoning": "<why these changes>", "${key}": [...]}}`
      : `{"batch_size": <number of trajectories you analysed>, "success_patterns": ["<pattern>"], "patch": {"reasoning": "<why these changes>", "${key}": [...]}}`;
  return [
    role.join(' '),
    budgetLine(mode),
    itemSpec(mode),
    protectedRegionRule,
    `Output shape: ${shape}`,
    jsonOnly,
  ].join('\n\n');
}

export function mergeSystemPrompt(group: 'failure' | 'success' | 'final', mode: UpdateMode): string {
  const key = payloadKey(mode);
  const intro =
    group === 'final'
      ? [
          'You combine two pre-merged groups of proposed changes to a skill document: one derived from failed',
          'trajectories (high priority) and one from successful trajectories. Where they touch the same text, keep the',
          'failure-derived change. Add success-derived changes only when they cover new ground. Changes produced at a',
          'higher merge level summarise more evidence.',
        ]
      : [
          `You merge several sets of proposed changes to a skill document, each derived from a different minibatch of ${group === 'failure' ? 'failed' : 'successful'} trajectories.`,
          'Remove duplicates, keeping the clearest wording; resolve contradictions; keep every distinct insight; favour',
          'changes that several sets propose. No two resulting changes may touch the same text.',
          group === 'success'
            ? 'Be conservative: keep only patterns the skill does not already state.'
            : 'Failure-derived changes fix observed errors; keep them precise.',
        ];
  const carry =
    mode === 'full_rewrite_minibatch'
      ? 'Produce one complete skill that unites the best of the candidates.'
      : `Give every resulting item a "support_count" (how many trajectories, across the inputs, support it) and a "source_type" (${group === 'final' ? '"failure" or "success", carried from its input' : `"${group}"`}).`;
  return [
    intro.join(' '),
    carry,
    itemSpec(mode),
    protectedRegionRule,
    `Output shape: {"reasoning": "<what you merged and dropped>", "${key}": [...]}`,
    jsonOnly,
  ].join('\n\n');
}

export function rankingSystemPrompt(mode: UpdateMode): string {
  return [
    'You choose which proposed changes to a skill document to apply now, because only a limited number may be',
    'applied per step (the rest are discarded). Rank by, in order: how many failures the change addresses across',
    'tasks (systemic impact and support), whether it fills a gap the skill does not cover, how general it is, and',
    'how directly the target model can act on it.',
    mode === 'patch' ? 'Avoid picking two edits that touch the same text.' : '',
    '\n\nOutput shape: {"reasoning": "<why>", "selected_indices": [<0-based indices, most important first>]}',
    '\n\n' + jsonOnly,
  ].join(' ');
}

export function rewriteSystemPrompt(): string {
  return [
    'You rewrite a skill document by carrying out a list of selected change suggestions. Apply every suggestion',
    'faithfully, keep everything else that still holds, and keep the document compact and well organised. Preserve',
    'any SLOW_UPDATE or APPENDIX block exactly as it is, markers included, at its place.',
    '\n\nOutput shape: {"reasoning": "<why>", "change_summary": ["<change>", ...], "new_skill": "<the complete document>"}',
    '\n\n' + jsonOnly,
  ].join(' ');
}

export function slowUpdateSystemPrompt(): string {
  return [
    'You are a strategic advisor for a skill document that a frozen model follows. You see how the same tasks went',
    'under the skill at the end of the previous epoch and under the current one: which improved, which regressed,',
    'which fail under both, which pass under both. First judge whether the guidance currently in the protected block',
    'helped or hurt. Then write new guidance that will REPLACE that block. Address the model directly. Priorities:',
    '(1) prevent the regressions, (2) fix persistent failures, (3) keep what makes successes work. Do not repeat',
    'rules the body already states; do not include the block markers.',
    '\n\nOutput shape: {"reasoning": "<your judgement>", "slow_update_content": "<the new guidance, Markdown>"}',
    '\n\n' + jsonOnly,
  ].join(' ');
}

export function metaSkillSystemPrompt(): string {
  return [
    'You keep a short memory for the OPTIMIZER of a skill document (not for the model that follows the skill). From',
    'how the skill changed over the last epoch and how task outcomes moved, record which kinds of edits helped and',
    'which hurt on this task family, the right level of abstraction for rules, what to repair first, and which',
    'regressions to guard against. Revise the previous memory rather than appending to it. Keep it compact.',
    '\n\nOutput shape: {"reasoning": "<your judgement>", "meta_skill_content": "<the memory, Markdown>"}',
    '\n\n' + jsonOnly,
  ].join(' ');
}

export function lrAutonomousSystemPrompt(): string {
  return [
    'You decide how many of the proposed changes to a skill document should be applied in this step: the step size.',
    'Large steps move faster but risk regressions that the validation gate will reject; small steps are safer but',
    'slower. Judge from the evidence in the message (train score, number and agreement of proposals, earlier',
    'rejections). There is no default size; decide the count only, not which items.',
    '\n\nOutput shape: {"learning_rate": <integer >= 0>, "reasoning": "<why>", "confidence": "low" | "medium" | "high", "risk_notes": ["<risk>"]}',
    '\n\n' + jsonOnly,
  ].join(' ');
}
