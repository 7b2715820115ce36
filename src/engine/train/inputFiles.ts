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

/** A chat target reads files only as text in its prompt: a binary input file is refused before any call. */
export function checkInputFiles(tasks: readonly TaskItem[], agentTarget: boolean): void {
  if (agentTarget) return;
  for (const task of tasks) {
    const binary = task.files?.find((f) => f.text === undefined);
    if (binary) {
      throw new SkillOptError(
        'tasks',
        `Task "${task.id}" gives the binary input file ${binary.name}, which a chat target cannot read`,
        {
          file: binary.path,
          fix: 'use an agent target (model.target_backend: claude_code_exec, codex_exec, copilot_exec or command), which gets the file in its workspace, or remove the file from the task',
        },
      );
    }
  }
}
