/**
 * Prompts of the two reflection stages the SkillOpt design describes beyond the reference code
 * (issue 8): deep reflection (a multi-turn search for systemic causes before a patch) and meta
 * reflect (higher-level edits over a whole epoch's step history). The headings below are also what
 * the simulated optimizer and the loopback test models key on, so they are exported constants.
 */
import type { UpdateMode } from './modes';
import { payloadKey } from './modes';
import {
  blocks,
  editOpsSpec,
  itemSpec,
  jsonOnly,
  metaSkillBlock,
  payloadLabel,
  protectedRegionRule,
} from './shared';

export const DEEP_FIRST_TURN_HEADING = '## Turn 1: Hypotheses';
export const DEEP_REFINE_HEADING = '## Refinement Round';
export const DEEP_PATCH_HEADING = '## Final Turn: Patch';
export const META_HISTORY_HEADING = '## Epoch Step History';

const hypothesesShape =
  '{"reasoning": "<how you weighed the evidence>", "hypotheses": [{"cause": "<one systemic cause, in one sentence>", "evidence_ids": ["<trajectory id>", ...], "confidence": "low" | "medium" | "high"}]}';

export function deepReflectSystemPrompt(): string {
  return [
    [
      'You are the optimizer of a skill document: the instructions a frozen model follows when it solves tasks.',
      'This is a deep reflection. Over several turns you study a few FAILED and a few SUCCESSFUL trajectories side',
      'by side to find SYSTEMIC causes (what in the skill, or missing from it, explains several failures at once)',
      'before you change anything. A cause is systemic when it explains failures of different tasks. Successes are',
      'your control group: when a success shows the same supposed cause, that cause cannot be what made the others',
      'fail. Cite trajectories by their id. Never copy an expected answer into the skill.',
    ].join(' '),
    [
      'The conversation has three parts: first you state hypotheses; then you are asked, possibly more than once,',
      'to challenge them against the evidence and return a revised list; last you are asked for the changes to the',
      'skill that follow from the hypotheses that survived.',
    ].join(' '),
    protectedRegionRule,
    `Shape of a hypotheses reply: ${hypothesesShape}`,
    jsonOnly,
  ].join('\n\n');
}

export interface DeepOpeningInput {
  skill: string;
  stepBufferText: string;
  metaSkill?: string;
  failures: string;
  failureCount: number;
  successes: string;
  successCount: number;
}

/** The first user turn: all the material, then the request for hypotheses. */
export function deepReflectOpening(input: DeepOpeningInput): string {
  return blocks(
    `## Current Skill\n<current_skill>\n${input.skill.trim()}\n</current_skill>`,
    input.stepBufferText && `## Previous Steps in This Epoch\n${input.stepBufferText}`,
    metaSkillBlock(input.metaSkill),
    `## Failed Trajectories (${input.failureCount} total)\n\n${input.failures}`,
    `## Successful Trajectories (${input.successCount} total)\n\n${input.successes || '(none in this batch)'}`,
    [
      DEEP_FIRST_TURN_HEADING,
      'Compare the failures with one another and with the successes. State up to five hypotheses about systemic',
      'causes. For each, list the ids of the trajectories it rests on (failures that show it, successes that',
      'contrast with it) and how confident you are. Do not propose changes to the skill yet. An empty list is a',
      'valid answer when every failure has its own, unrelated cause.',
      '',
      `Reply as ${hypothesesShape}`,
    ].join('\n'),
  );
}

export function deepReflectRefinePrompt(round: number, rounds: number): string {
  return [
    `${DEEP_REFINE_HEADING} ${round} of ${rounds}`,
    'Challenge each of your current hypotheses against the trajectories above. Does every cited failure really',
    'show the cause? Does a success show the same supposed cause (then it is not the cause)? Do several',
    'hypotheses share one more general cause? Drop what the evidence does not support, merge what belongs',
    'together, and adjust your confidence. If the list survives scrutiny, return it unchanged.',
    '',
    `Reply with the revised list in the same shape: ${hypothesesShape}`,
  ].join('\n');
}

/** The last turn: the analyst's exact JSON shape, so the patch joins the step's other patches. */
export function deepReflectPatchPrompt(mode: UpdateMode, budget: number): string {
  const key = payloadKey(mode);
  const budgetLine =
    mode === 'full_rewrite_minibatch'
      ? 'Return exactly one complete replacement skill in `skill_candidates`.'
      : `Propose at most ${budget} ${payloadLabel(mode)}, fewer if fewer are justified.`;
  return [
    DEEP_PATCH_HEADING,
    'Turn the hypotheses that survived into changes to the skill. Every change must address a systemic cause you',
    'kept; prefer one general, checkable instruction over several narrow ones, and propose nothing for a cause',
    'with low confidence unless it is cheap and safe.',
    '',
    `## Budget\n${budgetLine}`,
    '',
    itemSpec(mode),
    '',
    `Reply as {"batch_size": <number of failed trajectories you analysed>, "failure_summary": [{"failure_type": "rule_missing" | "rule_wrong" | "rule_ignored" | "answer_format" | "other", "count": <int>, "description": "<the cause>"}], "patch": {"reasoning": "<which hypotheses these changes address>", "${key}": [...]}}`,
    jsonOnly,
  ].join('\n');
}

export function metaReflectSystemPrompt(): string {
  return [
    [
      'You are the optimizer of a skill document: the instructions a frozen model follows when it solves tasks.',
      'An epoch of training has ended. You see every step of it: the changes that were tried, which ones a',
      'validation gate kept and which it rejected, and how the selection score moved. Step back from single',
      'failures and propose higher-level edits to the current skill: consolidate rules that were added piecemeal',
      'or overlap into one clear rule or one section; generalise several narrow rules into the principle behind',
      'them; remove text that the history shows does not help (rules that only came with rejected candidates, or',
      'that never moved the score). Never re-propose a change the gate rejected. Keep every rule that the kept',
      'steps show is working. Propose nothing if the skill is already well organised.',
    ].join(' '),
    editOpsSpec,
    protectedRegionRule,
    'Output shape: {"reasoning": "<what the history shows and why these edits>", "edits": [...]}',
    jsonOnly,
  ].join('\n\n');
}

export interface MetaReflectInput {
  skill: string;
  epoch: number;
  budget: number;
  historyText: string;
  metaSkill?: string;
}

export function metaReflectUserMessage(input: MetaReflectInput): string {
  return blocks(
    `## Current Skill\n<current_skill>\n${input.skill.trim()}\n</current_skill>`,
    `## Budget\nPropose at most ${input.budget} edits; a consolidation that deletes several lines and adds one counts every edit.`,
    metaSkillBlock(input.metaSkill),
    `${META_HISTORY_HEADING} (epoch ${input.epoch})\n${input.historyText}`,
  );
}
