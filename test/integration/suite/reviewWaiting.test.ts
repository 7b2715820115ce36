/**
 * A live run paused for the person (human-first review), in a real VS Code with the real engine
 * process: every surface says the run waits, and a skill document closed or reverted without a
 * decision comes back into the pending review, from reopening the file and from the command the
 * tree row, the status bar and the notification use.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { ReviewCommands } from '../../../src/extension/constants';
import { candidateUri } from '../../../src/extension/review/candidateContent';
import { statusLabel, statusText } from '../../../src/extension/views/statusBar';
import { closeAll, copyHouseStyle, inspect, startHumanFirstRun, stopRun } from './reviewSupport';
import { openSkill, recordEvents, rows, skillopt, waitFor, workspacePath } from './support';

describe('review: a run waiting for the person', function () {
  this.timeout(120_000);

  it('says the run waits, and brings the review back after its document was closed or reverted', async () => {
    const api = await skillopt();
    // Auto-save (on by default) writes the buffer, review lines included, a second after each
    // change; what this test checks is the person's own saves, closes and reverts.
    const files = vscode.workspace.getConfiguration('files');
    await files.update('autoSave', 'off', vscode.ConfigurationTarget.Global);
    const skill = copyHouseStyle(workspacePath('waiting-review'));
    const original = readFileSync(skill, 'utf8');
    const uri = vscode.Uri.file(skill);
    await openSkill(skill);
    const rec = recordEvents(api);
    // The view's badge, and whether the run waits, after each change of the runs (the extension's
    // own listener runs first): the badge must follow the run through every decision.
    let runId: string | undefined;
    const badges: Array<{ badge?: number; waits?: number }> = [];
    const badgeSub = api.ctx.runs.onDidChange(() => {
      // (Until Optimize returns, the test does not know its run.)
      if (!runId) return;
      const live = api.ctx.runs.get(runId)?.live;
      badges.push({
        ...(api.runsView.badge ? { badge: api.runsView.badge.value } : {}),
        ...(live?.status === 'running' && live.waiting ? { waits: 1 } : {}),
      });
    });
    try {
      const started = await startHumanFirstRun(uri);
      runId = started.runId;
      const run = await waitFor(() => {
        const r = api.ctx.runs.get(started.runId);
        return r?.live?.waiting ? r : undefined;
      }, 'the run to pause for the person');
      const step = run.live!.waiting!.step;
      assert.equal(statusText(run), `$(bell) SkillOpt: step ${step} waits for your review`);
      assert.match(statusLabel(run), new RegExp(`paused: step ${step} waits for your review`));
      assert.doesNotMatch(statusLabel(run), /\$\(|\*\*/, 'no icon codes or Markdown in the accessible label');
      const row = await waitFor(
        () => rows(api).find((r) => r.el.spec.kind === 'run' && r.el.spec.runId === started.runId),
        'the run row',
      );
      assert.match(row.description, new RegExp(`^waiting for your review of step ${step}`));
      await waitFor(() => api.runsView.badge, 'the badge on the Runs view');
      assert.deepEqual(
        { ...api.runsView.badge },
        { value: 1, tooltip: '1 run waiting for your review' },
        'the Runs view says one run waits',
      );
      await waitFor(async () => (await inspect(uri))?.waiting, 'the review in the editor');
      const onDisk = (where: string): void =>
        assert.equal(readFileSync(skill, 'utf8'), original, `nothing unreviewed on disk ${where}`);
      onDisk('while the review is shown');

      // Closed without saving ("Don't Save" reverts, then closes): reopening the file brings it back.
      await vscode.window.showTextDocument(uri, { preview: false });
      await vscode.commands.executeCommand('workbench.action.files.revert');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      await waitFor(
        () => (vscode.window.visibleTextEditors.length === 0 ? true : undefined),
        'the editor closed',
      );
      onDisk('after closing without saving');
      await openSkill(skill);
      let seen: unknown;
      const back = await waitFor(async () => {
        const r = await inspect(uri);
        seen = r;
        return r?.waiting && r.step === step && r.drawn?.added.length ? r : undefined;
      }, 'the pending review after reopening').catch((err: unknown) => {
        throw new Error(`${String(err)}; last ${JSON.stringify(seen)}`);
      });
      assert.equal(back.phase, 'review');

      onDisk('after reopening');
      // Reverted in place: the review's lines are gone; the command rebuilds the review.
      await vscode.commands.executeCommand('workbench.action.files.revert');
      onDisk('after reverting');
      await waitFor(
        () =>
          vscode.workspace.textDocuments.find((d) => d.uri.fsPath === skill)?.isDirty ? undefined : true,
        'the reverted document',
      );
      const review = await vscode.commands.executeCommand<{ uri: string; key: string } | undefined>(
        ReviewCommands.openWaiting,
        started.runId,
      );
      assert.ok(review, 'the waiting review reopened');
      let last: unknown;
      const rebuilt = await waitFor(async () => {
        const r = await inspect(uri);
        const d = vscode.workspace.textDocuments.find((x) => x.uri.fsPath === skill);
        last = r && {
          ...r,
          dirty: d?.isDirty,
          lines: d?.lineCount,
          visible: vscode.window.visibleTextEditors.map((e) => e.document.uri.fsPath),
        };
        return r?.waiting && r.key === review.key && r.drawn?.added.length ? r : undefined;
      }, 'the rebuilt review').catch((err: unknown) => {
        throw new Error(`${String(err)}; review ${JSON.stringify(review)}; last ${JSON.stringify(last)}`);
      });
      await waitFor(
        () => vscode.workspace.textDocuments.find((d) => d.uri.fsPath === skill)?.isDirty,
        'the candidate lines back in the document',
      );

      // The decision reaches the engine, and the waiting state goes.
      await vscode.commands.executeCommand('skillopt.review.acceptCandidate', review);
      await waitFor(
        () => rec.of(started.runId).some((e) => e.type === 'review/decided' && e.step === step),
        'the decision in the engine',
      );
      await waitFor(
        () => (api.ctx.runs.get(started.runId)?.live?.waiting?.step === step ? undefined : true),
        'the waiting state to clear',
      );

      assert.equal(rebuilt.step, step);

      // The run pauses on a later step; a diff tab of the step just decided must not act any more:
      // its Accept neither writes that candidate nor drops the review the run now waits on.
      const next = await waitFor(() => {
        const w = api.ctx.runs.get(started.runId)?.live?.waiting;
        return w && w.step > step ? w.step : undefined;
      }, 'the run to pause on a later step');
      const pending = await waitFor(async () => {
        const r = await inspect(uri);
        return r?.waiting && r.step === next && r.drawn?.added.length ? r : undefined;
      }, 'the later review in the editor');
      const before = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === skill)!.getText();
      const runDir = api.ctx.runs.get(started.runId)!.dir;
      await vscode.commands.executeCommand('skillopt.review.openDiff', {
        runDir,
        runId: started.runId,
        step,
      });
      const decidedDiff = candidateUri({
        runDir,
        runId: started.runId,
        step,
        origin: 'step',
        side: 'candidate',
      });
      const diffTabs = (): vscode.Tab[] =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .filter(
            (t) =>
              t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === decidedDiff.scheme,
          );
      await waitFor(() => (diffTabs().length ? true : undefined), "the decided step's diff tab");
      await vscode.commands.executeCommand('skillopt.review.acceptCandidate', decidedDiff);
      const after = await inspect(uri);
      assert.equal(after?.key, pending.key, 'the pending review of the later step is still there');
      assert.equal(after?.phase, 'review');
      assert.equal(
        vscode.workspace.textDocuments.find((d) => d.uri.fsPath === skill)!.getText(),
        before,
        'the decided candidate was not written',
      );
      await waitFor(() => (diffTabs().length ? undefined : true), 'the stale diff tab closed');
      assert.ok(
        !rec.of(started.runId).some((e) => e.type === 'review/decided' && e.step === next),
        'nothing was decided for the later step',
      );
      assert.equal(api.runsView.badge?.value, 1, 'the badge is back for the later step');
      assert.ok(
        badges.some((b) => b.waits),
        'the runs changed while the run waited',
      );
      assert.deepEqual(
        badges.filter((b) => b.badge !== b.waits),
        [],
        'the badge says a run waits exactly when it does',
      );

      // Stopped: nothing waits any more, and the badge goes.
      await stopRun(api.ctx.runs, started.runId);
      runId = undefined;
      await waitFor(() => (api.runsView.badge ? undefined : true), 'the badge to clear');
    } finally {
      badgeSub.dispose();
      rec.dispose();
      if (runId) await stopRun(api.ctx.runs, runId);
      await closeAll();
      await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
