/**
 * Each review mode's behaviour in a real VS Code, driven by the real events of a sim run fed
 * through the same path as live engine events. Decisions go to the real engine process, which
 * answers `ignored` because this run is not active in it: that proves the request arrived.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { EngineEvent } from '../../../src/protocol/events';
import {
  askBeforeGate,
  closeAll,
  feed,
  followRunSettings,
  inspect,
  lensTitleTexts as titles,
  simRun,
  skillWith,
  stepWhere,
  waitFor,
  type SimRun,
} from './reviewSupport';

describe('review modes', function () {
  this.timeout(90_000);
  let run: SimRun;

  let restore: () => Promise<void>;
  before(async () => {
    run = await simRun();
    restore = await followRunSettings(true);
  });
  after(async () => {
    await restore();
    run.cleanup();
  });
  afterEach(closeAll);

  /** A skill file of its own per test, holding the text the step's candidate was made from. */
  const skillAt = (name: string, step: number) => skillWith(run, name, run.previousOf(step));

  it('auto, by default: the skill file is never touched; the candidate stays in the run folder', async () => {
    await vscode.workspace
      .getConfiguration('skillopt')
      .update('followRun', undefined, vscode.ConfigurationTarget.Global);
    try {
      const step = stepWhere(run, true);
      const { path, editor, uri } = await skillAt('auto-default', step);
      const hints = { skillPath: path, mode: 'auto', live: true, runDir: run.runDir };
      await feed('it-auto-d', run.ready(step), hints);
      await feed('it-auto-d', run.verdict(step), hints);
      // The same events with followRun on write the candidate (the next test); here nothing may.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await inspect(uri), undefined, 'no review on the file');
      assert.equal(editor.document.getText(), run.previousOf(step));
      assert.equal(editor.document.isDirty, false, 'the file is not left dirty');
      assert.deepEqual(await titles(uri), []);
      // To overrule, the step row's "Review Step Candidate…" opens the step as a review of its own.
      const key = await vscode.commands.executeCommand<string | undefined>('skillopt.review.openCandidate', {
        id: `step:${run.runDir}:${step}`,
        spec: { kind: 'step', runId: run.runDir, step },
      });
      assert.ok(key?.endsWith(`\u0000step\u0000${step}`), `a review of step ${step} opened (${key})`);
    } finally {
      await vscode.workspace
        .getConfiguration('skillopt')
        .update('followRun', true, vscode.ConfigurationTarget.Global);
    }
  });

  it('auto: waits for the gate, applies an accepted candidate, and Revert overrules it', async () => {
    const step = stepWhere(run, true);
    const { path, editor, uri } = await skillAt('auto-accept', step);
    const hints = { skillPath: path, mode: 'auto', live: true, runDir: run.runDir };
    await feed('it-auto', run.ready(step), hints);
    const waiting = await waitFor(() => inspect(uri), 'session');
    assert.equal(waiting.phase, 'awaiting-gate');
    assert.equal(editor.document.getText(), run.previousOf(step), 'nothing changes before the verdict');
    assert.ok((await titles(uri)).some((t) => t.includes('the gate is scoring the candidate')));
    await feed('it-auto', run.verdict(step), hints);
    await waitFor(
      () => editor.document.getText() === run.candidateOf(step),
      'the accepted candidate in the document',
    );
    const shown = await waitFor(async () => {
      const r = await inspect(uri);
      return r?.drawn?.accepted.length ? r : undefined;
    }, 'accepted decorations');
    // followRun is the person's consent: the file follows the run and is saved, never left dirty.
    await waitFor(() => (editor.document.isDirty ? undefined : true), 'the followed file saved');
    assert.equal(readFileSync(path, 'utf8'), run.candidateOf(step));
    assert.equal(shown.phase, 'verdict');
    assert.ok(shown.owners.filter((o) => o.fate === 'accepted').every((o) => o.decidedBy === 'gate'));
    assert.ok((await titles(uri)).includes('Revert Candidate…'));
    await vscode.commands.executeCommand('skillopt.review.rejectAll', {
      uri: uri.toString(),
      key: shown.key,
      reason: 'reads worse',
    });
    assert.equal(editor.document.getText(), run.previousOf(step));
    await waitFor(() => (editor.document.isDirty ? undefined : true), 'the overruled file saved');
    assert.equal(readFileSync(path, 'utf8'), run.previousOf(step));
    const sent = await waitFor(async () => (await inspect(uri))?.sent[0], 'the decision');
    assert.equal(sent.params.candidate, 'reject');
    assert.equal(sent.params.reason, 'reads worse');
    assert.equal(sent.params.step, step);
    assert.ok((sent.params.decisions as Array<{ accept: boolean }>).every((d) => !d.accept));
    assert.equal(sent.outcome, 'ignored', `the engine answered (${sent.detail ?? ''})`);
  });

  it('auto: a gate rejection leaves the skill alone, says so, and Accept Anyway applies the candidate', async () => {
    const step = stepWhere(run, false);
    const { path, editor, uri } = await skillAt('auto-reject', step);
    const hints = { skillPath: path, mode: 'auto', live: true, runDir: run.runDir };
    await feed('it-auto-r', run.ready(step), hints);
    await feed('it-auto-r', run.verdict(step), hints);
    const row = await waitFor(async () => {
      const r = await inspect(uri);
      return r?.drawn?.rejected.length ? r : undefined;
    }, 'rejected note');
    assert.equal(row.phase, 'verdict');
    assert.equal(editor.document.getText(), run.previousOf(step));
    assert.ok((await titles(uri)).includes('Accept Anyway'));
    await vscode.commands.executeCommand('skillopt.review.acceptAll', { uri: uri.toString(), key: row.key });
    assert.equal(editor.document.getText(), run.candidateOf(step));
    const sent = await waitFor(async () => (await inspect(uri))?.sent[0], 'the decision');
    assert.equal(sent.params.candidate, 'accept');
  });

  it('auto: an inconclusive verdict of the paired gate is said as such, not as a rejection, and can be accepted', async () => {
    const step = stepWhere(run, false);
    const { path, editor, uri } = await skillAt('auto-inconclusive', step);
    const hints = { skillPath: path, mode: 'auto', live: true, runDir: run.runDir };
    await feed('it-auto-i', run.ready(step), hints);
    await feed('it-auto-i', { ...run.verdict(step), action: 'inconclusive' }, hints);
    const row = await waitFor(async () => {
      const r = await inspect(uri);
      return r?.phase === 'verdict' ? r : undefined;
    }, 'the verdict');
    const shown = await titles(uri);
    assert.ok(
      shown.some((t) =>
        /^\$\(question\) The gate could not tell .* from noise \(.* against .*\); not kept$/.test(t),
      ),
      shown.join(' | '),
    );
    assert.ok(!shown.some((t) => t.includes('Gate rejected')), shown.join(' | '));
    assert.equal(editor.document.getText(), run.previousOf(step));
    await vscode.commands.executeCommand('skillopt.review.acceptAll', { uri: uri.toString(), key: row.key });
    assert.equal(editor.document.getText(), run.candidateOf(step));
  });

  it('gate-then-human: the engine asks after the gate, the person decides the whole candidate', async () => {
    const step = stepWhere(run, true);
    const { path, editor, uri } = await skillAt('gate-then-human', step);
    const hints = { skillPath: path, mode: 'gate-then-human', live: true, runDir: run.runDir };
    const ready = run.ready(step);
    await feed('it-gth', ready, hints);
    assert.equal((await waitFor(() => inspect(uri), 'session')).phase, 'awaiting-gate');
    const ask: EngineEvent = {
      type: 'review/requested',
      questionId: `it-gth-${step}`,
      step,
      epoch: ready.epoch,
      phase: 'after_gate',
      candidateHash: ready.candidateHash,
      candidatePath: ready.candidatePath,
      edits: ready.edits,
      candidateScore: run.verdict(step).candidateScore,
      currentScore: 0.25,
    };
    await feed('it-gth', ask, hints);
    const row = await waitFor(async () => {
      const r = await inspect(uri);
      return r?.drawn?.added.length ? r : undefined;
    }, 'the merged review');
    assert.equal(row.phase, 'review');
    assert.equal(row.waiting, true);
    assert.equal(row.perEdit, false);
    const t = await titles(uri);
    assert.ok(t.includes('Accept Candidate') && t.includes('Reject Candidate…'));
    assert.ok(t.some((x) => x.includes('passed the gate') && x.includes('the run waits for you')));
    assert.ok(!t.includes('$(check) Accept'), 'no per-edit buttons: the engine takes the candidate whole');
    await vscode.commands.executeCommand('skillopt.review.rejectAll', {
      uri: uri.toString(),
      key: row.key,
      reason: 'too long',
    });
    assert.equal(editor.document.getText(), run.previousOf(step));
    const sent = await waitFor(async () => (await inspect(uri))?.sent[0], 'the decision');
    assert.deepEqual([sent.params.candidate, sent.params.reason], ['reject', 'too long']);
  });

  it('human-first: the person prunes edits by id before the gate; a gate rejection reverts the kept ones', async () => {
    const step = stepWhere(run, true);
    const { path, editor, uri } = await skillAt('human-first', step);
    const hints = { skillPath: path, mode: 'human-first', live: true, runDir: run.runDir };
    const ready = run.ready(step);
    await feed('it-hf', ready, hints);
    await feed('it-hf', askBeforeGate(ready), hints);
    const row = await waitFor(async () => {
      const r = await inspect(uri);
      return r?.drawn?.added.length ? r : undefined;
    }, 'the review');
    assert.deepEqual([row.phase, row.waiting, row.perEdit], ['review', true, true]);
    assert.ok((await titles(uri)).some((x) => x.includes('the run waits for you')));
    const ids = row.owners.filter((o) => o.fate === 'pending').map((o) => o.id);
    const base = { uri: uri.toString(), key: row.key };
    await vscode.commands.executeCommand('skillopt.review.acceptEdit', { ...base, editId: ids[0] });
    for (const id of ids.slice(1))
      await vscode.commands.executeCommand('skillopt.review.rejectEdit', { ...base, editId: id, reason: '' });
    const sent = await waitFor(async () => (await inspect(uri))?.sent[0], 'the decision');
    assert.equal(sent.params.candidate, undefined, 'no gate has run yet');
    assert.deepEqual(
      (sent.params.decisions as Array<{ editId: string; accept: boolean }>)
        .map((d) => [d.editId, d.accept])
        .sort(),
      ids.map((id, i) => [id, i === 0]).sort(),
    );
    assert.equal((await inspect(uri))!.phase, 'awaiting-gate');
    assert.notEqual(editor.document.getText(), run.previousOf(step));
    await feed(
      'it-hf',
      {
        type: 'gate/verdict',
        step,
        epoch: ready.epoch,
        origin: 'step',
        action: 'reject',
        candidateScore: 0.1,
        currentScore: 0.5,
        bestScore: 0.5,
        cacheHit: false,
      },
      hints,
    );
    await waitFor(() => editor.document.getText() === run.previousOf(step), 'the kept edit reverted');
    await waitFor(async () => (await inspect(uri))?.drawn?.rejected.length, 'rejected note');
    assert.ok((await titles(uri)).includes('Accept Anyway'));
  });

  it('human-first: an answer given before the run has asked waits for the question and names it', async () => {
    const step = stepWhere(run, true);
    const { path, uri } = await skillAt('human-first-early', step);
    const hints = { skillPath: path, mode: 'human-first', live: true, runDir: run.runDir };
    const ready = run.ready(step);
    // The review is drawn from the candidate; the run's question has not reached the window yet.
    await feed('it-hf-early', ready, hints);
    const row = await waitFor(async () => {
      const r = await inspect(uri);
      return r?.drawn?.added.length ? r : undefined;
    }, 'the review');
    const base = { uri: uri.toString(), key: row.key };
    await vscode.commands.executeCommand('skillopt.review.acceptAll', base);
    assert.deepEqual((await inspect(uri))!.sent, [], 'nothing answers a question not asked yet');
    const ask = askBeforeGate(ready);
    await feed('it-hf-early', ask, hints);
    const sent = await waitFor(async () => (await inspect(uri))?.sent[0], 'the held decision');
    assert.equal(sent.params.questionId, ask.questionId, 'the answer names the question it was shown for');
    assert.equal(sent.params.step, step);
    const after = (await inspect(uri))!;
    assert.equal(after.sent.length, 1, 'sent once');
    assert.equal(after.waiting, false, 'answered: the review does not say the run waits for you');
  });
});
