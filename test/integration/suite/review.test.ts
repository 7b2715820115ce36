/**
 * Inline review in a real VS Code: a candidate from a real sim run folder shown on the skill
 * document, CodeLens and hovers, accept and reject by edit id, typing during a review, and the
 * diff view with Accept Candidate.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { applyEdits } from '../../../src/engine/skill/applyEdits';
import { candidateScheme } from '../../../src/extension/review/candidateContent';
import {
  closeAll,
  inspect,
  lensTitles,
  openSkill,
  setText,
  simRun,
  stepWhere,
  waitFor,
  type SimRun,
} from './reviewSupport';
import { hoverText } from './support';

describe('review: inline candidate on the skill document', function () {
  this.timeout(60_000);
  let run: SimRun;
  let step: number;

  before(async () => {
    run = await simRun();
    step = stepWhere(run, true);
  });
  after(() => run.cleanup());
  afterEach(closeAll);

  async function openReview(): Promise<{ editor: vscode.TextEditor; uri: vscode.Uri }> {
    const editor = await openSkill(run.skillPath);
    await setText(editor, run.previousOf(step));
    const key = await vscode.commands.executeCommand<string>('skillopt.review.openCandidate', {
      runId: run.runDir,
      runDir: run.runDir,
      step,
      skillPath: run.skillPath,
    });
    assert.ok(key, 'the review opened');
    const uri = editor.document.uri;
    try {
      await waitFor(async () => (await inspect(uri))?.drawn?.added.length, 'decorations');
    } catch (err) {
      throw new Error(`${String(err)}\n${JSON.stringify(await inspect(uri))}\n${editor.document.getText()}`, {
        cause: err,
      });
    }
    return { editor, uri };
  }

  it('shows every applied edit as added lines with decorations, a lens and a hover', async () => {
    const { editor, uri } = await openReview();
    const row = (await inspect(uri))!;
    const edits = run.ready(step).edits.filter((e) => e.status?.startsWith('applied'));
    assert.equal(row.phase, 'review');
    assert.deepEqual(
      row.owners
        .filter((o) => o.fate === 'pending')
        .map((o) => o.id)
        .sort(),
      edits.map((e) => e.id).sort(),
    );
    // Every edit's content is in the document on a line decorated as added.
    const lines = editor.document.getText().split('\n');
    const added = new Set(
      row.drawn!.added.flatMap(([a, b]) => Array.from({ length: b! - a! + 1 }, (_, i) => a! + i)),
    );
    for (const e of edits) {
      const at = lines.findIndex((l) => l === e.content);
      assert.ok(at >= 0, `content of ${e.id} shown`);
      assert.ok(
        added.has(at),
        `line ${at} of ${e.id} decorated as added: ${JSON.stringify(row)}\n${lines.join('\n')}`,
      );
    }
    const lenses = await lensTitles(uri);
    const titles = lenses.map((l) => l.command?.title ?? '');
    assert.ok(
      titles.includes('Accept All') && titles.includes('Reject All…') && titles.includes('Open in Diff View'),
      JSON.stringify(titles),
    );
    const accepts = lenses.filter((l) => l.command?.command === 'skillopt.review.acceptEdit');
    assert.deepEqual(
      accepts.map((l) => (l.command?.arguments?.[0] as { editId: string }).editId).sort(),
      edits.map((e) => e.id).sort(),
      'one Accept lens per edit, addressed by id',
    );
    const first = edits[0]!;
    const line = lines.findIndex((l) => l === first.content);
    const text = await hoverText(uri, new vscode.Position(line, 2));
    assert.match(text, new RegExp(`op: ${first.op}`));
    assert.match(text, /support_count: \d+/);
    assert.match(text, /source: (failed|successful) tasks/);
  });

  it('accepts and rejects edits by id, and the result equals applying the accepted edits alone', async () => {
    const { editor, uri } = await openReview();
    const edits = run.ready(step).edits.filter((e) => e.status?.startsWith('applied'));
    assert.ok(edits.length >= 2, 'the step has at least two edits');
    const [keep, drop, ...rest] = edits;
    const lens = (await lensTitles(uri)).find(
      (l) =>
        l.command?.command === 'skillopt.review.acceptEdit' &&
        (l.command.arguments?.[0] as { editId: string }).editId === keep!.id,
    );
    assert.ok(lens?.command);
    assert.equal(
      await vscode.commands.executeCommand(lens.command.command, ...(lens.command.arguments ?? [])),
      'accepted',
    );
    const args = {
      uri: uri.toString(),
      key: (await inspect(uri))!.key,
      editId: drop!.id,
      reason: 'not our style',
    };
    assert.equal(await vscode.commands.executeCommand('skillopt.review.rejectEdit', args), 'rejected');
    for (const e of rest) {
      await vscode.commands.executeCommand('skillopt.review.rejectEdit', {
        ...args,
        editId: e.id,
        reason: '',
      });
    }
    const row = (await inspect(uri))!;
    assert.equal(row.phase, 'done');
    assert.deepEqual(
      row.owners.filter((o) => o.id === drop!.id).map((o) => [o.fate, o.decidedBy, o.reason]),
      [['rejected', 'person', 'not our style']],
    );
    const expected = applyEdits(run.previousOf(step), [
      { id: keep!.id, op: keep!.op, target: keep!.target ?? '', content: keep!.content ?? '' },
    ]).text;
    assert.equal(editor.document.getText(), expected);
    assert.deepEqual(row.sent, [], 'a finished run hears nothing');
  });

  it('moves decorations with lines typed above, and drops an edit typed across', async () => {
    const { editor, uri } = await openReview();
    const before = (await inspect(uri))!;
    const firstAdded = Math.min(...before.drawn!.added.map(([a]) => a!));
    await editor.edit((b) => b.insert(new vscode.Position(0, 0), 'typed one\ntyped two\n'));
    await waitFor(
      async () => (await inspect(uri))?.drawn?.added.some(([a]) => a === firstAdded + 2),
      'shifted decorations',
    );
    const seg = (await inspect(uri))!.segments.find((s) => s.kind === 'added' && s.present && s.lines > 0)!;
    await editor.edit((b) => b.delete(new vscode.Range(seg.start - 1, 0, seg.start + 1, 0)));
    await waitFor(
      async () => (await inspect(uri))?.owners.find((o) => o.id === seg.owner)?.fate === 'invalidated',
      'invalidated edit',
    );
    const after = (await inspect(uri))!;
    assert.ok(!after.segments.some((s) => s.owner === seg.owner), 'its lines are no longer tracked');
    assert.ok(
      !(await lensTitles(uri)).some(
        (l) => (l.command?.arguments?.[0] as { editId?: string } | undefined)?.editId === seg.owner,
      ),
    );
  });

  it('opens the diff view of a step, and Accept Candidate there applies it to the skill', async () => {
    const editor = await openSkill(run.skillPath);
    await setText(editor, run.previousOf(step));
    await vscode.commands.executeCommand('skillopt.review.openDiff', {
      runId: run.runDir,
      runDir: run.runDir,
      step,
    });
    const tab = await waitFor(
      () =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .find(
            (t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === candidateScheme,
          ),
      'the diff tab',
    );
    const input = tab.input as vscode.TabInputTextDiff;
    assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), run.previousOf(step));
    assert.equal((await vscode.workspace.openTextDocument(input.modified)).getText(), run.candidateOf(step));
    assert.match(tab.label, new RegExp(`step ${step} candidate`));
    await vscode.commands.executeCommand('skillopt.review.acceptCandidate', input.modified);
    await waitFor(() => editor.document.getText() === run.candidateOf(step), 'the candidate in the skill');
  });
});
