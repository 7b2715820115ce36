/**
 * An engine warning during a run reaches the person in the editor: in the CLI it is a line on the
 * console, and before this nothing in VS Code showed it. A run is stopped, its skill edited, and
 * Resume Run warns (once) that the run goes on from its own copy of the skill.
 */
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { StartResult } from '../../../src/protocol/engine';
import { copyHouseStyle, stopRun } from './reviewSupport';
import {
  recordEvents,
  skillopt,
  SLOW_RUN,
  stubWindow,
  waitFor,
  waitForStatus,
  workspacePath,
} from './support';

describe('SkillOpt extension: warnings during a run', function () {
  this.timeout(120_000);
  const stubs = stubWindow();
  afterEach(() => stubs.restore());

  it('shows a warning the engine emits as a notification, once, and in the Output channel', async () => {
    const api = await skillopt();
    const skill = copyHouseStyle(workspacePath('warn-resume'));
    const rec = recordEvents(api);
    const warned: Array<{ message: string; actions: unknown[] }> = [];
    stubs.replace('showWarningMessage', (message: string, ...actions: unknown[]) => {
      warned.push({ message, actions });
      return Promise.resolve(undefined);
    });
    let runId: string | undefined;
    try {
      const started = await vscode.commands.executeCommand<StartResult | undefined>(
        'skillopt.optimizeSkill',
        vscode.Uri.file(skill),
        { confirm: false, overrides: [...SLOW_RUN] },
      );
      assert.ok(started);
      runId = started.runId;
      await waitFor(() => rec.of(started.runId).some((e) => e.type === 'step/finished'), 'the first step');
      await stopRun(api.ctx.runs, started.runId);
      await waitForStatus(api, started.runId, 'stopped');
      assert.equal(warned.length, 0, 'a warning before the skill changed');

      appendFileSync(skill, '\n- A rule the person added while the run was stopped.\n');
      await vscode.commands.executeCommand('skillopt.resumeRun', started.runId);
      const shown = await waitFor(
        () => warned.find((w) => /the skill file changed since this run started/.test(w.message)),
        'the warning notification',
      );
      assert.match(shown.message, /^SkillOpt: .*: the skill file changed since this run started/);
      assert.deepEqual(shown.actions, ['Show Log']);
      const events = rec.of(started.runId).filter((e) => e.type === 'warning');
      assert.equal(events.length, 1);
      await stopRun(api.ctx.runs, started.runId);

      // Resumed again, the engine says it again; the person is told once.
      await vscode.commands.executeCommand('skillopt.resumeRun', started.runId);
      await waitFor(
        () => (rec.of(started.runId).filter((e) => e.type === 'warning').length === 2 ? true : undefined),
        'the second warning event',
      );
      assert.equal(warned.filter((w) => /the skill file changed/.test(w.message)).length, 1);
    } finally {
      rec.dispose();
      if (runId) await stopRun(api.ctx.runs, runId);
    }
  });
});
