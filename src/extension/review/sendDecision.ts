/** The person's decisions, recorded in the run folder and sent to the engine. */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { EngineRequests, type DecideParams } from '../../protocol/engine';
import { ReviewCommands } from '../constants';
import type { Ctx } from '../ctx';
import type { DecisionStore } from './decisionStore';
import type { ReviewSession } from './session';
import { errorMessage } from '../log';

export interface SentDecision {
  params: DecideParams;
  outcome: 'ok' | 'ignored' | 'failed';
  detail?: string;
}

/**
 * Records a decision, then sends it; `sent` gets the entry at once (as failed until the engine
 * answers), so a redraw in between never shows the decision as missing. Returns the entry.
 */
export async function sendDecision(
  ctx: Ctx,
  decisions: DecisionStore,
  init: ReviewSession['init'],
  params: DecideParams,
  sent: SentDecision[],
): Promise<SentDecision> {
  const runKey = init.runDir ?? init.runId;
  const prior = decisions.stepOf(runKey, init.origin, params.step);
  await decisions.record(runKey, init.origin, params);
  const entry: SentDecision = { params, outcome: 'failed' };
  sent.push(entry);
  try {
    const engine = await ctx.engine();
    const result = await engine.request(EngineRequests.decide, params, { timeoutMs: 15_000 });
    entry.outcome = result.ok && result.applied !== 'ignored' ? 'ok' : 'ignored';
    entry.detail = result.applied;
    if (!result.ok) {
      // This window's engine does not run it: another window or a terminal does, or it just ended.
      const name = ctx.runs.get(init.runId)?.name ?? basename(init.runDir ?? init.runId);
      entry.detail = 'not run by this window';
      ctx.log.warn(`review: ${name} is not run by this window; step ${params.step}'s decision stays here`);
      void vscode.window.showWarningMessage(
        `SkillOpt: ${name} is not run by this VS Code window, so the run did not receive your decision on step ${params.step} (this document has it). Decide in the window or terminal that runs it.`,
      );
    } else if (result.applied === 'stale') {
      // Drawn for a question the run no longer asks (it stopped and asked again, or moved on).
      await decisions.restore(runKey, init.origin, params.step, prior);
      const name = ctx.runs.get(init.runId)?.name ?? basename(init.runDir ?? init.runId);
      ctx.log.warn(
        `review: ${name} no longer asks the question this decision on step ${params.step} answers`,
      );
      // The way to the question asked now, as the other stale notices offer it.
      const now = waitingNow(ctx, init.runId)?.step;
      const then =
        now !== undefined
          ? ` It is waiting for your review of step ${now} now.`
          : ' It is not waiting for you now.';
      const review = now !== undefined ? [`Review Step ${now}`] : [];
      void vscode.window
        .showWarningMessage(
          `SkillOpt: ${name} no longer asks the question you answered on step ${params.step} (the run asked it again or moved on), so your decision was not applied.${then}`,
          ...review,
        )
        .then((pick) => {
          if (pick) void vscode.commands.executeCommand(ReviewCommands.openWaiting, init.runId);
        });
    } else if (entry.outcome === 'ignored') {
      ctx.log.info(
        `review: the engine had no use for the decision on step ${params.step} (${result.applied})`,
      );
    }
  } catch (err) {
    entry.detail = errorMessage(err);
    ctx.log.warn(`review: sending the decision on step ${params.step} failed: ${entry.detail}`);
    void vscode.window.showWarningMessage(
      `SkillOpt: the run did not receive your decision on step ${params.step}: ${entry.detail}`,
    );
  }
  return entry;
}

/** The question a running run waits on the person for, if any. */
function waitingNow(ctx: Ctx, runId: string): { step: number; questionId: string } | undefined {
  const live = ctx.runs.get(runId)?.live;
  return live?.status === 'running' ? live.waiting : undefined;
}

/** The question the run asks about `init`'s step now, when it waits on it. */
export function questionAskedNow(ctx: Ctx, init: ReviewSession['init']): string | undefined {
  const waiting = waitingNow(ctx, init.runId);
  return waiting?.step === init.step && init.origin === 'step' ? waiting.questionId : undefined;
}
