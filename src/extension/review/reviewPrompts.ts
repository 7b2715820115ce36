/** What the review commands read from their arguments and ask the person: edits, hints, reasons, runs, steps. */
import * as vscode from 'vscode';
import { isCandidateOrigin } from '../../protocol/webview';
import { isReviewMode } from '../../protocol/vocabulary';
import { actionLabel } from '../../protocol/words';
import type { Ctx } from '../ctx';
import { runIdOf } from '../commands/shared';
import type { RunHints } from './reviewContext';
import { listCandidates, type Origin } from './runFiles';
import type { EditArgs } from './reviewLenses';

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function editArgs(v: unknown): EditArgs | undefined {
  if (!isObject(v) || typeof v.uri !== 'string' || typeof v.key !== 'string') return undefined;
  return {
    uri: v.uri,
    key: v.key,
    ...(typeof v.editId === 'string' ? { editId: v.editId } : {}),
    ...(typeof v.reason === 'string' ? { reason: v.reason } : {}),
  };
}

/** Optional run hints carried by internal calls. */
export function hintsOf(v: Record<string, unknown>): RunHints {
  return {
    ...(typeof v.runDir === 'string' ? { runDir: v.runDir } : {}),
    ...(isReviewMode(v.mode) ? { mode: v.mode } : {}),
    ...(typeof v.live === 'boolean' ? { live: v.live } : {}),
    ...(typeof v.skillPath === 'string' ? { skillPath: v.skillPath } : {}),
  };
}

export function originOf(v: unknown): Origin {
  return isCandidateOrigin(v) ? v : 'step';
}

/** Asks why; undefined means the person cancelled the rejection, '' means no reason. */
export async function askReason(title: string, given?: string): Promise<string | undefined> {
  if (given !== undefined) return given.trim();
  const reason = await vscode.window.showInputBox({
    title,
    prompt: 'Why? Optional: the optimizer reads it with the rejected edits. Press Escape to keep the edit.',
    placeHolder: 'e.g. makes every answer longer',
  });
  return reason === undefined ? undefined : reason.trim();
}

export async function pickRun(ctx: Ctx): Promise<string | undefined> {
  const runs = ctx.runs.list();
  if (runs.length === 0) {
    void vscode.window.showInformationMessage('SkillOpt: no runs in this workspace yet.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    runs.map((r) => ({ label: r.name, description: r.status, detail: r.dir, runId: runIdOf(r) ?? r.dir })),
    { title: 'Review a step candidate', placeHolder: 'Pick a run' },
  );
  return pick?.runId;
}

export async function pickStep(
  runDir: string,
  waitingStep?: number,
): Promise<{ step: number; origin: Origin } | undefined> {
  const list = listCandidates(runDir);
  const items = list.map((c) => ({
    label:
      c.origin === 'step'
        ? `Step ${c.step}`
        : `Epoch ${c.epoch} ${c.origin === 'slow_update' ? 'slow update' : 'meta reflection'}`,
    description: actionLabel(c.action),
    step: c.step,
    origin: c.origin,
  }));
  // Not in history.json yet: the engine is paused on it.
  if (waitingStep !== undefined)
    items.unshift({
      label: `$(bell) Step ${waitingStep}`,
      description: 'waiting for your review',
      step: waitingStep,
      origin: 'step',
    });
  if (items.length === 0) {
    void vscode.window.showInformationMessage('SkillOpt: this run has no candidates yet.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Review a step candidate',
    placeHolder: 'Pick a step',
  });
  return pick ? { step: pick.step, origin: pick.origin } : undefined;
}
