/**
 * Training from the editor: a full `sim` run started with Optimize This Skill, the tree after it,
 * Apply Best Skill, Stop and Resume, and an engine crash that interrupts a run which Resume then
 * finishes. The engine is a real child process; the host only sends requests and folds events.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { EngineEvent } from '../../../src/protocol/events';
import { skillHash } from '../../../src/engine/skill/document';
import { lineHunks } from '../../../src/engine/skill/hunks';
import type { StepRecord } from '../../../src/protocol/records';
import { EngineRequests, type EvalResult, type StartResult } from '../../../src/protocol/engine';
import {
  closeEditors,
  diffTabs,
  hoverText,
  openSkill,
  recordEvents,
  rows,
  skillopt,
  SLOW_RUN,
  waitFor,
  waitForStatus,
  workspacePath,
} from './support';

function history(dir: string): StepRecord[] {
  return JSON.parse(readFileSync(join(dir, 'history.json'), 'utf8')) as StepRecord[];
}

function types(events: EngineEvent[]): string[] {
  return events.map((e) => e.type);
}

describe('SkillOpt extension: training runs', function () {
  this.timeout(120_000);
  const skill = (): string => workspacePath('house-style', 'SKILL.md');
  afterEach(closeEditors);

  let finished: StartResult;
  let finishedEvents: EngineEvent[] = [];

  it('runs a full sim training from Optimize This Skill on the open SKILL.md', async () => {
    const api = await skillopt();
    const rec = recordEvents(api);
    try {
      await openSkill(skill());
      const started = await vscode.commands.executeCommand<StartResult | undefined>(
        'skillopt.optimizeSkill',
        vscode.Uri.file(skill()),
        { confirm: false },
      );
      assert.ok(started, 'a run started');
      finished = started;
      assert.equal(started.runId, started.outDir);
      assert.ok(started.outDir.startsWith(workspacePath('house-style', '.skillopt', 'runs')), started.outDir);
      const run = await waitForStatus(api, started.runId, 'finished');
      finishedEvents = rec.of(started.runId);
      const seen = types(finishedEvents);
      assert.equal(seen[0], 'run/started');
      // The final spend totals follow the end of the run.
      assert.equal(seen.filter((t) => t !== 'accounting').at(-1), 'run/finished');
      const start = finishedEvents[0] as Extract<EngineEvent, { type: 'run/started' }>;
      assert.equal(start.simulated, true);
      assert.equal(seen.filter((t) => t === 'step/finished').length, start.totalSteps);
      for (const f of ['best_skill.md', 'history.json', 'summary.json', 'runtime_state.json']) {
        assert.ok(existsSync(join(started.outDir, f)), `${f} written`);
      }
      assert.equal(history(started.outDir).length, start.totalSteps);
      assert.equal(run.live?.totalSteps, start.totalSteps);
      assert.ok(api.ctx.engineRunning, 'the engine process is up');
      assert.notEqual(api.ctx.enginePid, process.pid, 'training ran in another process');
    } finally {
      rec.dispose();
    }
  });

  it('shows the finished run in the tree: status, epochs, steps with verdicts and files', async () => {
    const api = await skillopt();
    const run = await waitFor(() => {
      const r = rows(api).find((x) => x.el.spec.runId === finished.runId);
      return r?.description.startsWith('finished') ? r : undefined;
    }, 'the run row to say finished');
    const done = finishedEvents.find(
      (e): e is Extract<EngineEvent, { type: 'run/finished' }> => e.type === 'run/finished',
    )!;
    assert.equal(run.description, `finished · best ${done.bestScore.toFixed(3)}`);
    assert.equal(run.icon, 'pass');
    assert.equal(run.contextValue, 'skillopt.run.finished');
    const recs = history(finished.outDir);
    // The Scores row comes from summary.json, read again just after run/finished.
    const children = await waitFor(() => {
      const c = rows(api, run.el);
      return c.some((x) => x.label === 'Scores') ? c : undefined;
    }, 'the Scores row once summary.json is read');
    const epochs = children.filter((c) => c.label.startsWith('Epoch '));
    assert.deepEqual(
      children.map((e) => e.label),
      [...new Set(recs.map((r) => `Epoch ${r.epoch}`)), 'Gate: strict', 'Scores', 'Report', 'Best skill'],
    );
    const stepRows = epochs.flatMap((e) => rows(api, e.el)).filter((s) => s.label.startsWith('Step '));
    assert.deepEqual(
      stepRows.map((s) => s.label),
      recs.map((r) => `Step ${r.step}`),
    );
    const icons: Record<string, string> = {
      accept_new_best: 'star-full',
      accept: 'check',
      reject: 'close',
      force_accept: 'check',
    };
    stepRows.forEach((s, i) => {
      const r = recs[i]!;
      assert.equal(s.icon, icons[r.action] ?? 'circle-slash', `step ${r.step} icon for ${r.action}`);
      if (r.candidate_gate_score !== undefined)
        assert.ok(s.description.startsWith(r.candidate_gate_score.toFixed(3)), s.description);
    });
    const files = rows(api, stepRows[0]!.el).map((f) => f.label);
    assert.ok(files.includes('Candidate diff'), files.join(', '));
  });

  it('shows the gate beside the steps, and checks its noise (A/A) from the run, kept with the run', async () => {
    const api = await skillopt();
    const runRow = (): ReturnType<typeof rows>[number] | undefined =>
      rows(api).find((x) => x.el.spec.kind === 'run' && x.el.spec.runId === finished.runId);
    const summary = JSON.parse(readFileSync(join(finished.outDir, 'summary.json'), 'utf8')) as {
      no_skill_test_hard: number;
      baseline_test_hard: number;
      test_hard: number;
    };
    const gate = rows(api, runRow()!.el).find((c) => c.label === 'Gate: strict')!;
    assert.match(gate.description, /^only Δ ≥ 0\.263 detectable \(19 items × 1 repeat, alpha 0\.05\)$/);
    const scores = rows(api, runRow()!.el).find((c) => c.label === 'Scores')!;
    assert.equal(
      scores.description,
      `test: no skill ${summary.no_skill_test_hard.toFixed(3)} · initial ${summary.baseline_test_hard.toFixed(3)} · best ${summary.test_hard.toFixed(3)}`,
    );
    // The context menu hands the command the tree row; the test names the count the picker would ask.
    const result = await vscode.commands.executeCommand<EvalResult | undefined>('skillopt.checkGateNoise', {
      runId: finished.runId,
      runs: 3,
    });
    assert.ok(result?.aa, 'the A/A check ran');
    assert.equal(result.aa.runs, 3);
    assert.equal(result.aa.comparisons, 6);
    assert.ok(result.out_dir.startsWith(join(finished.outDir, 'eval_only')), result.out_dir);
    const withAa = await waitFor(() => {
      const g = rows(api, runRow()!.el).find((c) => c.label === 'Gate: strict');
      return g?.description.includes('A/A ×3') ? g : undefined;
    }, 'the Gate row to show the A/A check');
    assert.match(withAa.description, /A\/A ×3: strict gate accepts \d+ of 6 \(\d+%\), paired \d+$/);
    const group = rows(api, runRow()!.el).find((c) => c.label === 'Evaluations')!;
    const evaluation = rows(api, group.el).find((r) => r.el.spec.path === result.out_dir)!;
    assert.match(evaluation.description, /^A\/A ×3: strict gate accepts/);
    const aaRow = rows(api, evaluation.el).find((c) => c.label === 'A/A check')!;
    assert.match(aaRow.description, /^A\/A ×3/);
    // Its row opens the evaluation's report, A/A section included.
    const item = api.tree.getTreeItem(aaRow.el);
    await vscode.commands.executeCommand(item.command!.command, ...(item.command!.arguments ?? []));
    const doc = await waitFor(
      () => vscode.workspace.textDocuments.find((d) => d.getText().startsWith('# SkillOpt evaluation')),
      'the evaluation report',
    );
    assert.match(doc.getText(), /## A\/A check/);
    assert.match(
      doc.getText(),
      /strict gate \(the reference rule\): would accept the skill over itself in \d+ of 6/,
    );
  });

  it('says where a line of the best skill came from when hovered', async () => {
    const bestPath = join(finished.outDir, 'best_skill.md');
    const records = JSON.parse(readFileSync(join(finished.outDir, 'provenance.json'), 'utf8')) as Array<{
      step: number;
      content?: string;
    }>;
    const doc = await vscode.workspace.openTextDocument(bestPath);
    await vscode.window.showTextDocument(doc);
    const lines = doc.getText().split('\n');
    // The newest record with a line in the file is that line's last author.
    const has = (r: { content?: string }, l: string): boolean =>
      l.trim().length >= 4 && (r.content ?? '').split('\n').some((c) => c.trim() === l.trim());
    const kept = [...records].reverse().find((r) => lines.some((l) => has(r, l)));
    assert.ok(kept, 'a kept line is in best_skill.md');
    const line = lines.findIndex((l) => has(kept, l));
    const text = await hoverText(doc.uri, new vscode.Position(line, 2));
    assert.match(text, new RegExp(`Added by step ${kept.step} \\(epoch \\d+\\) of `));
    assert.match(text, /Selection score \d\.\d{3} → \d\.\d{3}/);
    // The first line (front matter) was written by a person: no origin.
    const none = await hoverText(doc.uri, new vscode.Position(0, 1));
    assert.ok(!none.includes('Added by step'), none);
  });

  it('never credits a line under review to a run, even when a run once wrote the same text', async () => {
    const bestPath = join(finished.outDir, 'best_skill.md');
    const records = JSON.parse(readFileSync(join(finished.outDir, 'provenance.json'), 'utf8')) as Array<{
      content?: string;
    }>;
    const best = readFileSync(bestPath, 'utf8');
    const kept = records
      .flatMap((r) => (r.content ?? '').split('\n'))
      .find((l) => l.trim().length >= 4 && best.split('\n').some((b) => b.trim() === l.trim()));
    assert.ok(kept, 'a kept line to propose again');
    // Another run's candidate proposes that text again: until decided, the line is nobody's.
    const candidate = `${best.trimEnd()}\n${kept.trim()}\n`;
    const candidatePath = join(tmpdir(), `skillopt-pending-${process.pid}.md`);
    writeFileSync(candidatePath, candidate);
    const doc = await vscode.workspace.openTextDocument(bestPath);
    await vscode.window.showTextDocument(doc, { preview: false });
    try {
      await vscode.commands.executeCommand('skillopt.review.handleEvent', {
        runId: 'it-other-run',
        skillPath: bestPath,
        mode: 'auto',
        live: false,
        runDir: join(tmpdir(), 'skillopt-other-run'),
        event: {
          type: 'candidate/ready',
          step: 1,
          epoch: 1,
          origin: 'step',
          previousHash: skillHash(best),
          candidateHash: skillHash(candidate),
          edits: [],
          hunks: lineHunks(best, candidate),
          candidatePath,
        },
      });
      const line = await waitFor(() => {
        const lines = doc.getText().split('\n');
        return doc.isDirty ? lines.lastIndexOf(kept.trim()) : undefined;
      }, 'the pending line in the document');
      const text = await hoverText(doc.uri, new vscode.Position(line, 2));
      assert.match(text, /waiting for your decision/, 'the review describes its own line');
      assert.doesNotMatch(text, /Added by step/, text);
    } finally {
      await vscode.commands.executeCommand('workbench.action.files.revert');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      rmSync(candidatePath, { force: true });
    }
  });

  it('applies the best skill as one undoable edit after showing the diff', async () => {
    // A copy of the skill as the run started from it: the inline review (auto mode) may have
    // applied and saved the run's candidates to the trained file by now.
    const target = workspacePath('house-style', 'SKILL-copy.md');
    copyFileSync(join(finished.outDir, 'skills', 'skill_v0000.md'), target);
    const editor = await openSkill(target);
    const before = editor.document.getText();
    const best = readFileSync(join(finished.outDir, 'best_skill.md'), 'utf8');
    assert.notEqual(best, before, 'the sim run improved the skill');
    const ok = await vscode.commands.executeCommand<boolean>('skillopt.applyBestSkill', finished.runId, {
      skillPath: target,
      confirm: false,
    });
    assert.equal(ok, true);
    assert.ok(
      diffTabs().some(
        (d) => d.original.fsPath === target && d.modified.fsPath === join(finished.outDir, 'best_skill.md'),
      ),
      'diff shown',
    );
    assert.equal(editor.document.getText(), best);
    await vscode.window.showTextDocument(editor.document, { preserveFocus: false });
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    await vscode.commands.executeCommand('undo');
    await waitFor(() => editor.document.getText() === before, 'undo to restore the skill');
    await editor.document.save();
  });

  it('stops a run on request and resumes it to the end without repeating steps', async () => {
    const api = await skillopt();
    const rec = recordEvents(api);
    try {
      const started = await vscode.commands.executeCommand<StartResult | undefined>(
        'skillopt.optimizeSkill',
        vscode.Uri.file(skill()),
        { confirm: false, overrides: [...SLOW_RUN] },
      );
      assert.ok(started);
      await waitFor(() => rec.of(started.runId).some((e) => e.type === 'step/finished'), 'the first step');
      assert.equal(await vscode.commands.executeCommand('skillopt.stopRun', started.runId), true);
      const stopped = await waitForStatus(api, started.runId, 'stopped');
      assert.equal(stopped.live?.message, 'stopped by request');
      const done = history(started.outDir).length;
      const total = (rec.of(started.runId)[0] as Extract<EngineEvent, { type: 'run/started' }>).totalSteps;
      assert.ok(done >= 1 && done < total, `stopped after ${done} of ${total} steps`);
      const row = await waitFor(
        () =>
          rows(api).find(
            (r) => r.el.spec.runId === started.runId && r.contextValue === 'skillopt.run.resumable',
          ),
        'the run to be resumable in the tree',
      );
      assert.match(row.description, /^stopped/);

      const resumed = await vscode.commands.executeCommand<StartResult | undefined>(
        'skillopt.resumeRun',
        started.runId,
      );
      assert.equal(resumed?.outDir, started.outDir);
      await waitForStatus(api, started.runId, 'finished');
      const restart = rec
        .of(started.runId)
        .filter((e): e is Extract<EngineEvent, { type: 'run/started' }> => e.type === 'run/started')
        .at(-1)!;
      assert.equal(restart.resumedFromStep, done + 1);
      assert.deepEqual(
        history(started.outDir).map((r) => r.step),
        Array.from({ length: total }, (_, i) => i + 1),
      );
    } finally {
      rec.dispose();
    }
  });

  it('marks a run interrupted when the engine process dies, fails its pending requests, and resumes', async () => {
    const api = await skillopt();
    const rec = recordEvents(api);
    try {
      const started = await vscode.commands.executeCommand<StartResult | undefined>(
        'skillopt.optimizeSkill',
        vscode.Uri.file(skill()),
        { confirm: false, overrides: [...SLOW_RUN] },
      );
      assert.ok(started);
      await waitFor(() => rec.of(started.runId).some((e) => e.type === 'step/finished'), 'the first step');
      const engine = await api.ctx.engine();
      const pid = api.ctx.enginePid!;
      // A request still in the engine when it dies must fail, not hang. An eval-only request on the
      // slow model, not run/stop: a stop the engine handles before the kill lands would end the run
      // as stopped, not interrupted.
      const pending = engine.request(
        EngineRequests.evaluate,
        {
          configPath: workspacePath('house-style', 'skillopt.yaml'),
          overrides: [...SLOW_RUN],
          skillPath: skill(),
          split: 'all',
        },
        { timeoutMs: 0 },
      );
      const exited = new Promise((r) => api.ctx.onDidEngineExit(r));
      process.kill(pid, 'SIGKILL');
      await assert.rejects(pending, (err: { reason?: string }) => err.reason === 'closed');
      await exited;
      const run = await waitForStatus(api, started.runId, 'interrupted');
      assert.match(run.live?.message ?? '', /stopped unexpectedly/);
      assert.equal(api.ctx.engineRunning, false);

      const resumed = await vscode.commands.executeCommand<StartResult | undefined>(
        'skillopt.resumeRun',
        started.runId,
      );
      assert.equal(resumed?.outDir, started.outDir);
      assert.notEqual(api.ctx.enginePid, pid, 'a new engine process');
      await waitForStatus(api, started.runId, 'finished');
      const steps = history(started.outDir).map((r) => r.step);
      assert.deepEqual(
        steps,
        Array.from({ length: steps.length }, (_, i) => i + 1),
      );
    } finally {
      rec.dispose();
    }
  });
});
