/**
 * How the skill and the task reach the agent: the SKILL.md written into the task's workspace and
 * the prompt, with the task alone (native) or a line naming the skill file first (pointer).
 */
import { join } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { copyReadOnlyFile, writeTextFiles } from '../../skill/package/folder';
import { SKILL_FILE, splitPackage } from '../../skill/package/text';
import { writeFileAtomic } from '../../store/atomic';
import type { TaskContext } from '../types';
import { PRESETS } from './presets';

export type Delivery = 'native' | 'pointer';

export const DEFAULT_DESCRIPTION =
  'Guidance for the task in this workspace, learned from earlier attempts. Read it before you start and follow it.';

/** Where a custom command finds the skill: the cross-agent convention (Codex's own folder). */
export const CUSTOM_SKILL_ROOT = PRESETS.codex.skillRoot;

export function renderSkillFile(task: TaskContext, description: string): string {
  // A skill that already brings its own front matter is written unchanged, but for a byte-order
  // mark (a Windows editor's), which would hide the `---` from a host's front-matter reader.
  if (/^\uFEFF?---\r?\n/.test(task.skill)) return task.skill.replace(/^\uFEFF/, '');
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

/**
 * Installs the skill into the workspace's skill directory: a package's every file (the candidate's
 * edited and added files included, read-only files copied from where they were read), then SKILL.md.
 */
export function installSkill(skillDir: string, task: TaskContext, description: string): string {
  const pkg = splitPackage(task.skill);
  writeTextFiles(skillDir, pkg.files);
  for (const f of pkg.readOnly) copyReadOnlyFile(f, join(skillDir, ...f.path.split('/')));
  const skillFile = join(skillDir, SKILL_FILE);
  writeFileAtomic(skillFile, renderSkillFile({ ...task, skill: pkg.skill }, description));
  return skillFile;
}
