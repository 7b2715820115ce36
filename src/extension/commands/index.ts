/**
 * Every command of the extension in one table: id → handler. Handlers that train or evaluate check
 * workspace trust themselves and explain Restricted Mode; the rest work anywhere.
 */
import * as vscode from 'vscode';
import { Commands, runsViewId, type CommandId } from '../constants';
import { setGroupRunsBySkill } from '../config';
import type { Ctx } from '../ctx';
import { errorDetail } from '../log';
import type { RunsTreeElement, RunsTreeProvider } from '../views/runsTree';
import { applyBestSkill } from './applyBest';
import { cancelProviderBatch } from './cancelBatch';
import { registerNewFileSide } from './applyBestPackage';
import { openArtifact, openStepDiff } from './artifacts';
import { selectCopilotModel } from './copilot';
import { evaluateSkill, openEvaluation } from './evaluate';
import { checkGateNoise } from './gateNoise';
import { setApiKey } from './keys';
import { openRunFolder, optimizeSkill, resumeRun, stopRun } from './runCommands';
import { runIdOf } from './shared';

export interface CommandDeps {
  tree: RunsTreeProvider;
  view: vscode.TreeView<RunsTreeElement>;
}

async function revealRun(ctx: Ctx, deps: CommandDeps, arg: unknown): Promise<void> {
  const runId = runIdOf(arg);
  if (!runId) return;
  await vscode.commands.executeCommand(`${runsViewId}.focus`);
  const el = deps.tree.runElement(runId);
  if (el) await deps.view.reveal(el, { select: true, focus: false, expand: true });
  else ctx.log.debug(`[tree] run ${runId} is not listed yet`);
}

export function registerCommands(ctx: Ctx, deps: CommandDeps): void {
  const table: Record<CommandId, (...args: unknown[]) => unknown> = {
    [Commands.optimizeSkill]: (arg, opts) => optimizeSkill(ctx, arg, opts),
    // The finished evaluation goes straight into the Runs view (a file watcher can miss a new folder).
    [Commands.evaluateSkill]: async (arg) => {
      const result = await evaluateSkill(ctx, arg);
      if (result) deps.tree.addEvaluation(result.out_dir);
      return result;
    },
    [Commands.checkGateNoise]: (arg) => checkGateNoise(ctx, arg, (dir) => deps.tree.addEvaluation(dir)),
    [Commands.stopRun]: (arg) => stopRun(ctx, arg),
    [Commands.resumeRun]: (arg) => resumeRun(ctx, arg),
    [Commands.cancelProviderBatch]: (arg) => cancelProviderBatch(ctx, arg),
    [Commands.openRunFolder]: (arg) => openRunFolder(ctx, arg),
    [Commands.applyBestSkill]: (arg, opts) => applyBestSkill(ctx, arg, opts),
    [Commands.setApiKey]: (provider, key) => setApiKey(ctx, provider, key),
    [Commands.selectCopilotModel]: (selector) => selectCopilotModel(ctx, selector),
    [Commands.refreshRuns]: () => ctx.runs.refresh(),
    [Commands.showLog]: () => ctx.log.show(),
    [Commands.revealRun]: (arg) => revealRun(ctx, deps, arg),
    [Commands.openStepDiff]: (runId, step) => openStepDiff(ctx, runId, step),
    [Commands.openArtifact]: (path) => openArtifact(path),
    [Commands.openEvaluation]: (dir) => openEvaluation(dir),
    [Commands.groupRunsBySkill]: () => setGroupRunsBySkill(true),
    [Commands.showRunsFlat]: () => setGroupRunsBySkill(false),
  };
  registerCommandTable(ctx, table);
  ctx.pushExtCleanup(registerNewFileSide());
}

/** Registers id → handler; an unexpected failure is logged and said, never lost. */
export function registerCommandTable(ctx: Ctx, table: Record<string, (...args: unknown[]) => unknown>): void {
  for (const [id, handler] of Object.entries(table)) {
    ctx.pushExtCleanup(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handler(...args);
        } catch (err) {
          // Handlers report expected failures themselves; this catches the unexpected ones.
          ctx.log.error(`[command] ${id}: ${errorDetail(err)}`);
          void vscode.window.showErrorMessage(`SkillOpt: ${id} failed unexpectedly. See the SkillOpt log.`);
          return undefined;
        }
      }),
    );
  }
}
