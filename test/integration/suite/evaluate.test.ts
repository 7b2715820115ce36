/**
 * Eval-only from the editor, and the vscode-lm backend end to end: the engine process asks the
 * host for each target call, the host answers through vscode.lm with the test extension's model
 * (test/integration/lmProvider), which answers date questions right and the rest wrong.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { conversationPath } from '../../../src/engine/store/predictionNames';
import { LmBridgeError, serveLmRequest } from '../../../src/extension/lm/lmBridge';
import type { EvalResult } from '../../../src/protocol/engine';
import { closeEditors, rows, skillopt, waitFor, workspacePath } from './support';

interface Served {
  model: string;
  messages: Array<{ role: string; text: string }>;
}

const testModel = 'vendor=skillopt-test,id=skillopt-test-dates';

describe('SkillOpt extension: eval-only and VS Code language models', function () {
  this.timeout(120_000);
  const skill = (): string => workspacePath('house-style', 'SKILL.md');
  const config = (): string => workspacePath('house-style', 'skillopt.yaml');
  afterEach(closeEditors);

  it('scores a skill on one split with the config target, per task type, with failing tasks on disk', async () => {
    await skillopt();
    const result = await vscode.commands.executeCommand<EvalResult | undefined>('skillopt.evaluateSkill', {
      skillPath: skill(),
      configPath: config(),
      split: 'val',
    });
    assert.ok(result, 'eval returned scores');
    assert.equal(result.split, 'val');
    assert.ok(result.n_items > 0);
    const typeTotal = Object.values(result.by_type).reduce((n, t) => n + t.total, 0);
    assert.equal(typeTotal, result.n_items);
    assert.ok(result.out_dir.startsWith(workspacePath('house-style', '.skillopt', 'evals')), result.out_dir);
    const summary = JSON.parse(readFileSync(join(result.out_dir, 'eval_summary.json'), 'utf8')) as {
      hard: number;
    };
    assert.equal(summary.hard, result.hard);
    for (const id of result.failing) {
      assert.ok(existsSync(conversationPath(join(result.out_dir, 'eval_val'), id)), `conversation of ${id}`);
    }

    // The result stays in the Runs view: an Evaluations row, the evaluation, its report and each task.
    const api = await skillopt();
    const group = await waitFor(
      () => rows(api).find((r) => r.label === 'Evaluations'),
      'the Evaluations row in the Runs view',
    );
    const evaluation = await waitFor(
      () => rows(api, group.el).find((r) => r.el.spec.path === result.out_dir),
      'this evaluation under Evaluations',
    );
    assert.equal(evaluation.label, 'house-style/SKILL.md on val');
    assert.match(
      evaluation.description,
      new RegExp(
        `^${result.hard.toFixed(3)} fully right · ${result.n_items} of ${result.n_items} answered · ${result.failing.length} failing`,
      ),
    );
    const children = rows(api, evaluation.el);
    assert.equal(children[0].label, 'Report');
    const tasks = children.slice(1);
    assert.equal(tasks.length, result.n_items, 'one row per task');
    assert.deepEqual(
      tasks
        .slice(0, result.failing.length)
        .map((t) => t.label)
        .sort(),
      [...result.failing].sort(),
      'failing tasks first',
    );
    const failing = tasks[0];
    assert.match(failing.description, /^failed · answered ".*", expected /);
    const item = api.tree.getTreeItem(failing.el);
    assert.ok(item.command, 'a task row opens its conversation');
    await vscode.commands.executeCommand(item.command.command, ...(item.command.arguments ?? []));
    await waitFor(
      () =>
        vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => /conversation/i.test(t.label)) ||
        undefined,
      'the conversation opened',
    );
  });

  it('selects the test provider model as the Copilot model', async () => {
    await skillopt();
    const models = await vscode.lm.selectChatModels({ vendor: 'skillopt-test' });
    assert.deepEqual(
      models.map((m) => m.id),
      ['skillopt-test-dates'],
    );
    assert.equal(await vscode.commands.executeCommand('skillopt.selectCopilotModel', testModel), testModel);
    assert.equal(vscode.workspace.getConfiguration('skillopt').get('copilotModel'), testModel);
  });

  it('evaluates through vscode-lm: every target call reaches the model, with the skill in the first user message', async () => {
    await skillopt();
    await vscode.commands.executeCommand('skilloptTest.resetLm');
    const result = await vscode.commands.executeCommand<EvalResult | undefined>('skillopt.evaluateSkill', {
      skillPath: skill(),
      configPath: config(),
      split: 'all',
      lmModel: testModel,
    });
    assert.ok(result, 'eval returned scores');
    const served = (await vscode.commands.executeCommand<Served[]>('skilloptTest.lmRequests')).filter(
      (s) => s.messages[0]?.text !== 'Reply with OK.',
    );
    assert.equal(served.length, result.n_items, 'one model call per task');
    const skillText = readFileSync(skill(), 'utf8').trim();
    const heading = skillText.split('\n').find((l) => l.startsWith('# ')) ?? skillText.slice(0, 40);
    for (const s of served) {
      assert.equal(s.model, 'skillopt-test-dates');
      assert.equal(s.messages[0]?.role, 'user', 'vscode.lm has no system role');
      assert.ok(s.messages[0]?.text.includes(heading), 'the skill is folded into the first user message');
    }
    // The test model knows dates only.
    assert.equal(result.by_type.date?.hard, 1);
    for (const [type, score] of Object.entries(result.by_type))
      if (type !== 'date') assert.equal(score.hard, 0, type);
    const dates = result.by_type.date?.total ?? 0;
    assert.equal(result.failing.length, result.n_items - dates);
  });

  it('answers a request for a model that does not exist with a clear, non-retryable error', async () => {
    const api = await skillopt();
    await assert.rejects(
      serveLmRequest(
        api.ctx,
        {
          modelSelector: { vendor: 'nobody', family: 'nothing' },
          messages: [{ role: 'user', content: 'hello' }],
          justification: 'test',
        },
        new AbortController().signal,
      ),
      (err: unknown) =>
        err instanceof LmBridgeError &&
        err.reason === 'llm' &&
        /No VS Code language model matches vendor=nobody, family=nothing/.test(err.message) &&
        /Select Copilot Model/.test(err.message),
    );
  });

  it('turns the model’s refusals into clear errors: quota is transient, no access is not', async () => {
    const api = await skillopt();
    const ask = (): Promise<unknown> =>
      serveLmRequest(
        api.ctx,
        {
          modelSelector: { vendor: 'skillopt-test', id: 'skillopt-test-dates' },
          messages: [{ role: 'user', content: 'Rewrite the date "March 5, 2024" in house style.' }],
          justification: 'test',
        },
        new AbortController().signal,
      );
    const cases: Array<[string, string, RegExp]> = [
      [
        'blocked',
        'llm-transient',
        /refused the request, usually a quota or rate limit.*Fix: wait and resume/,
      ],
      [
        'noPermissions',
        'llm',
        /may not use .*access was not granted.*Fix: run "SkillOpt: Select Copilot Model"/,
      ],
      [
        'other',
        'llm-transient',
        /SkillOpt Test Dates \(skillopt-test\/test-dates\) failed: .*Test model crashed/,
      ],
    ];
    try {
      for (const [mode, reason, message] of cases) {
        await vscode.commands.executeCommand('skilloptTest.failLm', mode);
        await assert.rejects(ask(), (err: unknown) => {
          assert.ok(err instanceof LmBridgeError, String(err));
          assert.equal(err.reason, reason, `${mode}: ${err.message}`);
          assert.match(err.message, message);
          return true;
        });
      }
    } finally {
      await vscode.commands.executeCommand('skilloptTest.resetLm');
    }
  });
});
