/**
 * Evaluate Skill with a provider batch out (the real `openai` SDK in the engine process, the
 * loopback Batch API in this host): an evaluation that stopped with its batch running is offered
 * again, continued in its own folder and collected without a second batch, and the progress
 * notification follows the batch.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { SkillOptError } from '../../../src/engine/errors';
import { evalPrepared } from '../../../src/engine/evalRun';
import { prepareRun } from '../../../src/engine/run';
import { EVAL_FILE, RunLayout } from '../../../src/engine/store/layout';
import type { EvalResult } from '../../../src/protocol/engine';
import { scriptedFinalBatchOverrides } from '../../support/loopback/scriptedModels';
import { batchSuite } from './batchSupport';
import { skillopt } from './support';

describe('SkillOpt extension: Evaluate Skill with a provider batch', function () {
  this.timeout(180_000);
  const suite = batchSuite('eval-batched', 6);
  const { batches, dir } = suite;
  const replace = suite.stubs.replace;

  /** An earlier evaluation that stopped as soon as its batch was out (as a closed window would leave it). */
  async function stoppedEvaluation(name: string, overrides: string[]) {
    const configPath = join(dir(), 'skillopt.yaml');
    const earlierDir = join(dir(), '.skillopt', 'evals', name);
    const earlier = prepareRun({ configPath, outDir: earlierDir, overrides });
    const stop = new AbortController();
    await assert.rejects(
      evalPrepared(earlier, {
        skill: earlier.initialSkill,
        skillPath: join(dir(), 'SKILL.md'),
        split: 'test',
        emit: (e) => {
          if (e.type === 'batch/progress') stop.abort();
        },
        signal: stop.signal,
      }),
      (err: unknown) => SkillOptError.is(err, 'cancelled'),
    );
    assert.ok(!existsSync(new RunLayout(earlierDir).file(EVAL_FILE.summary)));
    return { earlierDir, earlier };
  }

  /** Answers the Continue Earlier Evaluation modal with `button`; collects every information message. */
  function answerModal(button: string) {
    const modals: Array<{ message: string; detail?: string }> = [];
    const infos: string[] = [];
    replace('showInformationMessage', (message: string, ...rest: unknown[]) => {
      const opts = rest[0] as vscode.MessageOptions | undefined;
      if (!opts?.modal) {
        infos.push(message);
        return Promise.resolve(undefined);
      }
      modals.push({ message, ...(opts.detail ? { detail: opts.detail } : {}) });
      return Promise.resolve(button);
    });
    return { modals, infos };
  }

  it('offers an evaluation that stopped with its batch out, and collects that batch in its folder', async () => {
    await skillopt();
    const server = await suite.start();
    const configPath = join(dir(), 'skillopt.yaml');
    const skillPath = join(dir(), 'SKILL.md');
    const overrides = scriptedFinalBatchOverrides(server.url, 0.2);

    const { earlierDir, earlier } = await stoppedEvaluation('SKILL_test_20261124-000000', overrides);
    assert.equal(batches.batches.size, 1);
    const { modals } = answerModal('Continue Earlier Evaluation');
    const progress: string[] = [];
    replace(
      'withProgress',
      (
        _opts: unknown,
        task: (p: vscode.Progress<{ message?: string }>, t: vscode.CancellationToken) => Thenable<unknown>,
      ) =>
        task({ report: (m) => progress.push(m.message ?? '') }, new vscode.CancellationTokenSource().token),
    );
    const result = await vscode.commands.executeCommand<EvalResult | undefined>('skillopt.evaluateSkill', {
      skillPath,
      configPath,
      split: 'test',
      overrides,
    });
    assert.ok(result, 'the evaluation ended');
    assert.equal(modals.length, 1);
    assert.match(
      modals[0]!.message,
      /an earlier evaluation of SKILL\.md on test stopped while its openai\S* batch batch_\S+ was out/,
    );
    assert.match(modals[0]!.detail ?? '', /collects what the batch answered, already paid for/);
    assert.equal(result.out_dir, earlierDir, 'not continued in the earlier folder');
    assert.equal(batches.batches.size, 1, 'a second batch was sent for the same tasks');
    assert.equal(result.n_items, earlier.splits.test.unsealForEvaluation().length);
    assert.ok(
      progress.some((m) => /eval batch \S+ \(openai\S*\): in_progress, \d+\/\d+ answered/.test(m)),
      `the progress never showed the batch: ${progress.join(' | ')}`,
    );
  });

  it('cancels the batch an earlier evaluation left out before a new evaluation asks the same tasks', async () => {
    const server = await suite.start();
    const configPath = join(dir(), 'skillopt.yaml');
    const skillPath = join(dir(), 'SKILL.md');
    const overrides = scriptedFinalBatchOverrides(server.url, 0.2);
    const before = batches.batches.size;
    const { earlierDir } = await stoppedEvaluation('SKILL_test_20261124-000001', overrides);
    const earlierId = [...batches.batches.keys()].at(-1);
    assert.equal(batches.batches.size, before + 1);
    const { modals, infos } = answerModal('Cancel Its Batch, Start New');
    replace(
      'withProgress',
      (_opts: unknown, task: (p: unknown, t: vscode.CancellationToken) => Thenable<unknown>) =>
        task({ report: () => undefined }, new vscode.CancellationTokenSource().token),
    );
    const result = await vscode.commands.executeCommand<EvalResult | undefined>('skillopt.evaluateSkill', {
      skillPath,
      configPath,
      split: 'test',
      overrides,
    });
    assert.equal(modals.length, 1);
    assert.match(modals[0]!.detail ?? '', /unless you cancel it first/);
    assert.deepEqual(batches.cancelRequests, [earlierId], 'the earlier batch was not cancelled');
    assert.ok(
      infos.some((m) =>
        /cancelled the openai\S* batch \S+ of the evaluation \(\d+ of \d+ answered, billed by the provider\); starting a new evaluation/.test(
          m,
        ),
      ),
      infos.join(' | '),
    );
    assert.ok(result, 'the new evaluation did not run');
    assert.notEqual(result.out_dir, earlierDir);
    assert.equal(batches.batches.size, before + 2, 'the new evaluation sent its own batch');
  });
});
