/**
 * How the skill and the task reach the agent: the SKILL.md written into the task's workspace and
 * the prompt, with the task alone (native) or a line naming the skill file first (pointer).
 */
import { stringify as yamlStringify } from 'yaml';
import type { TaskContext } from '../types';

export type Delivery = 'native' | 'pointer';

export const DEFAULT_DESCRIPTION =
  'Guidance for the task in this workspace, learned from earlier attempts. Read it before you start and follow it.';

/** Where a custom command finds the skill: the cross-agent convention. */
export const CUSTOM_SKILL_ROOT = '.agents/skills';

export function renderSkillFile(task: TaskContext, description: string): string {
  // A skill that already brings its own front matter is written unchanged.
  if (/^---\r?\n/.test(task.skill)) return task.skill;
  const front = yamlStringify({ name: task.skillName, description }, { lineWidth: 0 });
  return `---\n${front}---\n\n${task.skill.trimEnd()}\n`;
}

/** The prompt: the task alone (native), or a pointer line to the skill and task.md first. */
export function renderPrompt(
  task: TaskContext,
  delivery: Delivery = 'pointer',
  skillRoot = CUSTOM_SKILL_ROOT,
): string {
  if (delivery === 'native') return task.prompt;
  return `Use the skill in ${skillRoot}/${task.skillName}/SKILL.md. The task is also saved in task.md.\n\n${task.prompt}`;
}
