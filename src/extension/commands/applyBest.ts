/**
 * "Apply Best Skill": shows the diff from the skill file to the run's best_skill.md, then replaces
 * the document's text with one WorkspaceEdit, so Undo brings the old skill back. Nothing is saved
 * behind the person's back. A skill folder run applies its whole `best_skill/` (applyBestPackage.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import * as vscode from 'vscode';
import { packageDirOf, RUN_FILE, RunLayout } from '../../engine/store/layout';
import type { Ctx } from '../ctx';
import type { RunView } from '../runs/liveState';
import { applyBestPackage } from './applyBestPackage';
import { resolveRun, isMarkdownFile } from './shared';

export interface ApplyOptions {
  /** The file to change; default: the skill the run trained. */
  skillPath?: string;
  /** false: apply right after opening the diff, without asking. */
  confirm?: boolean;
}

function bestPath(run: RunView): string {
  return new RunLayout(run.dir).file(RUN_FILE.bestSkill);
}

/** The skill file a run trained, when it is known and exists here. */
function trainedSkill(ctx: Ctx, run: RunView): string | undefined {
  const origin = ctx.runs.origin(run.dir)?.skillPath;
  if (origin && existsSync(origin)) return origin;
  const init = run.config.skill_init;
  if (typeof init === 'string' && init) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const p = isAbsolute(init) ? init : folder ? resolve(folder, init) : undefined;
    if (p && existsSync(p)) return p;
  }
  return undefined;
}

async function targetSkill(ctx: Ctx, run: RunView, opts: ApplyOptions): Promise<string | undefined> {
  if (opts.skillPath) return opts.skillPath;
  const trained = trainedSkill(ctx, run);
  if (trained) return trained;
  const active = vscode.window.activeTextEditor?.document;
  if (active !== undefined && isMarkdownFile(active.uri) && !active.uri.fsPath.startsWith(run.dir)) {
    return active.uri.fsPath;
  }
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    filters: { 'Skill (Markdown)': ['md'] },
    openLabel: 'Apply Best Skill Here',
    title: `Which file should get the best skill of ${run.name}?`,
  });
  return picked?.[0]?.fsPath;
}

/** Returns whether the edit was applied. */
export async function applyBestSkill(ctx: Ctx, arg?: unknown, optsArg?: unknown): Promise<boolean> {
  const opts: ApplyOptions = typeof optsArg === 'object' && optsArg !== null ? optsArg : {};
  const run = await resolveRun(
    ctx,
    arg,
    (r) => existsSync(bestPath(r)),
    'Pick a run whose best skill to apply',
  );
  if (!run) return false;
  const best = bestPath(run);
  if (!existsSync(best)) {
    void vscode.window.showInformationMessage(`SkillOpt: ${run.name} has no best_skill.md yet.`);
    return false;
  }
  // A skill folder run: the whole best_skill/ folder goes over the trained folder.
  const bestDir = packageDirOf(best);
  if (existsSync(bestDir)) {
    const trained = opts.skillPath ?? trainedSkill(ctx, run);
    return applyBestPackage(ctx, run, bestDir, trained, opts.confirm !== false);
  }
  const skillPath = await targetSkill(ctx, run, opts);
  if (!skillPath) return false;
  const skillUri = vscode.Uri.file(skillPath);
  const doc = await vscode.workspace.openTextDocument(skillUri);
  const bestText = readFileSync(best, 'utf8');
  if (doc.getText() === bestText) {
    void vscode.window.showInformationMessage(
      `SkillOpt: ${basename(skillPath)} already equals the best skill of ${run.name}.`,
    );
    return false;
  }
  await vscode.commands.executeCommand(
    'vscode.diff',
    skillUri,
    vscode.Uri.file(best),
    `${basename(skillPath)} ↔ best skill of ${run.name}`,
    { preview: true },
  );
  if (opts.confirm !== false) {
    const choice = await vscode.window.showInformationMessage(
      `Apply the best skill of ${run.name} (score ${run.bestScore?.toFixed(3) ?? '?'}) to ${basename(skillPath)}? You can undo it.`,
      'Apply',
      'Cancel',
    );
    if (choice !== 'Apply') return false;
  }
  const edit = new vscode.WorkspaceEdit();
  const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
  edit.replace(skillUri, whole, bestText, {
    label: `Apply best skill of ${run.name}`,
    needsConfirmation: false,
  });
  const ok = await vscode.workspace.applyEdit(edit);
  if (!ok) {
    void vscode.window.showErrorMessage(`SkillOpt: VS Code refused the edit to ${basename(skillPath)}.`);
    return false;
  }
  ctx.log.info(`[apply] best skill of ${run.dir} applied to ${skillPath}`);
  await vscode.window.showTextDocument(doc, { preview: false });
  void vscode.window.showInformationMessage(
    `SkillOpt: applied the best skill to ${basename(skillPath)}. Save to keep it, or Undo to go back.`,
  );
  return true;
}
