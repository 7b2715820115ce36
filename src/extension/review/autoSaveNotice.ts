/**
 * VS Code's auto-save during a review writes the buffer as it is, undecided lines included, unless
 * `files.autoSaveWhenNoErrors` is on for the document (then autoSaveHold.ts marks the undecided
 * lines and auto-save waits). The first auto-save that would write them tells the person, once per
 * review, and offers that setting for the skill's language in this workspace, or auto-save off.
 */
import * as vscode from 'vscode';
import { candidateName } from '../../protocol/webview';
import type { Ctx } from '../ctx';
import { autoSaveState } from './autoSaveHold';
import type { LineOp } from './session';
import type { TrackedSession } from './registry';

export class AutoSaveNotice {
  /** Reviews told already. */
  private readonly told = new Set<string>();

  constructor(private readonly ctx: Ctx) {}

  /** An auto-save of `t`'s document is about to write its `pending` undecided lines. */
  tell(t: TrackedSession, pending: readonly LineOp[], doc: vscode.TextDocument): void {
    const lines = pending.reduce((n, op) => n + (op.kind === 'delete' ? op.count : 0), 0);
    if (lines === 0 || autoSaveState(doc) !== 'writes' || this.told.has(t.session.key)) return;
    this.told.add(t.session.key);
    const { origin, step, epoch } = t.session.init;
    this.ctx.log.info(`review: auto-save writes ${t.fileName} with ${lines} undecided line(s)`);
    const hold = 'Hold Auto-Save';
    // Without a workspace the only place to change a setting is the user's own settings: said on the button.
    const where = vscode.workspace.workspaceFolders ? 'in this workspace' : 'in your user settings';
    const turnOff = 'Turn Off Auto-Save';
    void vscode.window
      .showWarningMessage(
        `SkillOpt: auto-save is on, so ${t.fileName} on disk holds the ${lines} undecided line${lines === 1 ? '' : 's'} of ${candidateName(origin, step, epoch)} until you decide them (Reject All takes them out). ${hold} skips the file while lines are undecided (files.autoSaveWhenNoErrors for ${doc.languageId} files ${where}); ${turnOff} turns it off ${where}.`,
        hold,
        turnOff,
      )
      .then((pick) =>
        pick === hold ? holdAutoSave(doc) : pick === turnOff ? turnOffAutoSave(t.uri) : undefined,
      )
      .then(undefined, (err: unknown) => this.ctx.log.warn(`review: changing auto-save: ${String(err)}`));
  }
}

function settingsTarget(): vscode.ConfigurationTarget {
  return vscode.workspace.workspaceFolders
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
}

/** Turns on `files.autoSaveWhenNoErrors` for `doc`'s language only (other files auto-save as before). */
async function holdAutoSave(doc: vscode.TextDocument): Promise<void> {
  await vscode.workspace
    .getConfiguration('files', { uri: doc.uri, languageId: doc.languageId })
    .update('autoSaveWhenNoErrors', true, settingsTarget(), true);
  if (autoSaveState(doc) !== 'held')
    void vscode.window.showWarningMessage(
      `SkillOpt: files.autoSaveWhenNoErrors is still off for ${vscode.workspace.asRelativePath(doc.uri)}: a folder setting overrides the one just made.`,
    );
}

/** Sets `files.autoSave` to off for the workspace, and says so if a narrower setting keeps it on. */
async function turnOffAutoSave(uri: vscode.Uri): Promise<void> {
  await vscode.workspace.getConfiguration('files', uri).update('autoSave', 'off', settingsTarget());
  const effective = vscode.workspace.getConfiguration('files', uri).get<string>('autoSave');
  if (effective !== 'off')
    void vscode.window.showWarningMessage(
      `SkillOpt: auto-save is still "${effective}" for ${vscode.workspace.asRelativePath(uri)}: a folder or language setting of files.autoSave overrides the workspace's.`,
    );
}
