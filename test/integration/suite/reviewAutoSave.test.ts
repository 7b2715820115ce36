/**
 * A live run paused for the person with VS Code's auto-save on (afterDelay). By default auto-save
 * writes the buffer, undecided lines included (the API can neither skip one auto-save nor save other
 * text than the buffer without editing it), so the review must go on through every auto-save, never
 * be set aside as after the person's own save, and its decision must still land. With
 * files.autoSaveWhenNoErrors on, the review's marks hold auto-save until the lines are decided.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { autoSaveState, HOLD_SOURCE } from '../../../src/extension/review/autoSaveHold';
import { closeAll, copyHouseStyle, inspect, reviewShown, startHumanFirstRun, stopRun } from './reviewSupport';
import { openSkill, recordEvents, skillopt, waitFor, workspacePath } from './support';

/** Accepts the waiting step's candidate and waits for the engine to have the decision. */
async function acceptAndWait(
  row: { step: number },
  rec: ReturnType<typeof recordEvents>,
  runId: string,
): Promise<void> {
  await vscode.commands.executeCommand('skillopt.review.acceptCandidate', row);
  await waitFor(
    () => (rec.of(runId).some((e) => e.type === 'review/decided' && e.step === row.step) ? true : undefined),
    'the decision to reach the engine',
  );
}

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
      const shown = await reviewShown(uri);
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
      await acceptAndWait(after, rec, started.runId);
    } finally {
      onSave.dispose();
      rec.dispose();
      if (runId) await stopRun(api.ctx.runs, runId);
      await closeAll();
      await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
      await files.update('autoSaveDelay', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('with files.autoSaveWhenNoErrors on for skills, undecided lines never reach the disk, and auto-save resumes once decided', async () => {
    const api = await skillopt();
    const files = vscode.workspace.getConfiguration('files');
    await files.update('autoSave', 'afterDelay', vscode.ConfigurationTarget.Global);
    await files.update('autoSaveDelay', 300, vscode.ConfigurationTarget.Global);
    // Named as its folder: a lint error (name ≠ folder) would hold auto-save by itself.
    const skill = copyHouseStyle(workspacePath(join('autosave-held', 'house-style')));
    const original = readFileSync(skill, 'utf8');
    const uri = vscode.Uri.file(skill);
    const { document } = await openSkill(skill);
    // As the notice's "Hold Auto-Save" sets it: for the skill's language only.
    const language = vscode.workspace.getConfiguration('files', { languageId: document.languageId });
    await language.update('autoSaveWhenNoErrors', true, vscode.ConfigurationTarget.Global, true);
    const rec = recordEvents(api);
    const marks = (): vscode.Diagnostic[] =>
      vscode.languages.getDiagnostics(uri).filter((d) => d.source === HOLD_SOURCE);
    let runId: string | undefined;
    try {
      assert.equal(autoSaveState(document), 'held');
      assert.ok(
        !vscode.languages.getDiagnostics(uri).some((d) => d.severity === vscode.DiagnosticSeverity.Error),
        'the skill has an error of its own before the review',
      );
      const started = await startHumanFirstRun(uri);
      runId = started.runId;
      const shown = await reviewShown(uri);
      const held = await waitFor(() => (marks().length ? marks() : undefined), 'the undecided lines marked');
      assert.ok(held.every((d) => d.severity === vscode.DiagnosticSeverity.Error));
      // Several auto-save delays later the file on disk is still the person's own.
      await new Promise((r) => setTimeout(r, 1500));
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === skill)!;
      assert.ok(doc.isDirty, 'the buffer with undecided lines was saved');
      assert.equal(readFileSync(skill, 'utf8'), original);
      const after = await inspect(uri);
      assert.ok(after?.waiting);
      await acceptAndWait(after, rec, started.runId);
      // Decided: that step's marks go (the next step's review may hold the file again).
      const ofStep = `from step ${shown.step}:`;
      await waitFor(
        () => (marks().some((d) => d.message.includes(ofStep)) ? undefined : true),
        "the decided step's marks to be cleared",
      );
      // Once no review is left, auto-save writes the file again.
      await stopRun(api.ctx.runs, started.runId);
      runId = undefined;
      await waitFor(() => (marks().length ? undefined : true), 'every mark to be cleared');
      await waitFor(() => (doc.isDirty ? undefined : true), 'auto-save to write the skill');
      assert.equal(readFileSync(skill, 'utf8'), doc.getText());
    } finally {
      rec.dispose();
      if (runId) await stopRun(api.ctx.runs, runId);
      await closeAll();
      await language.update('autoSaveWhenNoErrors', undefined, vscode.ConfigurationTarget.Global, true);
      await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
      await files.update('autoSaveDelay', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
