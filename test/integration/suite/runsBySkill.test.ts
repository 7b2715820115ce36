/**
 * The Runs view grouped by skill in a real VS Code: a row per trained skill, named from its front
 * matter, with its runs under it (their rows, actions and accessible labels as in the flat list);
 * the title's toggle and the `skillopt.groupRunsBySkill` setting show one list instead; Reveal
 * finds a run inside its group; a skill's row opens its SKILL.md.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { Commands, SkillCommands } from '../../../src/extension/constants';
import { closeEditors, rows, rowsOf, skillopt, waitFor, workspacePath, type TreeRow } from './support';

describe('SkillOpt extension: the Runs view grouped by skill', function () {
  this.timeout(120_000);
  const alpha = (): string => workspacePath('by-skill', 'alpha', 'SKILL.md');
  const beta = (): string => workspacePath('by-skill', 'beta', 'SKILL.md');
  const runOf = (skill: 'alpha' | 'beta', name: string): string =>
    workspacePath('by-skill', skill, '.skillopt', 'runs', name);
  const setting = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('skillopt');

  /** A copy of the CLI's run, trained (as config.json says) on `skill`. */
  function copyRun(skill: string, dir: string): void {
    cpSync(workspacePath('cli-runs', 'house-style-cli'), dir, { recursive: true });
    const file = join(dir, 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...config, skill_init: skill }, null, 2));
  }

  before(async () => {
    for (const [skill, name] of [
      [alpha(), 'alpha-answers'],
      [beta(), 'beta-style'],
    ] as const) {
      mkdirSync(join(skill, '..'), { recursive: true });
      writeFileSync(skill, `---\nname: ${name}\ndescription: Use for ${name}.\n---\n\n# ${name}\n`);
      // The view looks for runs in `.skillopt/runs` beside each config.
      cpSync(workspacePath('house-style', 'skillopt.yaml'), join(skill, '..', 'skillopt.yaml'));
    }
    copyRun(alpha(), runOf('alpha', 'alpha-1'));
    copyRun(alpha(), runOf('alpha', 'alpha-2'));
    copyRun(beta(), runOf('beta', 'beta-1'));
    const api = await skillopt();
    await waitFor(
      async () => {
        await vscode.commands.executeCommand(Commands.refreshRuns);
        return ['alpha-1', 'alpha-2'].every((n) => api.ctx.runs.get(runOf('alpha', n))) &&
          api.ctx.runs.get(runOf('beta', 'beta-1'))
          ? true
          : undefined;
      },
      'the Runs view to read the copied runs',
      90_000,
    );
  });

  afterEach(async () => {
    await setting().update('groupRunsBySkill', undefined, vscode.ConfigurationTarget.Workspace);
    await closeEditors();
  });

  const group = (top: TreeRow[], label: string): TreeRow | undefined =>
    top.find((r) => r.el.spec.kind === 'skillGroup' && r.label === label);

  it('groups runs under a row per skill, named from its front matter, the run rows unchanged', async () => {
    const api = await skillopt();
    const top = await waitFor(() => {
      const r = rowsOf(api);
      return group(r, 'alpha-answers') && group(r, 'beta-style') ? r : undefined;
    }, 'a row for each skill');
    const a = group(top, 'alpha-answers')!;
    assert.equal(a.description, '2 runs');
    assert.equal(a.contextValue, 'skillopt.skillGroup');
    assert.equal(a.icon, 'book');
    const item = api.tree.getTreeItem(a.el);
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
    assert.deepEqual(item.accessibilityInformation, { label: 'alpha-answers, 2 runs' });
    assert.equal(item.tooltip, `Runs that trained ${alpha()}`);
    // No run sits at the top beside the skill rows.
    assert.ok(top.every((r) => r.el.spec.kind !== 'run'));

    const runs = rowsOf(api, a.el);
    assert.deepEqual(runs.map((r) => r.label).sort(), ['alpha-1', 'alpha-2']);
    for (const r of runs) {
      assert.equal(
        r.contextValue,
        'skillopt.run.finished',
        'Apply Best, Gate History and the rest still apply',
      );
      assert.match(r.description, /^finished · best \d\.\d{3}$/);
      assert.equal(api.tree.getParent(r.el), a.el);
      const label = api.tree.getTreeItem(r.el).accessibilityInformation?.label;
      assert.equal(label, `${r.label}, ${r.description}`);
      // Its epochs and steps are there as before.
      assert.ok(rowsOf(api, r.el).some((e) => e.label.startsWith('Epoch')));
    }
    assert.deepEqual(
      rowsOf(api, group(top, 'beta-style')!.el).map((r) => r.label),
      ['beta-1'],
    );
  });

  it('shows one list with the title toggle (the setting), and groups again', async () => {
    const api = await skillopt();
    await vscode.commands.executeCommand('skillopt.showRunsFlat');
    assert.equal(setting().get('groupRunsBySkill'), false);
    const flat = await waitFor(() => {
      const r = rowsOf(api);
      return r.every((x) => x.el.spec.kind !== 'skillGroup') && r.some((x) => x.label === 'alpha-1')
        ? r
        : undefined;
    }, 'the runs in one list');
    const run = flat.find((r) => r.label === 'alpha-1')!;
    assert.equal(api.tree.getParent(run.el), undefined);
    assert.equal(run.contextValue, 'skillopt.run.finished');

    await vscode.commands.executeCommand('skillopt.groupRunsBySkill');
    assert.equal(setting().get('groupRunsBySkill'), true);
    await waitFor(() => group(rowsOf(api), 'alpha-answers'), 'the skill rows again');
    // The tests' flattening helper still finds every run.
    assert.ok(rows(api).some((r) => r.label === 'beta-1'));
  });

  it('reveals a run inside its skill, and opens the skill from its row', async () => {
    const api = await skillopt();
    const el = api.tree.runElement(runOf('beta', 'beta-1'))!;
    const parent = api.tree.getParent(el);
    assert.equal(parent?.spec.label, 'beta-style');
    await vscode.commands.executeCommand(Commands.revealRun, runOf('beta', 'beta-1'));

    const row = group(rowsOf(api), 'beta-style')!;
    await vscode.commands.executeCommand(SkillCommands.open, row.el);
    await waitFor(
      () => vscode.window.activeTextEditor?.document.uri.fsPath === beta() || undefined,
      "the skill's SKILL.md in the editor",
    );
  });
});
