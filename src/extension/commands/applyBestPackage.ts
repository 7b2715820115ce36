/**
 * Apply Best for a skill folder: the run's `best_skill/` written over the skill folder it trained,
 * every changed or added file in one WorkspaceEdit (Undo brings them all back), after a diff of
 * SKILL.md and a confirmation that lists the other files.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { filesToApply } from '../../engine/skill/package/apply';
import { isSkillFolder } from '../../engine/skill/package/folder';
import type { Ctx } from '../ctx';
import type { RunView } from '../runs/liveState';

export async function applyBestPackage(
  ctx: Ctx,
  run: RunView,
  bestDir: string,
  trained: string | undefined,
  confirm: boolean,
): Promise<boolean> {
  // The run remembers the SKILL.md the person opened, or the folder its config names.
  let skillDir =
    trained && existsSync(trained)
      ? statSync(trained).isDirectory()
        ? trained
        : dirname(trained)
      : undefined;
  if (skillDir && !isSkillFolder(skillDir)) skillDir = undefined;
  if (!skillDir) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      canSelectFiles: false,
      canSelectFolders: true,
      openLabel: 'Apply Best Skill Here',
      title: `Which skill folder should get the best skill of ${run.name}?`,
    });
    skillDir = picked?.[0]?.fsPath;
  }
  if (!skillDir) return false;
  const files = filesToApply(bestDir, skillDir);
  if (!files.length) {
    void vscode.window.showInformationMessage(
      `SkillOpt: ${basename(skillDir)} already equals the best skill of ${run.name}.`,
    );
    return false;
  }
  const skillMd = vscode.Uri.file(join(skillDir, 'SKILL.md'));
  if (files.some((f) => f.path === 'SKILL.md') && existsSync(skillMd.fsPath)) {
    await vscode.commands.executeCommand(
      'vscode.diff',
      skillMd,
      vscode.Uri.file(join(bestDir, 'SKILL.md')),
      `SKILL.md ↔ best skill of ${run.name}`,
      { preview: true },
    );
  }
  const list = files.map((f) => (f.status === 'added' ? `${f.path} (new)` : f.path)).join(', ');
  if (confirm) {
    const choice = await vscode.window.showInformationMessage(
      `Apply the best skill of ${run.name} (score ${run.bestScore?.toFixed(3) ?? '?'}) to the folder ${basename(skillDir)}? ${files.length} file(s) change: ${list}. You can undo it.`,
      'Apply',
      'Cancel',
    );
    if (choice !== 'Apply') return false;
  }
  const edit = new vscode.WorkspaceEdit();
  const meta = { label: `Apply best skill of ${run.name}`, needsConfirmation: false };
  for (const f of files) {
    const uri = vscode.Uri.file(join(skillDir, ...f.path.split('/')));
    if (f.status === 'changed' && !f.bytes.includes(0)) {
      // An open or openable text file is replaced as text, so the editor's Undo covers it.
      const doc = await vscode.workspace.openTextDocument(uri);
      edit.replace(
        uri,
        new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)),
        f.bytes.toString('utf8'),
        meta,
      );
    } else {
      edit.createFile(uri, { overwrite: true, contents: f.bytes }, meta);
    }
  }
  const ok = await vscode.workspace.applyEdit(edit);
  if (!ok) {
    void vscode.window.showErrorMessage(`SkillOpt: VS Code refused the edit to ${basename(skillDir)}.`);
    return false;
  }
  ctx.log.info(`[apply] best skill folder of ${run.dir} applied to ${skillDir}: ${list}`);
  void vscode.window.showInformationMessage(
    `SkillOpt: applied the best skill to ${basename(skillDir)} (${list}). Save the changed files to keep them, or Undo to go back.`,
  );
  return true;
}
