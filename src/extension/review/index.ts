import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { CandidateContentProvider, candidateScheme } from './candidateContent';
import { registerReviewCommands } from './commands';
import { ReviewController } from './controller';
import { DecisionStore } from './decisionStore';
import { skillDocuments } from './languages';
import { ReviewView } from './view';

export { reviewModeSetting } from './reviewContext';

/** Inline review of candidates on the skill document, the candidate diff view and their commands. */
export function registerReview(ctx: Ctx): void {
  const content = new CandidateContentProvider();
  const controller = new ReviewController(ctx, content, DecisionStore.of(ctx.extension.workspaceState));
  const view = new ReviewView(controller);
  ctx.pushExtCleanup(content);
  ctx.pushExtCleanup(controller);
  ctx.pushExtCleanup(view);
  ctx.pushExtCleanup(vscode.workspace.registerTextDocumentContentProvider(candidateScheme, content));
  ctx.pushExtCleanup(vscode.languages.registerCodeLensProvider(skillDocuments, view));
  ctx.pushExtCleanup(vscode.languages.registerHoverProvider(skillDocuments, view));
  registerReviewCommands(ctx, controller, view);
}
