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

  it('a notice clicked after its step was decided in the editor decides nothing, and says which step waits now', async () => {
    const api = await skillopt();
    const skill = copyHouseStyle(workspacePath('notice-stale'));
    const rec = recordEvents(api);
    const said: string[] = [];
    // The first waiting notice stays up (unanswered) until the test clicks it, late.
    let click: ((pick: string | undefined) => void) | undefined;
    stubs.replace('showInformationMessage', (message: string) => {
      said.push(message);
      if (!click && /is paused until you review step \d+/.test(message))
        return new Promise<string | undefined>((resolve) => (click = resolve));
      return Promise.resolve(undefined);
    });
    stubs.replace('showWarningMessage', (message: string) => {
      said.push(message);
      return Promise.resolve(undefined);
    });
    let runId: string | undefined;
    try {
      const started = await startHumanFirstRun(vscode.Uri.file(skill));
      runId = started.runId;
      const requests = (): number[] =>
        rec.of(started.runId).flatMap((e) => (e.type === 'review/requested' ? [e.step] : []));
      const first = await waitFor(() => requests()[0], 'the run to wait for the person');
      await waitFor(() => click, 'the waiting notification');
      // The person decides the step in the editor, not on the notification.
      const review = await vscode.commands.executeCommand<{ uri: string; key: string }>(
        'skillopt.review.openWaiting',
        started.runId,
      );
      await vscode.commands.executeCommand('skillopt.review.acceptCandidate', review);
      const next = await waitFor(
        () => requests().find((s) => s > first),
        `the run to wait on a later step (said: ${said.join(' | ')})`,
      );
      // Now the old notification's Accept is clicked: it must not accept the step nobody has seen.
      click!('Accept');
      await waitFor(
        () => said.find((m) => m.includes(`no longer waits on step ${first}`)),
        `the stale notice to say so (said: ${said.join(' | ')})`,
      );
      const stale = said.find((m) => m.includes(`no longer waits on step ${first}`))!;
      assert.match(
        stale,
        new RegExp(`nothing was accepted. It is waiting for your review of step ${next} now`),
      );
      const decidedNext = rec.of(started.runId).some((e) => e.type === 'review/decided' && e.step === next);
      assert.equal(decidedNext, false, `step ${next} was decided by the old notification`);
      assert.equal(api.ctx.runs.get(started.runId)?.live?.waiting?.step, next);
    } finally {
      click?.(undefined);
      rec.dispose();
      if (runId) await stopRun(api.ctx.runs, runId);
    }
  });
});
