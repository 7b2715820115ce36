/**
 * A skill with unsaved changes, in a real VS Code with the real engine process: "Optimize This
 * Skill" asks before saving it (the engine trains what is on disk), and the person's own save
 * during a review (Ctrl+S, the close prompt's Save) never writes the candidate's undecided lines.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { ReviewCommands } from '../../../src/extension/constants';
import type { StartResult } from '../../../src/protocol/engine';
import { copyHouseStyle, personSuite, reviewShown, startHumanFirstRun, stopRun } from './reviewSupport';
import { openSkill, skillopt, waitFor, workspacePath } from './support';

describe('a skill with unsaved changes', function () {
  this.timeout(120_000);
  const { replace } = personSuite();

  it('"Optimize This Skill" asks before saving them, and trains the saved file only when told to', async () => {
    const api = await skillopt();
    const skill = copyHouseStyle(workspacePath(join('unsaved', 'house-style')));
    const original = readFileSync(skill, 'utf8');
    const editor = await openSkill(skill);
    const typed = '- A rule typed but not saved yet.';
    await editor.edit((e) => e.insert(new vscode.Position(editor.document.lineCount, 0), `\n${typed}\n`));
    assert.ok(editor.document.isDirty);

    const modals: Array<{ message: string; detail?: string }> = [];
    // What the modal is answered (Cancel first).
    const answer: { pick?: string } = {};
    replace('showWarningMessage', (message: string, ...rest: unknown[]) => {
      const opts = rest[0] as vscode.MessageOptions | undefined;
      if (opts?.modal) modals.push({ message, ...(opts.detail ? { detail: opts.detail } : {}) });
      return Promise.resolve(opts?.modal ? answer.pick : undefined);
    });
    const optimize = (): Thenable<StartResult | undefined> =>
      vscode.commands.executeCommand<StartResult | undefined>(
        'skillopt.optimizeSkill',
        vscode.Uri.file(skill),
        {
          confirm: false,
          overrides: ['cache.enabled=false'],
        },
      );

    // Cancelled: nothing saved, nothing started.
    assert.equal(await optimize(), undefined);
    assert.equal(modals.length, 1);
    assert.match(modals[0]!.message, /SKILL\.md has unsaved changes/);
    assert.match(modals[0]!.detail ?? '', /reads the skill from disk/);
    assert.ok(editor.document.isDirty, 'the buffer was saved without asking');
    assert.equal(readFileSync(skill, 'utf8'), original);

    // "Save and Train": the saved text is what the run trains.
    answer.pick = 'Save and Train';
    const started = await optimize();
    assert.ok(started, 'no run started after Save and Train');
    try {
      assert.equal(modals.length, 2);
      assert.ok(readFileSync(skill, 'utf8').includes(typed));
      const initial = await waitFor(() => {
        try {
          return readFileSync(join(started.outDir, 'skills', 'skill_v0000.md'), 'utf8');
        } catch {
          return undefined;
        }
      }, "the run's initial skill");
      assert.ok(initial.includes(typed), 'the run did not train the saved changes');
    } finally {
      await stopRun(api.ctx.runs, started.runId);
    }
  });

  it("the person's save during a review writes the skill without the undecided lines", async () => {
    const api = await skillopt();
    const skill = copyHouseStyle(workspacePath(join('saved-review', 'house-style')));
    const original = readFileSync(skill, 'utf8');
    const uri = vscode.Uri.file(skill);
    await openSkill(skill);
    const said: string[] = [];
    replace('showInformationMessage', (message: string) => {
      said.push(message);
      return Promise.resolve(undefined);
    });
    let runId: string | undefined;
    try {
      runId = (await startHumanFirstRun(uri)).runId;
      const shown = await reviewShown(uri, 'the review to be shown');
      await vscode.window.showTextDocument(uri, { preview: false });
      await vscode.commands.executeCommand('workbench.action.files.save');
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === skill)!;
      await waitFor(() => (doc.isDirty ? undefined : true), 'the save');
      assert.equal(readFileSync(skill, 'utf8'), original, 'the save wrote undecided lines');
      assert.ok(
        said.some((m) => new RegExp(`without the \\d+ undecided lines? of step ${shown.step}`).test(m)),
        `not told: ${said.join(' | ')}`,
      );
      // The run still waits for the person, and the review comes back when asked for.
      assert.ok(api.ctx.runs.get(runId)?.live?.waiting, 'the run stopped waiting');
      await vscode.commands.executeCommand(ReviewCommands.openWaiting, runId);
      const back = await reviewShown(uri, 'the review to come back');
      assert.equal(back.step, shown.step);
    } finally {
      if (runId) await stopRun(api.ctx.runs, runId);
    }
  });
});
