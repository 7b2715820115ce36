/**
 * Apply Best for a skill folder: the run's `best_skill/` written over the skill folder it trained.
 * Before anything is written, one diff tab per file that would change (a new file against an empty
 * side) and one confirmation listing them; then exactly those files in one WorkspaceEdit (Undo
 * brings them all back). A file with unsaved changes in an editor is never overwritten: Apply Best
 * refuses and names it. The file lists come from the engine (package/apply.ts), which also refuses
 * a path through a symbolic link, so nothing lands outside the skill folder.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import {
  filesOnlyInSkill,
  filesToApply,
  keepExecBits,
  type FileToApply,
} from '../../engine/skill/package/apply';
import { isSkillFolder } from '../../engine/skill/package/folder';
import type { Ctx } from '../ctx';
import { errorDetail, errorMessage } from '../log';
import type { RunView } from '../runs/liveState';

/** The empty left side of a new file's diff. */
const newFileScheme = 'skillopt-new-file';

/** Registered once at activation: a new file's diff compares against an empty document. */
export function registerNewFileSide(): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(newFileScheme, {
    provideTextDocumentContent: () => '',
  });
}

function label(f: FileToApply): string {
  return f.status === 'added' ? `${f.path} (new)` : f.path;
}

function target(skillDir: string, f: FileToApply): string {
  return join(skillDir, ...f.path.split('/'));
}

/** The files to apply that an editor holds with unsaved changes. */
function unsaved(skillDir: string, files: readonly FileToApply[]): string[] {
  const dirty = new Set(
    vscode.workspace.textDocuments
      .filter((d) => d.isDirty && d.uri.scheme === 'file')
      .map((d) => d.uri.fsPath),
  );
  return files.filter((f) => dirty.has(vscode.Uri.file(target(skillDir, f)).fsPath)).map((f) => f.path);
}

function refuseUnsaved(paths: readonly string[]): false {
  void vscode.window.showWarningMessage(
    `SkillOpt: Apply Best would overwrite unsaved changes in ${paths.join(', ')}. Save or revert ${paths.length > 1 ? 'them' : 'it'}, then apply again.`,
  );
  return false;
}

/** One diff tab per file: the skill folder's file (or nothing, for a new one) ↔ the best skill's. */
async function showDiffs(
  run: RunView,
  skillDir: string,
  bestDir: string,
  files: readonly FileToApply[],
): Promise<void> {
  for (const f of files) {
    const path = target(skillDir, f);
    const left =
      f.status === 'added' ? vscode.Uri.file(path).with({ scheme: newFileScheme }) : vscode.Uri.file(path);
    await vscode.commands.executeCommand(
      'vscode.diff',
      left,
      vscode.Uri.file(join(bestDir, ...f.path.split('/'))),
      `${label(f)} ↔ best skill of ${run.name}`,
      { preview: false },
    );
  }
}

/** The skill folder to write: the one the run trained, or one the person picks. */
async function skillFolder(run: RunView, trained: string | undefined): Promise<string | undefined> {
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
  return skillDir;
}

/** Reads what to apply through the engine; an error (a symbolic link on the way) is said and undefined. */
function readChanges(
  ctx: Ctx,
  bestDir: string,
  skillDir: string,
): { files: FileToApply[]; kept: string[] } | undefined {
  try {
    return { files: filesToApply(bestDir, skillDir), kept: filesOnlyInSkill(bestDir, skillDir) };
  } catch (err) {
    ctx.log.error(`[apply] reading ${bestDir} against ${skillDir}: ${errorDetail(err)}`);
    void vscode.window.showErrorMessage(`SkillOpt: ${errorMessage(err)}`);
    return undefined;
  }
}

/** True when both lists name the same files with the same bytes (nothing moved since the preview). */
function sameFiles(a: readonly FileToApply[], b: readonly FileToApply[]): boolean {
  return a.length === b.length && a.every((f, i) => f.path === b[i].path && f.bytes.equals(b[i].bytes));
}

export async function applyBestPackage(
  ctx: Ctx,
  run: RunView,
  bestDir: string,
  trained: string | undefined,
  confirm: boolean,
): Promise<boolean> {
  const skillDir = await skillFolder(run, trained);
  if (!skillDir) return false;
  const read = readChanges(ctx, bestDir, skillDir);
  if (!read) return false;
  const { files, kept } = read;
  if (!files.length) {
    void vscode.window.showInformationMessage(
      `SkillOpt: ${basename(skillDir)} already equals the best skill of ${run.name}.`,
    );
    return false;
  }
  const dirty = unsaved(skillDir, files);
  if (dirty.length) return refuseUnsaved(dirty);
  await showDiffs(run, skillDir, bestDir, files);
  const list = files.map(label).join(', ');
  // Training never deletes a file, so a file only the folder holds is kept, and the person is told.
  const keptNote = kept.length ? ` Kept as they are (not in the best skill): ${kept.join(', ')}.` : '';
  if (confirm) {
    const choice = await vscode.window.showInformationMessage(
      `Apply ${files.length} file${files.length > 1 ? 's' : ''}: ${list}? From the best skill of ${run.name} (score ${run.bestScore?.toFixed(3) ?? '?'}) to the folder ${basename(skillDir)}.${keptNote} You can undo it.`,
      'Apply',
      'Cancel',
    );
    if (choice !== 'Apply') return false;
    // The person may have edited or saved while the question was open: write only what was shown.
    const again = readChanges(ctx, bestDir, skillDir);
    if (!again) return false;
    if (!sameFiles(files, again.files)) {
      void vscode.window.showWarningMessage(
        `SkillOpt: ${basename(skillDir)} changed while Apply Best was asking; nothing was written. Apply again to see the new diffs.`,
      );
      return false;
    }
    const late = unsaved(skillDir, files);
    if (late.length) return refuseUnsaved(late);
  }
  const edit = new vscode.WorkspaceEdit();
  const meta = { label: `Apply best skill of ${run.name}`, needsConfirmation: false };
  for (const f of files) {
    const uri = vscode.Uri.file(target(skillDir, f));
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
  try {
    keepExecBits(skillDir, files);
  } catch (err) {
    ctx.log.warn(
      `[apply] could not make the best skill's scripts executable in ${skillDir}: ${errorDetail(err)}`,
    );
    void vscode.window.showWarningMessage(
      `SkillOpt: the best skill's scripts were written to ${basename(skillDir)} but could not be made executable: ${errorDetail(err)}`,
    );
  }
  ctx.log.info(`[apply] best skill folder of ${run.dir} applied to ${skillDir}: ${list}`);
  void vscode.window.showInformationMessage(
    `SkillOpt: applied the best skill to ${basename(skillDir)} (${list}). Save the changed files to keep them, or Undo to go back.${keptNote}`,
  );
  return true;
}
