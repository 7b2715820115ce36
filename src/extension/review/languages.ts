import type * as vscode from 'vscode';

/**
 * Markdown and the Markdown-based languages VS Code gives agent files: since VS Code 1.10x a file
 * named SKILL.md opens as `skill` (and `.prompt.md`, `.instructions.md`, `.agent.md` have their
 * own ids), all with a grammar that includes Markdown's.
 */
export const skillLanguageIds: readonly string[] = [
  'markdown',
  'skill',
  'instructions',
  'prompt',
  'chatagent',
];

export const skillDocuments: vscode.DocumentSelector = skillLanguageIds.map((language) => ({ language }));

export function isSkillLanguage(languageId: string): boolean {
  return skillLanguageIds.includes(languageId);
}
