/**
 * Restricted Mode (an untrusted workspace): SkillOpt activates in limited mode, lists and opens
 * existing runs, and refuses to train, evaluate or resume: no engine process starts and nothing is
 * written.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { closeEditors, diffTabs, rows, skillopt, waitFor, workspacePath } from '../suite/support';

describe('SkillOpt extension in Restricted Mode', function () {
  this.timeout(60_000);
  afterEach(closeEditors);

  it('runs in an untrusted workspace and still registers its commands', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const api = await skillopt();
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const id of [
      'skillopt.optimizeSkill',
      'skillopt.evaluateSkill',
      'skillopt.resumeRun',
      'skillopt.openRunFolder',
    ]) {
      assert.ok(registered.has(id), id);
    }
    assert.equal(api.ctx.trusted, false);
  });

  it('lists existing runs and opens their files', async () => {
    const api = await skillopt();
    const runs = await waitFor(() => {
      const r = rows(api);
      return r.length >= 2 ? r : undefined;
    }, 'the imported runs');
    assert.deepEqual(runs.map((r) => r.label).sort(), ['house-style-cli', 'searchqa_mini']);
    const python = workspacePath('imported', 'searchqa_mini');
    assert.equal(await vscode.commands.executeCommand('skillopt.openStepDiff', python, 2), true);
    await waitFor(() => diffTabs()[0], 'the step diff');
  });

  it('refuses to train, evaluate or resume, and starts no engine', async () => {
    const api = await skillopt();
    const skill = workspacePath('house-style', 'SKILL.md');
    const started = await vscode.commands.executeCommand('skillopt.optimizeSkill', vscode.Uri.file(skill), {
      confirm: false,
    });
    assert.equal(started, undefined);
    const evaluated = await vscode.commands.executeCommand('skillopt.evaluateSkill', {
      skillPath: skill,
      configPath: workspacePath('house-style', 'skillopt.yaml'),
      split: 'val',
    });
    assert.equal(evaluated, undefined);
    const resumed = await vscode.commands.executeCommand(
      'skillopt.resumeRun',
      workspacePath('cli-runs', 'house-style-cli'),
    );
    assert.equal(resumed, undefined);
    assert.equal(api.ctx.engineRunning, false, 'no engine process in Restricted Mode');
    assert.equal(existsSync(workspacePath('house-style', '.skillopt')), false, 'nothing written');
  });
});
