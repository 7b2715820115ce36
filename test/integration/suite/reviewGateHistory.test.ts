/**
 * The Gate History panel in a real VS Code: one panel per run, opened from the command with the
 * run's name in its title, brought forward (not duplicated) when asked again. What the page
 * draws, and that optimizer text stays inert there, is checked in Chromium by
 * test/integration/review-runner/shots.ts.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { gateHistoryViewType } from '../../../src/protocol/webview';
import { closeAll, simRun, waitFor, type SimRun } from './reviewSupport';
import { rows, skillopt } from './support';

function historyTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter(
      (t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes(gateHistoryViewType),
    );
}

describe('review: Gate History panel', function () {
  this.timeout(60_000);
  let run: SimRun;
  const settings = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('skillopt');

  before(async () => {
    run = await simRun();
    // The Runs model lists folders named in this setting; the panel reads the run through it.
    await settings().update('runsFolders', [run.dir], vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    await settings().update('runsFolders', undefined, vscode.ConfigurationTarget.Global);
    run.cleanup();
  });
  afterEach(closeAll);

  it('opens one panel per run, titled with the run, and brings it forward when asked again', async () => {
    await vscode.commands.executeCommand('skillopt.showGateHistory', run.runDir);
    const tab = await waitFor(() => historyTabs()[0], 'the Gate History tab');
    assert.match(tab.label, /^Gate History: /);
    await vscode.commands.executeCommand('workbench.action.files.newUntitledFile');
    await vscode.commands.executeCommand('skillopt.showGateHistory', { runId: run.runDir });
    await waitFor(() => historyTabs()[0]?.isActive, 'the same panel, active again');
    assert.equal(historyTabs().length, 1);
    await waitFor(() => historyTabs()[0]?.label === 'Gate History: run', 'the run name in the title');
  });

  it("opens from the run's context menu, which passes the tree row itself", async () => {
    const api = await skillopt();
    // A right-click hands the command the tree element ({id: "run:…", spec}), not the run id.
    const row = await waitFor(
      () => rows(api).find((r) => r.el.spec.kind === 'run' && r.el.spec.runId === run.runDir),
      'the run in the tree',
    );
    await vscode.commands.executeCommand('skillopt.showGateHistory', row.el);
    const tab = await waitFor(() => historyTabs()[0], 'the Gate History tab');
    assert.equal(tab.label, 'Gate History: run');
  });
});
