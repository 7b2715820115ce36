/**
 * The Skills view in a real VS Code: skills in the three project locations and in a folder named
 * by chat.agentSkillsLocations, plus a skill a run trained elsewhere in the workspace, each with
 * which agent loads it and its latest run; the view follows SKILL.md files created and deleted and
 * the setting changing; Optimize and Evaluate start their flows on the row's SKILL.md. Quick picks
 * and the confirmation are answered by replacing the window functions for the length of a test.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { Commands, SkillCommands } from '../../../src/extension/constants';
import type { SkillRow } from '../../../src/extension/skills/skillNodes';
import { formatScore } from '../../../src/extension/runs/format';
import type { StartResult } from '../../../src/protocol/engine';
import { skillopt, stubWindow, waitFor, waitForStatus, workspacePath } from './support';

function writeSkill(location: string, name: string, front?: string): string {
  const file = workspacePath(location, name, 'SKILL.md');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `---\n${front ?? `name: ${name}\ndescription: Use for ${name.replace(/-/g, ' ')}.\n`}---\n\n# ${name}\n\nAnswer briefly.\n`,
  );
  return file;
}

describe('SkillOpt extension: the Skills view', function () {
  this.timeout(120_000);
  const stubs = stubWindow();
  const replace = stubs.replace;
  /** The titles of the quick picks shown from now on; each is cancelled. */
  const quickPickTitles = (): string[] => {
    const titles: string[] = [];
    replace('showQuickPick', (_items: unknown, opts?: vscode.QuickPickOptions) => {
      titles.push(opts?.title ?? '');
      return Promise.resolve(undefined);
    });
    return titles;
  };
  const chat = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('chat');

  const github = (): string => workspacePath('.github', 'skills', 'gh-review', 'SKILL.md');
  const claude = (): string => workspacePath('.claude', 'skills', 'claude-notes', 'SKILL.md');
  const codex = (): string => workspacePath('.agents', 'skills', 'codex-fix', 'SKILL.md');
  const broken = (): string => workspacePath('.claude', 'skills', 'broken-yaml', 'SKILL.md');
  const custom = (): string => workspacePath('team-skills', 'team-style', 'SKILL.md');
  const trained = (): string => workspacePath('trained', 'SKILL.md');
  const earlierRun = (): string => workspacePath('trained', '.skillopt', 'runs', 'earlier');

  async function rowsNow(): Promise<SkillRow[]> {
    return (await skillopt()).skills.rows();
  }

  /** Waits until `check` holds for the view's rows, and returns them. */
  async function until(check: (rows: SkillRow[]) => boolean, what: string): Promise<SkillRow[]> {
    try {
      return await waitFor(async () => {
        const r = await rowsNow();
        return check(r) ? r : undefined;
      }, what);
    } catch (err) {
      // Say what the view showed instead.
      const shown = (await rowsNow()).map((r) => `${r.path}: ${r.description}`).join('\n');
      throw new Error(`${(err as Error).message}; the view shows:\n${shown}`, { cause: err });
    }
  }
  const row = (rows: SkillRow[], path: string): SkillRow | undefined => rows.find((r) => r.path === path);

  before(async () => {
    writeSkill('.github/skills', 'gh-review');
    writeSkill('.claude/skills', 'claude-notes');
    mkdirSync(workspacePath('.claude', 'skills', 'claude-notes', 'evals'));
    writeFileSync(workspacePath('.claude', 'skills', 'claude-notes', 'evals', 'evals.json'), '{"evals": []}');
    writeSkill('.agents/skills', 'codex-fix');
    writeSkill('.claude/skills', 'broken-yaml', 'name: broken-yaml\ndescription: [never closed\n');
    writeSkill('team-skills', 'team-style');
    // A skill trained by an earlier run, in the workspace but in no agent's folder: the CLI's
    // run folder, its config pointing at this copy of the skill.
    const dir = workspacePath('trained');
    mkdirSync(dir, { recursive: true });
    for (const f of ['SKILL.md', 'tasks.jsonl']) cpSync(workspacePath('house-style', f), join(dir, f));
    writeFileSync(
      join(dir, 'skillopt.yaml'),
      readFileSync(workspacePath('house-style', 'skillopt.yaml'), 'utf8').replace(
        'num_epochs: 2',
        'num_epochs: 1',
      ),
    );
    cpSync(workspacePath('cli-runs', 'house-style-cli'), earlierRun(), { recursive: true });
    const configFile = join(earlierRun(), 'config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(configFile, JSON.stringify({ ...config, skill_init: trained() }, null, 2));
    // The Runs view reads a run folder when its history or state changes; one copied in whole
    // is found by a refresh (its config sits beside it). A refresh already under way when the
    // copy ended may have missed it: refresh until the run is known.
    const api = await skillopt();
    await waitFor(
      async () => {
        await vscode.commands.executeCommand(Commands.refreshRuns);
        return api.ctx.runs.get(earlierRun());
        // A busy full suite can take a while to settle its watchers.
      },
      'the Runs view to read the earlier run',
      90_000,
    );
    await chat().update(
      'agentSkillsLocations',
      { 'team-skills': true, '.github/skills': true },
      vscode.ConfigurationTarget.Workspace,
    );
  });

  afterEach(() => {
    stubs.restore();
  });

  after(async () => {
    await chat().update('agentSkillsLocations', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('lists the skills of every location and the trained one, with their agent and latest run', async () => {
    const api = await skillopt();
    const all = [github(), claude(), codex(), broken(), custom(), trained()];
    const rows = await until((r) => all.every((p) => row(r, p)), 'every skill in the Skills view');
    const byPath = (p: string): SkillRow => row(rows, p)!;
    assert.deepEqual(
      [github(), claude(), codex(), custom()].map((p) => [byPath(p).label, byPath(p).description]),
      [
        ['gh-review', 'Copilot / VS Code · not trained yet'],
        ['claude-notes', 'Claude Code · not trained yet · has evals'],
        ['codex-fix', 'Codex · not trained yet'],
        ['team-style', 'VS Code · not trained yet'],
      ],
    );
    // Listed once, though the setting names .github/skills too.
    assert.equal(rows.filter((r) => r.path === github()).length, 1);

    const bad = byPath(broken());
    assert.equal(bad.description, 'Claude Code · not trained yet · 1 error');
    assert.equal(bad.icon.id, 'error');
    assert.match(bad.tooltip, /Line 3 \(error\): front matter is not valid YAML/);

    const run = api.ctx.runs.get(earlierRun());
    assert.ok(run?.bestScore !== undefined, 'the earlier run is read');
    const t = byPath(trained());
    assert.equal(t.label, 'house-style', 'the name comes from the front matter, not the folder');
    assert.match(
      t.description,
      // The lint's finding too: its name is not its folder's (trained/).
      new RegExp(
        `^best ${formatScore(run.bestScore).replace('.', '\\.')} · .+ · not loaded by an agent · 1 error$`,
      ),
    );
    assert.equal(t.runId, earlierRun());
    assert.equal(t.contextValue, 'skillopt.skill.run');
    assert.match(t.tooltip, /^house-style\nAnswer short knowledge-base questions/);

    // Rows are read out as they read.
    const item = api.skills.getTreeItem(byPath(codex()));
    assert.deepEqual(item.accessibilityInformation, { label: 'codex-fix, Codex · not trained yet' });
    assert.equal(item.tooltip, byPath(codex()).tooltip);
    assert.equal(item.command?.command, SkillCommands.open);
  });

  it('follows SKILL.md files created and deleted, and the setting changing', async () => {
    const created = writeSkill('.agents/skills', 'brand-new');
    await until((r) => row(r, created)?.label === 'brand-new', 'the new skill to show');
    rmSync(dirname(github()), { recursive: true, force: true });
    await until((r) => !row(r, github()), 'the deleted skill folder to go');
    rmSync(created);
    await until((r) => !row(r, created), 'the deleted SKILL.md to go');
    await chat().update(
      'agentSkillsLocations',
      { 'team-skills': false },
      vscode.ConfigurationTarget.Workspace,
    );
    await until((r) => !row(r, custom()), 'the skill of a location turned off to go');
    await chat().update(
      'agentSkillsLocations',
      { 'team-skills': true },
      vscode.ConfigurationTarget.Workspace,
    );
    await until((r) => !!row(r, custom()), 'the skill to come back with its location');
  });

  it('New Skill writes <location>/<name>/SKILL.md with its front matter, lists it and opens it', async () => {
    const answers = ['release-notes', 'Write release notes: "what changed", grouped by area.'];
    const prompts: string[] = [];
    type Item = vscode.QuickPickItem & { dir?: string };
    replace('showQuickPick', async (items: Item[] | Thenable<Item[]>) => {
      const list = await items;
      assert.deepEqual(
        list.map((i) => `${i.label} ${i.description ?? ''}`),
        ['.github/skills Copilot / VS Code', '.claude/skills Claude Code', '.agents/skills Codex'],
      );
      return list[2];
    });
    replace('showInputBox', (opts?: vscode.InputBoxOptions) => {
      prompts.push(opts?.prompt ?? '');
      // The name is checked as the person types: a name the hosts would not load is refused.
      if (prompts.length === 1)
        assert.match((opts?.validateInput?.('Release Notes') as string | undefined) ?? '', /Lowercase/);
      return Promise.resolve(answers[prompts.length - 1]);
    });
    const uri = await vscode.commands.executeCommand<vscode.Uri | undefined>(SkillCommands.create);
    const file = workspacePath('.agents', 'skills', 'release-notes', 'SKILL.md');
    assert.equal(uri?.fsPath, file);
    assert.match(
      readFileSync(file, 'utf8'),
      /^---\nname: release-notes\ndescription: 'Write release notes: "what changed", grouped by area\.'\n---\n/,
    );
    assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, file);
    const rows = await until((r) => !!row(r, file), 'the new skill in the view');
    assert.equal(row(rows, file)?.description, 'Codex · not trained yet');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it("Evaluate starts the evaluation of the row's skill with the config beside it", async () => {
    const t = row(await rowsNow(), trained())!;
    const titles = quickPickTitles();
    await vscode.commands.executeCommand(SkillCommands.evaluate, t);
    // The skill and its config came from the row: the first question is the split.
    assert.deepEqual(titles, ['SkillOpt: Evaluate Skill (2/3)']);
  });

  it('Optimize on a skill without a config opens the guided setup for it', async () => {
    const c = row(await rowsNow(), codex())!;
    const titles = quickPickTitles();
    const started = await vscode.commands.executeCommand(SkillCommands.optimize, c);
    assert.equal(started, undefined);
    assert.deepEqual(titles, ['SkillOpt setup (1/5)']);
  });

  it("Optimize trains the row's SKILL.md, and the row then shows the new run", async () => {
    const api = await skillopt();
    const t = row(await rowsNow(), trained())!;
    const asked: string[] = [];
    replace('showInformationMessage', (message: string, ...rest: unknown[]) => {
      asked.push(message);
      return Promise.resolve(rest.includes('Start Training') ? 'Start Training' : undefined);
    });
    const started = await vscode.commands.executeCommand<StartResult | undefined>(SkillCommands.optimize, t);
    assert.ok(started, 'a run started');
    assert.match(asked[0] ?? '', /^Train SKILL\.md\?/);
    assert.equal(api.ctx.runs.origin(started.runId)?.skillPath, trained());
    assert.ok(started.outDir.startsWith(workspacePath('trained', '.skillopt', 'runs')), started.outDir);
    const run = await waitForStatus(api, started.runId, 'finished');
    assert.equal(run.config.skill_init, trained());
    const after = await until((r) => {
      const now = row(r, trained());
      return now?.runId === started.runId && !now.description.includes('training');
    }, 'the row to show the new run, finished');
    const best = formatScore(Math.max(run.live?.bestScore ?? -1, run.bestScore ?? -1));
    assert.match(row(after, trained())!.description, new RegExp(`^best ${best.replace('.', '\\.')} · `));
  });
});
