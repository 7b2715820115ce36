/**
 * Prompt text of the activation track: the skill listing a chat target sees (the shape agent
 * hosts use: skills by name and description, and a function that loads one), and the optimizer's
 * request for a better description.
 */
import type { ToolSpec } from '../llm/types';
import { jsonOnly } from './shared';

export const LOAD_SKILL_TOOL = 'load_skill';

/** The function a chat target calls to open a skill, as an agent host's skill tool. */
export function loadSkillTool(names: readonly string[]): ToolSpec {
  return {
    name: LOAD_SKILL_TOOL,
    description:
      'Open one of the available skills and read its full instructions. Call it before answering when a skill fits the request.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', enum: [...names], description: 'the skill to open' } },
      required: ['name'],
    },
  };
}

/**
 * The system prompt of a chat target's trigger run: the available skills by name and description
 * only, cut at the host's budget for all descriptions as the hosts cut them.
 */
export function skillListingPrompt(
  skills: ReadonlyArray<{ name: string; description: string }>,
  budgetChars: number,
): string {
  let left = budgetChars;
  const entries = skills.map((s) => {
    const shown = s.description.slice(0, Math.max(0, left));
    left -= shown.length;
    return `<skill>\n<name>${s.name}</name>\n<description>${shown}</description>\n</skill>`;
  });
  return [
    "You are a helpful assistant working in the user's project. Skills are folders of instructions for",
    `particular kinds of work. Only their names and descriptions are listed here; call \`${LOAD_SKILL_TOOL}\``,
    "with a skill's name to read its instructions when the user's request is the kind of work its description",
    'covers. Do not open a skill the request does not need; answer such requests directly.',
    '',
    '<available_skills>',
    ...entries,
    '</available_skills>',
  ].join('\n');
}

export function describeSystemPrompt(maxChars: number): string {
  return [
    "You write the `description` of an agent skill. An agent sees only each skill's name and description when it",
    'decides whether to open the skill for a request, so the description alone must make the agent open it for',
    'the requests it serves and leave it closed for the others. Say what the skill does and when to use it, in',
    'the words users actually write (the kinds of tasks, files, tools and phrasings), and where requests that',
    'look similar are out of scope, say so. You are shown the current description and how it did on sample',
    'requests: those where the skill should have loaded and did not, those where it loaded but should not have,',
    'and those it got right. Generalise from them; do not list the sample requests verbatim. Keep what works.',
    `Plain text, at most ${maxChars} characters, no XML tags, no line breaks.`,
    '\n\nOutput shape: {"reasoning": "<what went wrong and what you changed>", "description": "<the new description>"}',
    '\n\n' + jsonOnly,
  ].join(' ');
}

export interface DescribeCase {
  query: string;
  shouldTrigger: boolean;
  /** Runs that loaded the skill, of the runs that answered. */
  loads: number;
  runs: number;
}

export function describeUserPrompt(input: {
  name: string;
  description: string;
  bodyExcerpt: string;
  cases: readonly DescribeCase[];
  trainRate: number | undefined;
  maxChars: number;
}): string {
  const line = (c: DescribeCase): string => `- "${c.query}" (loaded in ${c.loads} of ${c.runs} runs)`;
  const missed = input.cases.filter((c) => c.shouldTrigger && c.loads < c.runs);
  const false_ = input.cases.filter((c) => !c.shouldTrigger && c.loads > 0);
  const right = input.cases.filter((c) => !missed.includes(c) && !false_.includes(c));
  const section = (title: string, cs: DescribeCase[]): string =>
    `## ${title}\n${cs.length ? cs.map(line).join('\n') : '(none)'}`;
  return [
    `# Skill \`${input.name}\``,
    `## Current description (${input.description.length} characters)\n${input.description}`,
    `## What the skill's instructions say (start)\n${input.bodyExcerpt}`,
    `## Trigger rate on these requests: ${input.trainRate === undefined ? 'unknown' : input.trainRate.toFixed(3)}`,
    section('Should have loaded, did not (or not always)', missed),
    section('Loaded, should not have', false_),
    section('Right', right),
    `Write the new description: at most ${input.maxChars} characters.`,
  ].join('\n\n');
}
