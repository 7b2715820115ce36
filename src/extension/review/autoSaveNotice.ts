/**
 * VS Code's auto-save during a review writes the buffer as it is, undecided lines included. The
 * extension API can neither skip one auto-save nor write other text than the buffer without
 * editing it (which would fill Undo with edits the person never made), so the person is told,
 * once per review, and offered to turn auto-save off for the workspace.
 */
import * as vscode from 'vscode';
import { candidateName } from '../../protocol/webview';
import type { Ctx } from '../ctx';
import type { LineOp } from './session';
import type { TrackedSession } from './registry';

export class AutoSaveNotice {
  /** Reviews told already. */
  private readonly told = new Set<string>();

  constructor(private readonly ctx: Ctx) {}

  /** An auto-save of `t`'s document is about to write its `pending` undecided lines. */
  tell(t: TrackedSession, pending: readonly LineOp[]): void {
    const lines = pending.reduce((n, op) => n + (op.kind === 'delete' ? op.count : 0), 0);
    if (lines === 0 || this.told.has(t.session.key)) return;
    this.told.add(t.session.key);
    const { origin, step, epoch } = t.session.init;
    this.ctx.log.info(`review: auto-save writes ${t.fileName} with ${lines} undecided line(s)`);
    // Without a workspace the only place to turn it off is the user's own settings: said on the button.
    const turnOff = vscode.workspace.workspaceFolders
      ? 'Turn Off Auto-Save for This Workspace'
      : 'Turn Off Auto-Save (User Settings)';
    void vscode.window
      .showWarningMessage(
        `SkillOpt: auto-save is on, so ${t.fileName} on disk holds the ${lines} undecided line${lines === 1 ? '' : 's'} of ${candidateName(origin, step, epoch)} until you decide them (Reject All takes them out). Turn auto-save off to keep undecided lines out of the file.`,
        turnOff,
      )
      .then((pick) => (pick === turnOff ? turnOffAutoSave(t.uri) : undefined))
      .then(undefined, (err: unknown) => this.ctx.log.warn(`review: turning off auto-save: ${String(err)}`));
  }
}

/** Sets `files.autoSave` to off for the workspace, and says so if a narrower setting keeps it on. */
async function turnOffAutoSave(uri: vscode.Uri): Promise<void> {
  const target = vscode.workspace.workspaceFolders
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration('files', uri).update('autoSave', 'off', target);
  const effective = vscode.workspace.getConfiguration('files', uri).get<string>('autoSave');
  if (effective !== 'off')
    void vscode.window.showWarningMessage(
      `SkillOpt: auto-save is still "${effective}" for ${vscode.workspace.asRelativePath(uri)}: a folder or language setting of files.autoSave overrides the workspace's.`,
    );
}
