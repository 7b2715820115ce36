/**
 * The "waiting for you" notification's buttons, in a real VS Code with the real engine process:
 * Review brings the waiting step into the editor even with the skill closed, Accept decides it
 * from the notification alone (the run goes on), as the person would click them.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { copyHouseStyle, personSuite, reviewShown, startHumanFirstRun, stopRun } from './reviewSupport';
import { recordEvents, skillopt, waitFor, workspacePath } from './support';

describe('review: the waiting notification', function () {
  this.timeout(120_000);
  const stubs = personSuite();

  /** Answers the first waiting notice with `pick` (once), and records every notice's text. */
  const answerWaiting = (pick: string): string[] => {
    const said: string[] = [];
    let answered = false;
    stubs.replace('showInformationMessage', (message: string, ...rest: unknown[]) => {
      said.push(message);
      const waiting = /is paused until you review step \d+/.test(message) && rest.includes(pick);
      if (!waiting || answered) return Promise.resolve(undefined);
      answered = true;
      // At once: the run's folder may not have been read again yet (its config tells the skill).
      return Promise.resolve(pick);
    });
    return said;
  };

  it('Review opens the waiting step in the skill, closed or not', async () => {
    const api = await skillopt();
    const skill = copyHouseStyle(workspacePath('notice-review'));
    const uri = vscode.Uri.file(skill);
    const said = answerWaiting('Review');
    let runId: string | undefined;
    try {
      // The skill is not open: the notification's Review is the way in.
      runId = (await startHumanFirstRun(uri)).runId;
      const shown = await reviewShown(uri, 'the review opened from the notification');
      assert.ok(
        said.some((m) => m.includes(`review step ${shown.step}`)),
        said.join(' | '),
      );
      assert.ok(
        vscode.window.visibleTextEditors.some((e) => e.document.uri.fsPath === skill),
        'the skill is not shown',
      );
    } finally {
      if (runId) await stopRun(api.ctx.runs, runId);
    }
  });

  it('Accept decides the waiting step from the notification', async () => {
    const api = await skillopt();
    const skill = copyHouseStyle(workspacePath('notice-accept'));
    const rec = recordEvents(api);
    const said = answerWaiting('Accept');
    const warned: string[] = [];
    stubs.replace('showWarningMessage', (message: string) => {
      warned.push(message);
      return Promise.resolve(undefined);
    });
    let runId: string | undefined;
    try {
      const started = await startHumanFirstRun(vscode.Uri.file(skill));
      runId = started.runId;
      const asked = await waitFor(
        () => rec.of(started.runId).find((e) => e.type === 'review/requested'),
        'the run to wait for the person',
      );
      const decided = await waitFor(
        () =>
          rec
            .of(started.runId)
            .find(
              (e) =>
                e.type === 'review/decided' && asked.type === 'review/requested' && e.step === asked.step,
            ),
        `the decision from the notification (said: ${said.join(' | ')}; warned: ${warned.join(' | ')})`,
      );
      assert.ok(decided.type === 'review/decided', JSON.stringify(decided));
      assert.equal(decided.decision, 'human_kept_all');
      assert.deepEqual(decided.rejectedEdits, []);
    } finally {
      rec.dispose();
      if (runId) await stopRun(api.ctx.runs, runId);
    }
  });
});
