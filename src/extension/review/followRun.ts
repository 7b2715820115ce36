/**
 * Auto mode and the person's skill file. By default an `auto` run never touches the open file: the
 * trained skill lives in the run folder until Apply Best. With `skillopt.followRun` the file follows
 * the run: each candidate the gate keeps (or the person's overrule) is written into it and saved,
 * unless the file held unsaved changes of the person's when the candidate came, which are never saved
 * for them.
 */
import * as vscode from 'vscode';
import { followRun } from '../config';
import type { TrackedSession } from './registry';
import type { ReviewContext } from './reviewContext';

/** Whether a candidate of this run stays out of the person's file (no review session on it). */
export function staysInRunFolder(run: ReviewContext, reviewNow: boolean): boolean {
  return run.live && run.mode === 'auto' && !reviewNow && !followRun();
}

/** Whether a review begun now on `doc` may save it as the run moves on. */
export function savesAsItFollows(run: ReviewContext, doc: vscode.TextDocument, reviewNow: boolean): boolean {
  return run.live && run.mode === 'auto' && !reviewNow && followRun() && !doc.isDirty;
}

/** Saves a followed file once the review is no longer asking the person anything. */
export async function saveFollowed(t: TrackedSession): Promise<void> {
  if (!t.savesAsItFollows || t.session.phase === 'review') return;
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri.toString());
  if (doc?.isDirty) await doc.save();
}
