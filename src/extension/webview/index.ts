import * as vscode from 'vscode';
import { gateHistoryViewType } from '../../protocol/webview';
import type { Ctx } from '../ctx';
import { DecisionStore } from '../review/decisionStore';
import { runIdOf } from '../commands/shared';
import { GateHistoryPanels } from './gateHistoryPanel';

/** The Gate History panel: command, serializer, live updates. */
export function registerGateHistory(ctx: Ctx): void {
  const panels = new GateHistoryPanels(ctx, DecisionStore.of(ctx.extension.workspaceState));
  ctx.pushExtCleanup(panels);
  ctx.pushExtCleanup(
    vscode.commands.registerCommand('skillopt.showGateHistory', async (arg?: unknown) => {
      const runId = runIdOf(arg) ?? (await pickRun(ctx));
      if (runId) panels.show(runId);
    }),
  );
  ctx.pushExtCleanup(
    vscode.window.registerWebviewPanelSerializer(gateHistoryViewType, {
      deserializeWebviewPanel: (panel, state: unknown) => {
        panels.revive(panel, state);
        return Promise.resolve();
      },
    }),
  );
}

async function pickRun(ctx: Ctx): Promise<string | undefined> {
  const runs = ctx.runs.list();
  if (runs.length === 0) {
    void vscode.window.showInformationMessage(
      'SkillOpt: no runs in this workspace yet. Start one with "SkillOpt: Optimize This Skill".',
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    runs.map((r) => ({
      label: r.name,
      description: `${r.status}${r.bestScore !== undefined ? ` · best ${r.bestScore.toFixed(3)}` : ''}`,
      detail: r.dir,
      runId: runIdOf(r) ?? r.dir,
    })),
    { title: 'Gate History', placeHolder: 'Pick a run' },
  );
  return pick?.runId;
}
