/**
 * An answer the real engine refuses as stale (the window was told of a question the run never
 * asked, as when a stop and resume re-asks while an answer is on its way): the review goes back
 * to the state the run asked it in, undecided lines and per-edit lenses, and is answered again.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import {
  closeAll,
  copyHouseStyle,
  feed,
  inspect,
  type InspectRow,
  lensTitleTexts,
  reviewShown,
  startHumanFirstRun,
  stopRun,
} from './reviewSupport';
import { openSkill, skillopt, waitFor, workspacePath } from './support';

describe('review: an answer the run refused', function () {
  this.timeout(120_000);

  it('human-first: a refused answer puts the review back as asked, to be answered edit by edit', async () => {
    const api = await skillopt();
    const files = vscode.workspace.getConfiguration('files');
    await files.update('autoSave', 'off', vscode.ConfigurationTarget.Global);
    const skill = copyHouseStyle(workspacePath('refused-review'));
    const uri = vscode.Uri.file(skill);
    const editor = await openSkill(skill);
    let runId: string | undefined;
    try {
      runId = (await startHumanFirstRun(uri)).runId;
      const id = runId;
      const asked = await waitFor(() => api.ctx.runs.get(id)?.live?.waiting, 'the run to pause');
      const row = await reviewShown(uri);
      const drawn = editor.document.getText();
      // The window hears of a question the engine never asked; the review now answers that one.
      await feed(
        id,
        { ...asked, questionId: `${asked.questionId}-never-asked` },
        {
          skillPath: skill,
          mode: 'human-first',
          live: true,
        },
      );
      const ids = row.owners.filter((o) => o.fate === 'pending').map((o) => o.id);
      assert.ok(ids.length > 0, 'edits to decide');
      const base = { uri: uri.toString(), key: row.key };
      /** Accepts every edit in the editor; returns the engine's reply to the `n`th answer. */
      const acceptEach = async (n: number): Promise<InspectRow['sent'][number]> => {
        for (const editId of ids)
          await vscode.commands.executeCommand('skillopt.review.acceptEdit', { ...base, editId });
        return waitFor(
          async () => {
            const s = (await inspect(uri))?.sent[n];
            return s && s.outcome !== 'failed' ? s : undefined;
          },
          `the engine's reply to answer ${n + 1}`,
        );
      };
      const refused = await acceptEach(0);
      assert.equal(refused.detail, 'stale', 'the engine refused the answer');

      const back = await waitFor(async () => {
        const r = await inspect(uri);
        return r?.phase === 'review' ? r : undefined;
      }, 'the review back in its waiting state').catch(async (err: unknown) => {
        const r = await inspect(uri);
        throw new Error(`${String(err)}: ${JSON.stringify({ ...r, segments: undefined })}`);
      });
      assert.equal(back.waiting, true, 'the run still waits for the person');
      assert.equal(back.perEdit, true);
      assert.deepEqual(
        back.owners.filter((o) => ids.includes(o.id)).map((o) => [o.id, o.fate, o.decidedBy]),
        ids.map((x) => [x, 'pending', undefined]),
      );
      assert.equal(editor.document.getText(), drawn, 'the document is as the review drew it');
      const titles = await lensTitleTexts(uri);
      assert.ok(!titles.some((t) => t.includes('gate is scoring')), `no gate text: ${titles.join(' | ')}`);
      assert.ok(
        titles.filter((t) => t === '$(check) Accept').length === ids.length,
        `per-edit lenses: ${titles.join(' | ')}`,
      );

      // Answered again, edit by edit: the run takes it.
      const again = await acceptEach(1);
      assert.equal(again.params.questionId, asked.questionId, 'it names the question the run asks');
      assert.equal(again.outcome, 'ok');
      assert.notEqual(again.detail, 'stale', 'the run took it');
    } finally {
      if (runId) await stopRun(api.ctx.runs, runId);
      await closeAll();
      await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
