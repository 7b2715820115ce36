/**
 * A live run paused for the person with VS Code's auto-save on (afterDelay): auto-save writes the
 * buffer, undecided lines included (the API can neither skip one auto-save nor save other text than
 * the buffer without editing it), so the review must go on through every auto-save, never be set
 * aside as after the person's own save, and its decision must still land.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { closeAll, copyHouseStyle, inspect, startHumanFirstRun, stopRun } from './reviewSupport';
import { openSkill, recordEvents, skillopt, waitFor, workspacePath } from './support';

describe('review: auto-save on', function () {
  this.timeout(120_000);

  it('keeps the review open through auto-saves, and the decision still lands', async () => {
    const api = await skillopt();
    const files = vscode.workspace.getConfiguration('files');
    await files.update('autoSave', 'afterDelay', vscode.ConfigurationTarget.Global);
    await files.update('autoSaveDelay', 300, vscode.ConfigurationTarget.Global);
    const skill = copyHouseStyle(workspacePath('autosave-review'));
    const uri = vscode.Uri.file(skill);
    await openSkill(skill);
    let saves = 0;
    const onSave = vscode.workspace.onDidSaveTextDocument((d) => {
      if (d.uri.fsPath === skill) saves++;
    });
    const rec = recordEvents(api);
    let runId: string | undefined;
    try {
      const started = await startHumanFirstRun(uri);
      runId = started.runId;
      const shown = await waitFor(async () => {
        const r = await inspect(uri);
        return r?.waiting && r.drawn?.added.length ? r : undefined;
      }, 'the review to be shown');
      const savesBefore = saves;
      // Auto-save writes the document (the review's lines made it dirty) at least once more.
      await waitFor(() => (saves > savesBefore ? true : undefined), 'an auto-save of the reviewed skill');
      await new Promise((r) => setTimeout(r, 800));
      const after = await inspect(uri);
      assert.ok(after?.waiting, 'an auto-save set the review aside');
      assert.equal(after.step, shown.step);
      assert.equal(after.phase, 'review');
      // What is on disk is the buffer as it stands (said to the person once, with a way to turn it off).
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === skill)!;
      await waitFor(() => (doc.isDirty ? undefined : true), 'the buffer to be saved');
      assert.equal(readFileSync(skill, 'utf8'), doc.getText());
      // The decision still reaches the engine.
      await vscode.commands.executeCommand('skillopt.review.acceptCandidate', after);
      await waitFor(
        () =>
          rec.of(started.runId).some((e) => e.type === 'review/decided' && e.step === shown.step)
            ? true
            : undefined,
        'the decision to reach the engine',
      );
    } finally {
      onSave.dispose();
      rec.dispose();
      if (runId) await stopRun(api.ctx.runs, runId);
      await closeAll();
      await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
      await files.update('autoSaveDelay', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
