/**
 * Evaluate Skill with a provider batch out: the progress notification follows the batch; an
 * evaluation cancelled (or cut off by a closed window) leaves its batch running and paid for, so
 * the next Evaluate of the same skill and split offers to continue that folder and collect it
 * instead of paying again in a new one.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { recordedBatches } from '../../engine/llm/batch/cancel';
import { EVAL_FILE, RunLayout } from '../../engine/store/layout';
import { batchStateSchema, evalIdentitySchema, readRunJson } from '../../engine/store/runSchemas';
import { EngineRequests, type RunSource } from '../../protocol/engine';
import type { EngineEvent } from '../../protocol/events';
import type { Ctx } from '../ctx';
import { describeBatch, type WaitingBatch } from '../runs/liveState';
import { earlierEvaluationCancelled } from './cancelBatchText';
import { showEngineError, withProgress } from './shared';

export interface UnfinishedEvaluation {
  dir: string;
  provider: string;
  batchId?: string;
}

/** The newest evaluation under `evalsRoot` of `skillPath` on `split` that stopped with a batch out. */
export function unfinishedEvaluation(
  evalsRoot: string,
  skillPath: string,
  split: string,
): UnfinishedEvaluation | undefined {
  if (!existsSync(evalsRoot)) return undefined;
  const dirs = readdirSync(evalsRoot, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(evalsRoot, e.name))
    .sort()
    .reverse();
  for (const dir of dirs) {
    const layout = new RunLayout(dir);
    if (existsSync(layout.file(EVAL_FILE.summary))) continue;
    try {
      const id = readRunJson(layout.file(EVAL_FILE.identity), evalIdentitySchema);
      if (!id || id.skill !== skillPath || id.split !== split) continue;
      const [file] = recordedBatches(dir);
      const batch = file ? readRunJson(file, batchStateSchema) : undefined;
      if (batch)
        return { dir, provider: batch.provider, ...(batch.batch_id ? { batchId: batch.batch_id } : {}) };
    } catch {
      // A damaged folder is not one to continue.
    }
  }
  return undefined;
}

/** Asks whether to continue `found`; undefined = cancelled. */
export async function continueOrNew(
  found: UnfinishedEvaluation,
  skillName: string,
  split: string,
): Promise<'continue' | 'new' | 'cancel-and-new' | undefined> {
  const go = 'Continue Earlier Evaluation';
  const fresh = 'Start New Evaluation';
  const cancelFirst = 'Cancel Its Batch, Start New';
  const batch = `${found.provider} batch${found.batchId ? ` ${found.batchId}` : ''}`;
  const choice = await vscode.window.showInformationMessage(
    `SkillOpt: an earlier evaluation of ${skillName} on ${split} stopped while its ${batch} was out.`,
    {
      modal: true,
      detail: `Continuing it (${vscode.workspace.asRelativePath(found.dir)}) collects what the batch answered, already paid for, and asks the rest. A new evaluation asks every task again: the earlier batch keeps running at the provider until it ends, unless you cancel it first (what it answered before the cancel is still paid for).`,
    },
    go,
    fresh,
    cancelFirst,
  );
  if (choice === go) return 'continue';
  if (choice === fresh) return 'new';
  return choice === cancelFirst ? 'cancel-and-new' : undefined;
}

/**
 * Cancels the batch `found` left running before a new evaluation of the same tasks starts; false
 * when the new one should not start (the cancel failed, or a batch could not be cancelled).
 */
export async function cancelEarlierBatch(
  ctx: Ctx,
  found: UnfinishedEvaluation,
  source: RunSource,
): Promise<boolean> {
  const folder = vscode.workspace.asRelativePath(found.dir);
  try {
    const engine = await ctx.engine();
    const result = await withProgress(`SkillOpt: cancelling the earlier evaluation's batch…`, (token) =>
      engine.request(EngineRequests.cancelBatches, { ...source, outDir: found.dir }, { token }),
    );
    for (const b of result.batches)
      ctx.log.info(`[eval] ${b.outcome}: ${b.provider} batch ${b.batchId ?? '(no id)'} (${b.file})`);
    const said = earlierEvaluationCancelled(result, folder);
    if (said.severity === 'warning') void vscode.window.showWarningMessage(said.text);
    else void vscode.window.showInformationMessage(said.text);
    return said.startNew;
  } catch (err) {
    await showEngineError(ctx, `cannot cancel the batch of the earlier evaluation (${folder})`, err);
    return false;
  }
}

/** Reports `skillPath`'s evaluation batch in `progress`; `last()` is the batch last seen running. */
export function followBatch(
  ctx: Ctx,
  skillPath: string,
  progress: vscode.Progress<{ message?: string }>,
): vscode.Disposable & { last(): WaitingBatch | undefined } {
  let last: WaitingBatch | undefined;
  const sub = ctx.runEvents(({ runId, event }: { runId: string; event: EngineEvent }) => {
    if (runId !== `eval:${skillPath}` || event.type !== 'batch/progress') return;
    const { type: _t, state, ...batch } = event;
    last = state === 'running' ? batch : undefined;
    progress.report({ message: state === 'running' ? describeBatch(batch) : 'reading the batch results…' });
  });
  return {
    dispose: () => {
      sub.dispose();
    },
    last: () => last,
  };
}
