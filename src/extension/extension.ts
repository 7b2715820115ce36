/**
 * Entry point: builds the Ctx, the Runs view, the status bar and the commands. Activation does no
 * heavy work: the engine process starts on the first command that needs it, and the run folders
 * are read in the background. A failure to activate is shown, with the log one click away.
 */
import * as vscode from 'vscode';
import { registerCommands } from './commands/index';
import { ContextKeys } from './constants';
import { Ctx } from './ctx';
import { createLogChannel, errorDetail, errorMessage } from './log';
import { VERSION } from '../protocol/vocabulary';
import { registerRunsTree, type RunsTreeElement, type RunsTreeProvider } from './views/runsTree';
import { registerSkillsView, type SkillsTreeProvider } from './views/skillsTree';
import { registerStatusBar } from './views/statusBar';
import { registerRunNotices } from './views/runNotices';
import { registerConversationView } from './views/conversationView';
import { registerLanguage } from './language/index';
import { registerReview } from './review/index';
import { registerGateHistory } from './webview/index';

/** What `activate` returns: other extensions and the integration tests read state through it. */
export interface SkillOptApi {
  readonly ctx: Ctx;
  readonly tree: RunsTreeProvider;
  /** The Runs view (its badge says how many runs wait for the person). */
  readonly runsView: vscode.TreeView<RunsTreeElement>;
  readonly skills: SkillsTreeProvider;
}

function trackTrust(ctx: Ctx): void {
  const update = (): void => {
    void vscode.commands.executeCommand('setContext', ContextKeys.limited, !vscode.workspace.isTrusted);
  };
  update();
  ctx.pushExtCleanup(
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      ctx.log.info('[trust] workspace trusted: training and evaluation are available');
      update();
      ctx.onTrustGranted();
    }),
  );
  if (!vscode.workspace.isTrusted) {
    ctx.log.info(
      '[trust] Restricted Mode: runs can be browsed; training, evaluation and agent commands are off',
    );
  }
}

export function activate(context: vscode.ExtensionContext): SkillOptApi {
  const log = createLogChannel();
  context.subscriptions.push(log);
  try {
    const ctx = new Ctx(context, log);
    trackTrust(ctx);
    const { provider, view } = registerRunsTree(ctx);
    registerStatusBar(ctx);
    registerRunNotices(ctx);
    registerConversationView(ctx);
    registerCommands(ctx, { tree: provider, view });
    const skills = registerSkillsView(ctx);
    // Inline review, language features and the Gate History panel.
    const reviewLines = registerReview(ctx);
    registerLanguage(ctx, reviewLines);
    registerGateHistory(ctx);
    void ctx.runs.refresh();
    log.info(`[activate] SkillOpt ${VERSION} ready`);
    return { ctx, tree: provider, runsView: view, skills };
  } catch (err) {
    // VS Code reports a failed activation only in its own logs; say it where people look.
    log.error(`[activate] ${errorDetail(err)}`);
    void vscode.window
      .showErrorMessage(`SkillOpt failed to start: ${errorMessage(err)}`, 'Show Log')
      .then((c) => {
        if (c) log.show();
      });
    throw err;
  }
}

export function deactivate(): void {
  // Everything, the engine process included, is disposed through context.subscriptions.
}
