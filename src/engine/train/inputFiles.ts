/** A task's input files (skill-creator `files`) as the target sees them, and the check that a chat target can. */
import type { TaskInputFile } from '../data/evalTasks';
import type { TaskItem } from '../data/tasks';
import { SkillOptError } from '../errors';

export function renderInputFiles(files: readonly TaskInputFile[], how: 'inline' | 'workspace'): string {
  if (how === 'workspace') {
    return `Input files (in your working folder):\n${files.map((f) => `- ${f.name}`).join('\n')}`;
  }
  return files
    .map((f) => `File ${f.name}:\n\`\`\`\n${(f.text ?? '').replace(/\n$/, '')}\n\`\`\``)
    .join('\n\n');
}

/** The most text one input file may add to a chat target's prompt (~50k tokens), paid on every call of the task. */
export const MAX_INLINE_CHARS = 200_000;

const AGENT_FIX =
  'use an agent target (model.target_backend: claude_code_exec, codex_exec, copilot_exec or command), which gets the file in its workspace';

/**
 * A chat target reads files only as text in its prompt: a binary input file, or one too large to send
 * with every call, is refused before any call.
 */
export function checkInputFiles(tasks: readonly TaskItem[], agentTarget: boolean): void {
  if (agentTarget) return;
  for (const task of tasks) {
    for (const f of task.files ?? []) {
      if (f.text === undefined) {
        throw new SkillOptError(
          'tasks',
          `Task "${task.id}" gives the binary input file ${f.name}, which a chat target cannot read`,
          {
            file: f.path,
            fix: `${AGENT_FIX}, or remove the file from the task`,
          },
        );
      }
      if (f.text.length > MAX_INLINE_CHARS) {
        throw new SkillOptError(
          'tasks',
          `Task "${task.id}" gives the input file ${f.name} (${f.text.length} characters), too large to send inline with every call (at most ${MAX_INLINE_CHARS})`,
          { file: f.path, fix: `${AGENT_FIX}, or give the task a shorter file` },
        );
      }
    }
  }
}
