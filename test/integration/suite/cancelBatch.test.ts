/**
 * Cancel Provider Batch from the editor: a run whose final test evaluation waits on an OpenAI batch
 * (the real `openai` SDK in the engine process, the loopback Batch API in this host) is stopped; its
 * row then offers the command, which asks first, cancels the batch at the provider and says so.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { CancelBatchesResult, StartResult } from '../../../src/protocol/engine';
import { scriptedFinalBatchOverrides } from '../../support/loopback/scriptedModels';
import { batchSuite } from './batchSupport';
import { rows, skillopt, waitFor, waitForStatus } from './support';

describe('SkillOpt extension: Cancel Provider Batch', function () {
  this.timeout(180_000);
  // The batch never ends on its own: the test evaluation waits on it until the cancel.
  const suite = batchSuite('batched', 1_000_000);
  const { batches } = suite;
  const replace = suite.stubs.replace;

  it('stops a run waiting on a batch, then cancels the batch after a confirmation and says what was answered', async () => {
    const api = await skillopt();
    const server = await suite.start();
    const dir = suite.dir;
    const started = await vscode.commands.executeCommand<StartResult | undefined>(
      'skillopt.optimizeSkill',
      vscode.Uri.file(join(dir(), 'SKILL.md')),
      {
        confirm: false,
        overrides: scriptedFinalBatchOverrides(server.url, 0.2),
      },
    );
    assert.ok(started, 'a run started');
    const runId = started.runId;

    // While it waits, the row says how to cancel the batch instead of leaving it running.
    const waiting = await waitFor(
      () =>
        rows(api).find(
          (r) => r.el.spec.runId === runId && r.description.includes('waiting for the test batch'),
        ),
      'the run row to wait for the test batch',
      120_000,
    );
    assert.match(
      waiting.el.spec.tooltip ?? '',
      /Stop leaves the batch running and Resume collects it; to cancel it instead, Stop Run, then Cancel Provider Batch\./,
    );
    assert.equal(batches.cancelRequests.length, 0);

    assert.equal(await vscode.commands.executeCommand('skillopt.stopRun', runId), true);
    await waitForStatus(api, runId, 'stopped');
    const row = await waitFor(
      () =>
        rows(api).find((r) => r.el.spec.runId === runId && r.contextValue === 'skillopt.run.resumable.batch'),
      'the stopped run row to offer Cancel Provider Batch',
    );
    assert.equal(batches.cancelRequests.length, 0, 'Stop left the batch running');

    const modals: Array<{ message: string; detail?: string }> = [];
    const said: string[] = [];
    replace('showWarningMessage', (message: string, ...rest: unknown[]) => {
      const opts = rest[0] as vscode.MessageOptions | undefined;
      if (opts?.modal) {
        modals.push({ message, ...(opts.detail ? { detail: opts.detail } : {}) });
        return Promise.resolve('Cancel Batch');
      }
      said.push(message);
      return Promise.resolve(undefined);
    });
    replace('showInformationMessage', (message: string) => {
      said.push(message);
      return Promise.resolve(undefined);
    });
    const result = await vscode.commands.executeCommand<CancelBatchesResult | undefined>(
      'skillopt.cancelProviderBatch',
      row.el,
    );
    assert.ok(result, `the cancel ran: ${said.join(' | ')}`);

    // The final test evaluations go out side by side: the best skill's, the no-skill one…
    const recorded = api.ctx.runs.get(runId)?.batches ?? 0;
    assert.ok(recorded >= 1);
    assert.deepEqual(
      modals.map((m) => m.message),
      [`Cancel the provider batch${recorded === 1 ? '' : 'es'} of ${row.label}?`],
    );
    assert.match(modals[0]!.detail ?? '', /answered before the cancel is billed by the provider/);
    assert.match(modals[0]!.detail ?? '', /asks the rest one by one at list price/);

    const ids = result.batches.map((b) => b.batchId).sort();
    assert.ok(ids.length >= 1);
    assert.deepEqual([...batches.cancelRequests].sort(), ids, 'the loopback provider got the cancel');
    assert.deepEqual(
      result.batches.map((b) => b.outcome),
      ids.map(() => 'cancelled'),
    );
    assert.equal(said.length, 1, said.join(' | '));
    assert.match(
      said[0]!,
      new RegExp(
        `^SkillOpt: cancelled the openai_compatible batch batch_loopback_\\d+ of the best skill's test evaluation \\(\\d+ of \\d+ answered\\).* in ${row.label}\\. ` +
          'The provider bills what was answered; Resume Run collects it and asks the other \\d+ one by one at list price\\.$',
      ),
    );
  });
});
