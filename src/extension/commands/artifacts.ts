/** Opening what the Runs tree points at: a step's candidate diff, a report, a trajectory. */
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { stepArtifacts } from '../../engine/store/runReader';
import type { Ctx } from '../ctx';

/** Diff from the skill a step started with to the candidate it proposed. */
export async function openStepDiff(ctx: Ctx, runId: unknown, step: unknown): Promise<boolean> {
  if (typeof runId !== 'string' || typeof step !== 'number') return false;
  const a = stepArtifacts(runId, step);
  if (!a.candidate) {
    void vscode.window.showInformationMessage(`SkillOpt: step ${step} kept no candidate skill.`);
    return false;
  }
  const name = ctx.runs.get(runId)?.name ?? runId;
  const before = a.previous ? vscode.Uri.file(a.previous) : undefined;
  if (!before) {
    await vscode.window.showTextDocument(vscode.Uri.file(a.candidate), { preview: true });
    return true;
  }
  await vscode.commands.executeCommand(
    'vscode.diff',
    before,
    vscode.Uri.file(a.candidate),
    `Step ${step}: skill before ↔ candidate (${name})`,
    { preview: true },
  );
  return true;
}

export async function openArtifact(path: unknown): Promise<void> {
  if (typeof path !== 'string') return;
  if (!existsSync(path)) {
    void vscode.window.showInformationMessage(`SkillOpt: ${path} is not there (the run may not keep it).`);
    return;
  }
  await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: true });
}
