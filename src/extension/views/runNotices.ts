/**
 * A line in the Output channel for each verdict, warning and the run's end; a notification for each
 * warning (once per run) and when a run ends, with the next thing a person would do: open the
 * report or apply the best skill after a finished run, resume after a stop, read the log after a
 * failure.
 * Runs end in the background, often while the person is elsewhere; the tree alone is easy to miss.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { Commands, ReviewCommands } from '../constants';
import type { Ctx } from '../ctx';
import { runLogLine } from '../runs/runLog';
import {
  asksStill,
  reviewNotice,
  runNotice,
  staleReviewNotice,
  warningNotice,
  type ReviewRequest,
} from '../runs/runNotice';

export function registerRunNotices(ctx: Ctx): void {
  // Each warning once per run: a resumed run says again what still holds; that is one notice.
  const warned = new Map<string, Set<string>>();
  ctx.pushExtCleanup(
    ctx.runEvents(({ runId, event }) => {
      const line = runLogLine(ctx.runs.get(runId)?.name ?? basename(runId), event);
      if (line) ctx.log.info(`[run] ${line}`);
      if (event.type === 'review/requested') {
        showReviewNotice(ctx, runId, event);
        return;
      }
      if (event.type === 'warning') {
        const seen = warned.get(runId) ?? new Set<string>();
        warned.set(runId, seen);
        if (!seen.has(event.message)) showWarning(ctx, runId, event.message);
        seen.add(event.message);
        return;
      }
      if (event.type !== 'run/finished' && event.type !== 'run/stopped' && event.type !== 'run/failed')
        return;
      const notice = runNotice(ctx.runs.get(runId)?.name ?? basename(runId), event);
      const shown =
        notice.kind === 'info'
          ? vscode.window.showInformationMessage(notice.text, ...notice.actions)
          : notice.kind === 'warning'
            ? vscode.window.showWarningMessage(notice.text, ...notice.actions)
            : vscode.window.showErrorMessage(notice.text, ...notice.actions);
      void shown.then((choice) => {
        if (choice === 'Open Report' && event.type === 'run/finished' && event.reportPath) {
          void vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(event.reportPath));
        } else if (choice === 'Apply Best Skill') {
          void vscode.commands.executeCommand(Commands.applyBestSkill, runId);
        } else if (choice === 'Resume Run') {
          void vscode.commands.executeCommand(Commands.resumeRun, runId);
        } else if (choice === 'Show Log') {
          void vscode.commands.executeCommand(Commands.showLog);
        }
      });
    }),
  );
}

function showWarning(ctx: Ctx, runId: string, message: string): void {
  const notice = warningNotice(ctx.runs.get(runId)?.name ?? basename(runId), message);
  void vscode.window.showWarningMessage(notice.text, ...notice.actions).then((choice) => {
    if (choice === 'Show Log') void vscode.commands.executeCommand(Commands.showLog);
  });
}

/**
 * "Waiting for you": the run is paused, the document may be closed; one click reaches the review.
 * The buttons act only on the question the notification was drawn for: a notice clicked after that
 * question stopped waiting says so and offers the step the run waits on now, never deciding it unseen.
 */
function showReviewNotice(ctx: Ctx, runId: string, event: ReviewRequest): void {
  const name = (): string => ctx.runs.get(runId)?.name ?? basename(runId);
  const notice = reviewNotice(name(), event);
  const stillWaiting = (): boolean => {
    const live = ctx.runs.get(runId)?.live;
    return asksStill(event, live?.status === 'running' ? live.waiting : undefined);
  };
  void vscode.window.showInformationMessage(notice.text, ...notice.actions).then(async (choice) => {
    if (!choice) return;
    if (!stillWaiting()) return sayStale(ctx, runId, name(), event, choice);
    const review = await vscode.commands.executeCommand<{ uri: string; key: string } | undefined>(
      ReviewCommands.openWaiting,
      runId,
    );
    if (!review) return;
    // The person may have decided in the editor while the review opened.
    if (choice !== 'Review' && !stillWaiting()) return sayStale(ctx, runId, name(), event, choice);
    if (choice === 'Accept') await vscode.commands.executeCommand('skillopt.review.acceptCandidate', review);
    else if (choice === 'Reject')
      await vscode.commands.executeCommand('skillopt.review.rejectCandidate', review);
  });
}

function sayStale(ctx: Ctx, runId: string, name: string, event: ReviewRequest, choice: string): void {
  const live = ctx.runs.get(runId)?.live;
  const now = live?.status === 'running' ? live.waiting?.step : undefined;
  const stale = staleReviewNotice(name, event, choice, now);
  void vscode.window.showInformationMessage(stale.text, ...stale.actions).then((pick) => {
    if (pick) void vscode.commands.executeCommand(ReviewCommands.openWaiting, runId);
  });
}
