/**
 * SkillOpt inside a real VS Code: activation, the commands it contributes, the Runs tree over run
 * folders written by the CLI and by the Python reference, and API keys in SecretStorage.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { secretKey } from '../../../src/extension/constants';
import { closeEditors, diffTabs, rows, skillopt, waitFor, workspacePath } from './support';

describe('SkillOpt extension: activation and browsing runs', function () {
  this.timeout(60_000);
  afterEach(closeEditors);

  it('activates in the Node extension host of a trusted workspace', async () => {
    const api = await skillopt();
    assert.equal(vscode.workspace.isTrusted, true);
    assert.equal(typeof process.versions.node, 'string');
    assert.ok(api.ctx.log, 'the SkillOpt log channel exists');
  });

  it('registers every command it contributes, each under the SkillOpt category', async () => {
    await skillopt();
    const ext = vscode.extensions.getExtension('skillopt.skillopt')!;
    const contributed = (
      ext.packageJSON as { contributes: { commands: Array<{ command: string; category?: string }> } }
    ).contributes.commands;
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.filter((c) => !registered.has(c.command)).map((c) => c.command);
    assert.deepEqual(missing, []);
    assert.deepEqual(
      contributed.filter((c) => c.category !== 'SkillOpt').map((c) => c.command),
      [],
    );
    for (const id of [
      'skillopt.optimizeSkill',
      'skillopt.evaluateSkill',
      'skillopt.stopRun',
      'skillopt.resumeRun',
      'skillopt.openRunFolder',
      'skillopt.applyBestSkill',
      'skillopt.setApiKey',
      'skillopt.selectCopilotModel',
    ]) {
      assert.ok(registered.has(id), `${id} registered`);
    }
  });

  it('keeps run and evaluation folders out of Quick Open and search by default, and the editor default exclusions in', () => {
    const exclude = vscode.workspace.getConfiguration('search').get<Record<string, boolean>>('exclude') ?? {};
    assert.equal(exclude['**/.skillopt/runs'], true);
    assert.equal(exclude['**/.skillopt/evals'], true, 'an evaluation keeps a conversation per task');
    assert.equal(exclude['**/node_modules'], true, "VS Code's default stays");
  });

  it('lists the Python reference run and the CLI run with their epochs, steps and files', async () => {
    const api = await skillopt();
    const python = workspacePath('imported', 'searchqa_mini');
    const cli = workspacePath('cli-runs', 'house-style-cli');
    const runs = await waitFor(() => {
      const r = rows(api);
      return r.some((x) => x.label === 'searchqa_mini') && r.some((x) => x.label === 'house-style-cli')
        ? r
        : undefined;
    }, 'both imported runs in the tree');
    const py = runs.find((r) => r.label === 'searchqa_mini')!;
    assert.equal(py.description, 'finished · best 0.550 · Python run');
    assert.equal(py.contextValue, 'skillopt.run.finished');
    assert.equal(api.ctx.runs.get(python)?.writer, 'skillopt-python');

    const children = rows(api, py.el);
    // The Python reference writes no report.md; its best skill is listed after the epochs.
    assert.deepEqual(
      children.map((e) => e.label),
      ['Epoch 1', 'Epoch 2', 'Best skill'],
    );
    const epochs = children.filter((e) => e.label.startsWith('Epoch '));
    const steps = rows(api, epochs[1]!.el);
    assert.deepEqual(
      steps.map((s) => [s.label, s.description, s.icon]),
      [
        ['Step 2', '0.500 (−0.050) · 2 edits', 'close'],
        ['Slow update', 'accepted without the gate', 'history'],
        ['Meta skill', 'written', 'lightbulb'],
      ],
    );
    const fileRows = rows(api, steps[0]!.el);
    const files = fileRows.map((f) => f.label);
    assert.deepEqual(files, ['Candidate diff', 'Apply report', 'Merged edits']);
    // Screen readers announce what the row shows, never a file's full path.
    const spoken = (el: (typeof fileRows)[number]['el']): string | undefined =>
      api.tree.getTreeItem(el).accessibilityInformation?.label;
    assert.equal(spoken(steps[0]!.el), 'Step 2, 0.500 (−0.050) · 2 edits');
    assert.equal(spoken(fileRows[1]!.el), 'Apply report, edit_apply_report.json');

    const c = runs.find((r) => r.label === 'house-style-cli')!;
    assert.match(c.description, /^finished · best \d\.\d{3}$/);
    const cliRun = api.ctx.runs.get(cli)!;
    assert.equal(cliRun.writer, 'skillopt-vscode');
    const cliSteps = rows(api, rows(api, c.el)[0]!.el).filter((s) => s.label.startsWith('Step '));
    assert.equal(cliSteps.length, cliRun.epochs[0]!.steps.length);
    for (const s of cliSteps)
      assert.match(s.description, /^((\d\.\d{3} \(([+−]\d\.\d{3}|±0)\) · )?\d+ edits?|skipped: .+)$/);
  });

  it('opens the report rendered and a task conversation as headed text, not JSON', async () => {
    const cli = workspacePath('cli-runs', 'house-style-cli');
    const previews = (): vscode.Tab[] =>
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter(
          (t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes('markdown.preview'),
        );
    await vscode.commands.executeCommand('skillopt.openArtifact', join(cli, 'report.md'));
    await waitFor(() => previews().length === 1 || undefined, 'the report preview');
    const conversation = findFile(cli, 'conversation.json');
    assert.ok(conversation, 'the CLI run kept a conversation');
    await vscode.commands.executeCommand('skillopt.openArtifact', conversation);
    const tab = await waitFor(
      () => previews().find((t) => !/report/i.test(t.label)),
      'the conversation preview',
    );
    assert.match(tab.label, /conversation/);
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'skillopt-conversation');
    assert.ok(doc, 'the rendered conversation document');
    assert.match(doc.getText(), /^# Task .+\n\n## Task\n\n```text\n/);
    await closeEditors();
  });

  it('opens a step candidate diff from the tree', async () => {
    const api = await skillopt();
    const python = workspacePath('imported', 'searchqa_mini');
    await waitFor(() => api.ctx.runs.get(python), 'the Python run');
    assert.equal(await vscode.commands.executeCommand('skillopt.openStepDiff', python, 1), true);
    const diff = await waitFor(() => diffTabs()[0], 'a diff editor');
    assert.match(diff.original.fsPath, /skills[\\/]skill_v0000\.md$/);
    assert.match(diff.modified.fsPath, /steps[\\/]step_0001[\\/]candidate_skill\.md$/);
  });

  it('stores, and removes, API keys per provider in SecretStorage', async () => {
    const api = await skillopt();
    const secrets = api.ctx.extension.secrets;
    assert.equal(
      await vscode.commands.executeCommand(
        'skillopt.setApiKey',
        'anthropic',
        'fake-anthropic-test-0123456789',
      ),
      true,
    );
    assert.equal(await secrets.get(secretKey('anthropic')), 'fake-anthropic-test-0123456789');
    assert.equal(await secrets.get(secretKey('openai')), undefined);
    assert.equal(await vscode.commands.executeCommand('skillopt.setApiKey', 'anthropic', ''), true);
    assert.equal(await secrets.get(secretKey('anthropic')), undefined);
  });
});

/** The first file named `name` under `dir`, depth first. */
function findFile(dir: string, name: string): string | undefined {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isFile() && e.name === name) return p;
    if (e.isDirectory()) {
      const found = findFile(p, name);
      if (found) return found;
    }
  }
  return undefined;
}
