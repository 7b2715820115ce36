import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { CandidateContentProvider, candidateScheme } from './candidateContent';
import { registerReviewCommands } from './commands';
import { ReviewController } from './controller';
import { DecisionStore } from './decisionStore';
import { skillDocuments } from './languages';
import { ReviewView } from './view';
import { reviewOwnsLine } from './outcomes';

export { reviewModeSetting } from './reviewContext';

/** Which lines of a document an open review put there (for other hovers to leave alone). */
export interface ReviewLines {
  underReview(uri: vscode.Uri, line: number): boolean;
}

/** Inline review of candidates on the skill document, the candidate diff view and their commands. */
export function registerReview(ctx: Ctx): ReviewLines {
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
  return {
    underReview: (uri, line) => {
      const t = controller.sessionFor(uri);
      return t !== undefined && reviewOwnsLine(t.session, line);
    },
  };
}
