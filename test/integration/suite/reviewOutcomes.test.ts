/**
 * Issue 18 items 5 and 6 in a real VS Code: every Accept either changes something or says why
 * not (a slow-update candidate made of hunks only is reviewable and accepted), and review text
 * never outlives its run (a stopped run's review turns inert, a new run replaces the old lenses).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { injectEmptySlowUpdate, replaceSlowUpdate, skillHash } from '../../../src/engine/skill/document';
import { lineHunks } from '../../../src/engine/skill/hunks';
import type { EngineEvent } from '../../../src/protocol/events';
import { candidateUri } from '../../../src/extension/review/candidateContent';
import {
  askBeforeGate,
  closeAll,
  feed,
  followRunSettings,
  inspect,
  lensTitleTexts as titles,
  type InspectRow,
  simRun,
  skillWith,
  stepWhere,
  waitFor,
  type SimRun,
} from './reviewSupport';
import { skillopt, stubWindow } from './support';

describe('review outcomes: no silent Accept, no stale review text', function () {
  this.timeout(90_000);
  let run: SimRun;

  let restore: () => Promise<void>;
  before(async () => {
    run = await simRun();
    // The auto-mode reviews here are drawn in the file, which needs skillopt.followRun.
    restore = await followRunSettings(true);
  });
  after(async () => {
    await restore();
    run.cleanup();
  });
  afterEach(closeAll);

  /** Feeds an epoch-1 slow-update candidate (hunks only, as the engine sends it) and waits for its review. */
  async function slowUpdateReview(
    runId: string,
    previous: string,
    candidate: string,
    skillPath: string,
    runDir: string,
  ): Promise<InspectRow> {
    const candidatePath = join(run.dir, `${runId}-candidate.md`);
    writeFileSync(candidatePath, candidate);
    const ready: EngineEvent = {
      type: 'candidate/ready',
      step: 6,
      epoch: 1,
      origin: 'slow_update',
      previousHash: skillHash(previous),
      candidateHash: skillHash(candidate),
      edits: [],
      hunks: lineHunks(previous, candidate),
      candidatePath,
    };
    await feed(runId, ready, { skillPath, mode: 'auto', live: false, runDir });
    return waitFor(async () => {
      const r = await inspect(vscode.Uri.file(skillPath));
      return r?.phase === 'review' ? r : undefined;
    }, 'the slow-update review');
  }

  it('shows a slow-update candidate (hunks, no edits) on a SKILL.md without the empty block, and Accept All applies it', async () => {
    const raw = readFileSync(run.skillPath, 'utf8');
    const previous = injectEmptySlowUpdate(raw);
    const candidate = replaceSlowUpdate(previous, '- Answer in one line, with no preamble.');
    const { path, uri, editor } = await skillWith(run, 'slow-update', raw);
    const review = await slowUpdateReview('it-slow', previous, candidate, path, run.runDir);
    assert.deepEqual(
      review.owners.map((o) => o.fate),
      ['pending'],
      'its one change is shown, not "not shown here"',
    );
    assert.ok((await titles(uri)).some((t) => t.includes('epoch 1 slow update: 1 edit to review')));
    await vscode.commands.executeCommand('skillopt.review.acceptAll', {
      uri: uri.toString(),
      key: review.key,
    });
    await waitFor(() => editor.document.getText() === candidate, 'the candidate in the document');
  });

  it("refuses Accept All on changes the editor could not show, and the diff's Accept writes the whole candidate", async () => {
    const raw = readFileSync(run.skillPath, 'utf8');
    const before = replaceSlowUpdate(injectEmptySlowUpdate(raw), '- Old rule.');
    const after = replaceSlowUpdate(before, '- New rule.');
    const mine = before.replace('- Old rule.', '- Old rule, in my words.');
    const { path, uri, editor } = await skillWith(run, 'moved', mine);
    const runDir = join(run.dir, 'moved-run');
    const review = await slowUpdateReview('it-moved', before, after, path, runDir);
    assert.deepEqual(
      review.owners.map((o) => o.fate),
      ['conflict'],
    );
    const phase = await vscode.commands.executeCommand('skillopt.review.acceptAll', {
      uri: uri.toString(),
      key: review.key,
    });
    assert.equal(phase, 'review', 'refused with a reason, the review stays open');
    assert.equal(editor.document.getText(), mine);
    await vscode.commands.executeCommand(
      'skillopt.review.acceptCandidate',
      candidateUri({ runDir, runId: 'it-moved', step: 6, origin: 'slow_update', side: 'candidate' }),
    );
    await waitFor(() => editor.document.getText() === after, 'the whole candidate in the document');
    assert.equal(await inspect(uri), undefined, 'the review is over');
  });

  it('turns a review the gate was scoring inert when its run stops, with Resume', async () => {
    const step = stepWhere(run, true);
    const { path, uri, editor } = await skillWith(run, 'stopped', run.previousOf(step));
    const hints = { skillPath: path, mode: 'auto', live: true, runDir: run.runDir };
    await feed('it-stop', run.ready(step), hints);
    await waitFor(
      async () => (await titles(uri)).some((t) => t.includes('the gate is scoring')),
      'the gate lens',
    );
    await feed(
      'it-stop',
      { type: 'run/stopped', outDir: run.runDir, reason: 'stopped by request', resumeCommand: 'r' },
      hints,
    );
    const after = await waitFor(async () => {
      const t = await titles(uri);
      return t.some((x) => x.includes('the run stopped before it was decided')) ? t : undefined;
    }, 'the stopped lens');
    assert.ok(!after.some((t) => t.includes('gate is scoring')), `no stale gate text: ${after.join(' | ')}`);
    assert.ok(after.includes('Resume Run'));
    assert.ok(!after.some((t) => /Accept|Reject/.test(t)), 'nothing left that could decide');
    assert.equal(await inspect(uri), undefined, 'no review waits on the stopped run');
    assert.equal(editor.document.getText(), run.previousOf(step), 'the document keeps the skill as it was');
  });

  it('says so when the run a decision is for is not run by this window (its engine never hears it)', async () => {
    await skillopt();
    const stubs = stubWindow();
    const warned: string[] = [];
    stubs.replace('showWarningMessage', (message: string) => {
      warned.push(message);
      return Promise.resolve(undefined);
    });
    try {
      const step = stepWhere(run, true);
      const { path, uri } = await skillWith(run, 'elsewhere', run.previousOf(step));
      // Live, as a run another window or a terminal holds reads from its lock.
      const hints = { skillPath: path, mode: 'human-first', live: true, runDir: run.runDir };
      const ready = run.ready(step);
      await feed('it-elsewhere', ready, hints);
      await feed('it-elsewhere', askBeforeGate(ready), hints);
      const row = await waitFor(async () => {
        const r = await inspect(uri);
        return r?.drawn?.added.length ? r : undefined;
      }, 'the review');
      await vscode.commands.executeCommand('skillopt.review.acceptAll', {
        uri: uri.toString(),
        key: row.key,
      });
      const said = await waitFor(
        () => warned.find((m) => m.includes('not run by this VS Code window')),
        'the warning',
      );
      assert.match(said, new RegExp(`did not receive your decision on step ${step}`));
      assert.match(said, /Decide in the window or terminal that runs it/);
    } finally {
      stubs.restore();
    }
  });

  it('turns the review inert when the engine process dies under its run', async () => {
    const api = await skillopt();
    const step = stepWhere(run, true);
    const { path, uri } = await skillWith(run, 'engine-died', run.previousOf(step));
    await feed('it-dead', run.ready(step), { skillPath: path, mode: 'auto', live: true, runDir: run.runDir });
    await waitFor(
      async () => (await titles(uri)).some((t) => t.includes('the gate is scoring')),
      'the gate lens',
    );
    await api.ctx.engine();
    const exited = new Promise((r) => api.ctx.onDidEngineExit(r));
    process.kill(api.ctx.enginePid!, 'SIGKILL');
    await exited;
    await waitFor(
      async () => (await titles(uri)).some((t) => t.includes('the run was interrupted (the engine stopped)')),
      'the interrupted lens',
    );
    assert.ok(!(await titles(uri)).some((t) => t.includes('gate is scoring')));
  });

  it("takes a paused review's undecided lines out when its run stops", async () => {
    const step = stepWhere(run, true);
    const { path, uri, editor } = await skillWith(run, 'paused', run.previousOf(step));
    const hints = { skillPath: path, mode: 'human-first', live: true, runDir: run.runDir };
    await feed('it-paused', run.ready(step), hints);
    await waitFor(async () => (await inspect(uri))?.phase === 'review', 'the review');
    await waitFor(() => editor.document.getText() !== run.previousOf(step), 'the candidate lines shown');
    await feed('it-paused', { type: 'run/failed', message: 'boom', reason: 'error' }, hints);
    await waitFor(() => editor.document.getText() === run.previousOf(step), 'the undecided lines gone');
    assert.ok((await titles(uri)).some((t) => t.includes('the run failed before it was decided')));
  });

  it("replaces the previous run's gate verdict when a new run of the skill starts", async () => {
    const step = stepWhere(run, false);
    const { path, uri } = await skillWith(run, 'new-run', run.previousOf(step));
    const hints = { skillPath: path, mode: 'auto', live: true, runDir: run.runDir };
    await feed('it-old', run.ready(step), hints);
    await feed('it-old', run.verdict(step), hints);
    await waitFor(async () => (await titles(uri)).includes('Accept Anyway'), "the old run's verdict lens");
    const started: EngineEvent = {
      type: 'run/started',
      runId: 'it-new',
      outDir: join(run.dir, 'run-new'),
      totalSteps: 6,
      epochs: 2,
      stepsPerEpoch: 3,
      splitSizes: { train: 24, val: 18, test: 18 },
      optimizer: 'sim-optimizer',
      target: 'sim-target',
      simulated: true,
    };
    await feed('it-new', started, {
      skillPath: path,
      mode: 'auto',
      live: true,
      runDir: join(run.dir, 'run-new'),
    });
    await waitFor(async () => ((await titles(uri)).length === 0 ? true : undefined), 'the old lenses gone');
    assert.equal(await inspect(uri), undefined);
  });
});
