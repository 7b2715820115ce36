/**
 * "Cancel Provider Batch…": cancels the provider batches a stopped run left running, as
 * `skillopt train --cancel-batch` does, after a confirmation that says what it costs. A Stop leaves
 * a batch running on purpose (Resume collects it at half price); this is for answers no longer wanted.
 */
import * as vscode from 'vscode';
import { EngineRequests, type CancelBatchesResult } from '../../protocol/engine';
import type { Ctx } from '../ctx';
import { effectiveStatus, isActive, type RunView } from '../runs/liveState';
import { CANCEL_BATCH_BUTTON, cancelOutcomeMessages, confirmCancelText } from './cancelBatchText';
import { runSourceOf } from './runSource';
import { requireTrust, resolveRun, showEngineError, withProgress } from './shared';

const stopped = (r: RunView): boolean => !isActive(r.live) && effectiveStatus(r) !== 'running';

export async function cancelProviderBatch(ctx: Ctx, arg?: unknown): Promise<CancelBatchesResult | undefined> {
  if (!requireTrust('cancel a provider batch')) return undefined;
  const run = await resolveRun(
    ctx,
    arg,
    (r) => stopped(r) && !!r.batches,
    'Pick a stopped run whose provider batch to cancel',
  );
  if (!run) return undefined;
  if (!stopped(run)) {
    void vscode.window.showInformationMessage(
      `SkillOpt: ${run.name} is still running, and its batch with it. Stop Run first, then Cancel Provider Batch.`,
    );
    return undefined;
  }
  const source = await runSourceOf(ctx, run, 'Cancel With This Config');
  if (!source) return undefined;
  const { message, detail } = confirmCancelText(run.name, run.batches ?? 1);
  const choice = await vscode.window.showWarningMessage(
    message,
    { modal: true, detail },
    CANCEL_BATCH_BUTTON,
  );
  if (choice !== CANCEL_BATCH_BUTTON) return undefined;
  try {
    const engine = await ctx.engine();
    const result = await withProgress(`SkillOpt: cancelling the provider batch of ${run.name}…`, (token) =>
      engine.request(EngineRequests.cancelBatches, { ...source.params, outDir: run.dir }, { token }),
    );
    for (const b of result.batches)
      ctx.log.info(`[run] ${b.outcome}: ${b.provider} batch ${b.batchId ?? '(no id)'} (${b.file})`);
    for (const m of cancelOutcomeMessages(run.name, result)) {
      if (m.severity === 'warning') void vscode.window.showWarningMessage(m.text);
      else void vscode.window.showInformationMessage(m.text);
    }
    return result;
  } catch (err) {
    await showEngineError(ctx, `cannot cancel the provider batch of ${run.name}`, err);
    return undefined;
  } finally {
    // The tree's row: the lock came and went, and the recorded batches may have changed.
    ctx.runs.reread(run.dir);
  }
}
