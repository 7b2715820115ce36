/**
 * Diff tabs of candidates can outlive their step. A tab whose step is decided or replaced is closed,
 * and a whole-candidate action from a tab the live run has moved past is refused with the reason:
 * it must never write an old candidate into the skill or drop the review the run waits on.
 */
import * as vscode from 'vscode';
import { ReviewCommands } from '../constants';
import type { Ctx } from '../ctx';
import { parseCandidateUri, type CandidateUriParams } from './candidateContent';
import type { Origin } from './runFiles';

/** The candidate a tab shows, if it is one of our diff tabs. */
function candidateOf(tab: vscode.Tab): CandidateUriParams | undefined {
  const input = tab.input;
  if (input instanceof vscode.TabInputTextDiff) return parseCandidateUri(input.modified);
  if (input instanceof vscode.TabInputText) return parseCandidateUri(input.uri);
  return undefined;
}

/** Closes the diff tabs of one step's candidate (of any run folder id spelling). */
export async function closeCandidateDiffs(
  runIds: readonly string[],
  step: number,
  origin: Origin,
): Promise<void> {
  const tabs = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((tab) => {
      const p = candidateOf(tab);
      return (
        p !== undefined &&
        p.step === step &&
        p.origin === origin &&
        (runIds.includes(p.runDir) || (p.runId !== undefined && runIds.includes(p.runId)))
      );
    });
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
}

/**
 * Why a whole-candidate action from a diff of a live run's step that has no open review cannot act
 * (the run decided that step and moved on); undefined when it may act (a finished run's step, opened
 * from its folder). `waitingStep` is the step the run waits on the person for, if any.
 */
export function staleDiff(
  ctx: Ctx,
  p: CandidateUriParams,
): { message: string; waitingStep?: number } | undefined {
  const run = ctx.runs.get(p.runId ?? p.runDir) ?? ctx.runs.get(p.runDir);
  const live = run?.live;
  if (!live || live.status !== 'running') return undefined;
  const decided =
    p.origin === 'step'
      ? p.step < live.step || live.records.some((r) => r.step === p.step)
      : p.step < live.epoch;
  if (!decided) return undefined;
  const what =
    p.origin === 'step' ? `step ${p.step}` : `the ${p.origin.replace('_', ' ')} candidate of epoch ${p.step}`;
  const waiting = live.waiting?.step;
  const now =
    waiting !== undefined
      ? ` It is waiting for your review of step ${waiting}.`
      : ` It is at step ${live.step}.`;
  return {
    message: `SkillOpt: this diff shows ${what}, which the running run has already decided; it cannot change the run now, so nothing was written.${now}`,
    ...(waiting !== undefined ? { waitingStep: waiting } : {}),
  };
}

/** Closes the diff tabs of a review's candidate. */
export function closeSessionDiffs(init: {
  runId: string;
  runDir?: string;
  step: number;
  origin: Origin;
}): Promise<void> {
  return closeCandidateDiffs([init.runId, ...(init.runDir ? [init.runDir] : [])], init.step, init.origin);
}

/**
 * A whole-candidate action from a diff of a step the running run has decided: closes that step's
 * diff tabs, says why nothing was written and offers the step the run waits on. True when refused.
 */
export async function refuseStaleDiff(ctx: Ctx, p: CandidateUriParams): Promise<boolean> {
  const stale = staleDiff(ctx, p);
  if (!stale) return false;
  const runId = p.runId ?? p.runDir;
  await closeCandidateDiffs([runId, p.runDir], p.step, p.origin);
  const review = stale.waitingStep !== undefined ? `Review Step ${stale.waitingStep}` : undefined;
  void vscode.window.showInformationMessage(stale.message, ...(review ? [review] : [])).then((pick) => {
    if (pick) void vscode.commands.executeCommand(ReviewCommands.openWaiting, runId);
  });
  return true;
}
