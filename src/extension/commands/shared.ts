/**
 * Helpers every command uses: turning a command argument into a run, picking a run, showing an
 * engine error with a way to its cause, the Restricted Mode explanation, progress with cancel.
 */
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { errorDetail, errorMessage, errorReason } from '../log';
import { effectiveStatus, type RunView } from '../runs/liveState';
import { bestScoreOf, formatScore, sortRuns } from '../runs/treeNodes';

/**
 * A Markdown file on disk. Judged by extension, not language id: VS Code may give SKILL.md its own
 * language (agent skills), and other extensions may too.
 */
export function isMarkdownFile(uri: vscode.Uri): boolean {
  return uri.scheme === 'file' && /\.(md|markdown)$/i.test(uri.fsPath);
}

/** Run id (its folder) from a command argument: a string, a tree element, a RunView or `{runId}`. */
export function runIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string' && arg) return arg;
  if (arg instanceof vscode.Uri) return arg.fsPath;
  if (typeof arg !== 'object' || arg === null) return undefined;
  const o = arg as Record<string, unknown>;
  const spec = o.spec;
  if (typeof spec === 'object' && spec !== null) return runIdOf(spec);
  for (const key of ['runId', 'dir']) {
    const v = o[key];
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

/** The run named by `arg`, or one the person picks from those `filter` allows. */
export async function resolveRun(
  ctx: Ctx,
  arg: unknown,
  filter: (r: RunView) => boolean,
  placeHolder: string,
): Promise<RunView | undefined> {
  const id = runIdOf(arg);
  if (id) {
    const run = ctx.runs.get(id);
    if (run) return run;
    if (existsSync(id)) {
      ctx.runs.reread(id);
      const read = ctx.runs.get(id);
      if (read) return read;
    }
    void vscode.window.showErrorMessage(`SkillOpt: no run folder at ${id}.`);
    return undefined;
  }
  const runs = sortRuns(ctx.runs.list().filter(filter));
  if (runs.length === 0) {
    void vscode.window.showInformationMessage(
      `SkillOpt: no run to choose from (${placeHolder.toLowerCase()}).`,
    );
    return undefined;
  }
  if (runs.length === 1) return runs[0];
  const pick = await vscode.window.showQuickPick(
    runs.map((r) => ({
      label: r.name,
      description: `${effectiveStatus(r)} · best ${formatScore(bestScoreOf(r))}`,
      detail: r.dir,
      run: r,
    })),
    { placeHolder },
  );
  return pick?.run;
}

/** `path:line` at the start of an engine message (SkillOptError format), to open the cause. */
export function messageLocation(message: string): { file: string; line?: number } | undefined {
  const m = /^((?:[A-Za-z]:)?[^:\s][^:]*?\.(?:ya?ml|json|jsonl|csv|md|txt))(?::(\d+))?(?: \(|:)/.exec(
    message,
  );
  if (!m?.[1]) return undefined;
  return { file: m[1], ...(m[2] ? { line: Number(m[2]) } : {}) };
}

/** Shows an engine error (nothing for a cancellation) with "Open File" and "Show Log". */
export async function showEngineError(ctx: Ctx, what: string, err: unknown): Promise<void> {
  const reason = errorReason(err);
  if (reason === 'cancelled') {
    ctx.log.info(`[command] ${what}: cancelled`);
    return;
  }
  ctx.log.error(`[command] ${what}: ${errorDetail(err)}`);
  const message = errorMessage(err);
  const where = messageLocation(message);
  const actions = [...(where && existsSync(where.file) ? ['Open File'] : []), 'Show Log'];
  const choice = await vscode.window.showErrorMessage(`SkillOpt: ${what}: ${message}`, ...actions);
  if (choice === 'Show Log') ctx.log.show(true);
  if (choice === 'Open File' && where) {
    const doc = await vscode.workspace.openTextDocument(where.file);
    const line = Math.max(0, (where.line ?? 1) - 1);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0) });
  }
}

/** In Restricted Mode, explains why and offers to manage trust; returns whether the command may go on. */
export function requireTrust(action: string): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window
    .showWarningMessage(
      `SkillOpt cannot ${action} in Restricted Mode: training runs agent and scorer commands and sends workspace files to model providers. Runs can still be browsed. Trust this workspace to enable it.`,
      'Manage Workspace Trust',
    )
    .then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.trust.manage');
    });
  return false;
}

/** A cancellable progress notification around one engine request. */
export function withProgress<T>(
  title: string,
  task: (token: vscode.CancellationToken, progress: vscode.Progress<{ message?: string }>) => Promise<T>,
): Thenable<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, token) => task(token, progress),
  );
}
