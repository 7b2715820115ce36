/**
 * The guided setup's target picker offers the agent CLIs: each with whether it is installed where a
 * run looks (PATH, or its *_EXEC_PATH variable) and its version; a missing one says how to install
 * it and the list comes back; the chosen one is written into skillopt.yaml as the engine reads it.
 * The real CLIs are the ones scripts/install-agent-clis.mjs put in .cache/agent-clis. The quick
 * picks are answered by replacing the window functions for the length of the test.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { loadConfig } from '../../../src/engine/config/load';
import { closeEditors, stubWindow, workspacePath } from './support';

type Item = vscode.QuickPickItem & { path?: string };
describe('SkillOpt extension: agent CLIs in the setup target picker', function () {
  this.timeout(60_000);
  const bin = resolve(__dirname, '..', '..', 'agent-clis', 'node_modules', '.bin');
  const env = { PATH: process.env.PATH, COPILOT_EXEC_PATH: process.env.COPILOT_EXEC_PATH };
  const stubs = stubWindow();
  const replace = stubs.replace;
  afterEach(async () => {
    stubs.restore();
    process.env.PATH = env.PATH;
    if (env.COPILOT_EXEC_PATH === undefined) delete process.env.COPILOT_EXEC_PATH;
    else process.env.COPILOT_EXEC_PATH = env.COPILOT_EXEC_PATH;
    await closeEditors();
  });

  it('shows installed CLIs with their versions, a missing one with how to install it, and writes the choice', async function () {
    if (!existsSync(join(bin, 'claude'))) this.skip();
    const dir = workspacePath('agent-skill');
    mkdirSync(dir, { recursive: true });
    for (const f of ['SKILL.md', 'tasks.jsonl']) copyFileSync(workspacePath('house-style', f), join(dir, f));
    process.env.PATH = `${bin}${delimiter}${env.PATH ?? ''}`;
    // Copilot CLI pointed at a program that is not there: offered as not installed.
    process.env.COPILOT_EXEC_PATH = join(dir, 'no-such-copilot');

    const targetLists: Item[][] = [];
    const warnings: string[] = [];
    const prompts: string[] = [];
    replace('showQuickPick', async (items: Item[] | Thenable<Item[]>, opts?: vscode.QuickPickOptions) => {
      const list = await items;
      const step = /\((\d)\/5\)/.exec(opts?.title ?? '')?.[1];
      const by = (test: (i: Item) => boolean): Item => {
        const found = list.find(test);
        assert.ok(found, `step ${step}: no such item in ${list.map((i) => i.label).join(' | ')}`);
        return found;
      };
      switch (step) {
        case '1':
          return by((i) => i.path === join(dir, 'tasks.jsonl'));
        case '2':
          return by((i) => i.label === 'exact');
        case '3':
          targetLists.push(list);
          // First the missing Copilot CLI (the list comes back), then Claude Code.
          return by((i) => i.label.includes(targetLists.length === 1 ? 'copilot_exec' : 'claude_code_exec'));
        case '4':
          assert.ok(!list.some((i) => i.label.includes('_exec')), 'agent CLIs are never the optimizer');
          assert.ok(!list.some((i) => i.label.includes('Same as the target')));
          return by((i) => i.label.startsWith('Simulated'));
        default:
          throw new Error(`unexpected quick pick ${opts?.title}`);
      }
    });
    replace('showInputBox', (opts?: vscode.InputBoxOptions) => {
      prompts.push(opts?.prompt ?? '');
      return Promise.resolve(/Epochs/.test(opts?.prompt ?? '') ? '1' : '');
    });
    replace('showWarningMessage', (message: string) => {
      warnings.push(message);
      return Promise.resolve(undefined);
    });
    // Whatever follows the setup (the engine's validation, the start dialog) is declined.
    for (const name of ['showInformationMessage', 'showErrorMessage'])
      replace(name, () => Promise.resolve(undefined));

    await vscode.commands.executeCommand('skillopt.optimizeSkill', vscode.Uri.file(join(dir, 'SKILL.md')));

    assert.equal(targetLists.length, 2, 'the list came back after the missing CLI');
    const agents = targetLists[0]!.filter((i) => /_exec\)$/.test(i.label));
    const pinned = (
      JSON.parse(readFileSync(join(bin, '..', '..', 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies;
    assert.deepEqual(
      agents.map((i) => [i.label, i.description]),
      [
        ['$(terminal) Claude Code (claude_code_exec)', `installed · ${pinned['@anthropic-ai/claude-code']}`],
        ['$(terminal) Codex (codex_exec)', `installed · ${pinned['@openai/codex']}`],
        ['$(terminal) Copilot CLI (copilot_exec)', 'not installed'],
      ],
    );
    assert.match(agents[0]!.detail ?? '', /\.claude\/skills\/$/);
    assert.match(agents[2]!.detail ?? '', /npm install -g @github\/copilot/);
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /Copilot CLI \(.*no-such-copilot\) is not installed: run "npm install -g @github\/copilot"/,
    );
    assert.ok(
      prompts.some((p) => /CLI's default/.test(p)),
      prompts.join(' | '),
    );

    const config = join(dir, 'skillopt.yaml');
    const c = loadConfig(config).config;
    assert.equal(c.model.target_backend, 'claude_code_exec');
    assert.equal(c.model.target, '');
    assert.equal(c.model.optimizer_backend, 'sim');
  });
});
