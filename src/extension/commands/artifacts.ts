/** Opening what the Runs tree points at: a step's candidate diff, a report, a trajectory. */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { EVAL_FILE, RUN_FILE } from '../../engine/store/layout';
import { stepArtifacts } from '../../engine/store/runReader';
import type { Ctx } from '../ctx';
import { showConversation } from '../views/conversationView';

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
  const name = basename(path);
  // Read as a person would: the report rendered, a conversation as headed text, not JSON.
  if (name === RUN_FILE.report)
    await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(path));
  else if (name === EVAL_FILE.conversation) await showConversation(path);
  else await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: true });
}
