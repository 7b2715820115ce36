/** The person's decisions, recorded in the run folder and sent to the engine. */
import * as vscode from 'vscode';
import { EngineRequests, type DecideParams } from '../../protocol/engine';
import type { Ctx } from '../ctx';
import type { DecisionStore } from './decisionStore';
import type { ReviewSession } from './session';

export interface SentDecision {
  params: DecideParams;
  outcome: 'ok' | 'ignored' | 'failed';
  detail?: string;
}

/**
 * Records a decision, then sends it; `sent` gets the entry at once (as failed until the engine
 * answers), so a redraw in between never shows the decision as missing.
 */
export async function sendDecision(
  ctx: Ctx,
  decisions: DecisionStore,
  init: ReviewSession['init'],
  params: DecideParams,
  sent: SentDecision[],
): Promise<void> {
  await decisions.record(init.runDir ?? init.runId, init.origin, params);
  const entry: SentDecision = { params, outcome: 'failed' };
  sent.push(entry);
  try {
    const engine = await ctx.engine();
    const result = await engine.request(EngineRequests.decide, params, { timeoutMs: 15_000 });
    entry.outcome = result.ok && result.applied !== 'ignored' ? 'ok' : 'ignored';
    entry.detail = result.applied;
    if (entry.outcome === 'ignored') {
      ctx.log.info(
        `review: the engine had no use for the decision on step ${params.step} (${result.applied})`,
      );
    }
  } catch (err) {
    entry.detail = err instanceof Error ? err.message : String(err);
    ctx.log.warn(`review: sending the decision on step ${params.step} failed: ${entry.detail}`);
    void vscode.window.showWarningMessage(
      `SkillOpt: the run did not receive your decision on step ${params.step}: ${entry.detail}`,
    );
  }
}
