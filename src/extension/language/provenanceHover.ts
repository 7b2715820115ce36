/**
 * Hovering a line of a trained skill says which step added it, from which evidence, and what the
 * gate saw: for the skill a run trains and for the run's best_skill.md.
 */
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { describeOrigin, ProvenanceFiles, runTrains } from '../runs/provenance';
import { sortRuns } from '../runs/treeNodes';
import type { ReviewLines } from '../review/index';

export class ProvenanceHover implements vscode.HoverProvider {
  private readonly files = new ProvenanceFiles();

  constructor(
    private readonly ctx: Ctx,
    private readonly reviewLines: ReviewLines,
  ) {}

  provideHover(doc: vscode.TextDocument, pos: vscode.Position): vscode.Hover | undefined {
    if (doc.uri.scheme !== 'file') return undefined;
    // A candidate's line under review is nobody's yet: the review's own hover describes it.
    if (this.reviewLines.underReview(doc.uri, pos.line)) return undefined;
    const line = doc.lineAt(pos.line).text;
    // Newest run first: it is the last author of a line that several runs wrote.
    for (const run of sortRuns(this.ctx.runs.list())) {
      if (!runTrains(run, doc.uri.fsPath, this.ctx.runs.origin(run.dir))) continue;
      const origin = this.files.originOf(run.dir, line);
      if (!origin) continue;
      const md = new vscode.MarkdownString();
      md.appendMarkdown('$(history) **Where this line came from**\n\n');
      md.supportThemeIcons = true;
      for (const text of describeOrigin(run.name, origin)) md.appendText(text).appendMarkdown('\n\n');
      return new vscode.Hover(md, doc.lineAt(pos.line).range);
    }
    return undefined;
  }
}
