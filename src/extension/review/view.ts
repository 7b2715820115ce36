/**
 * What a review looks like in the editor: decorations (types created once, theme colours only),
 * CodeLens actions addressed by edit id (built in reviewLenses.ts), and hovers that explain each
 * edit. Everything is derived from the session on each (debounced) redraw.
 */
import * as vscode from 'vscode';
import type { ReviewController } from './controller';
import { firstLine, hoverText } from './reviewHover';
import { ownerTitle, reviewLenses } from './reviewLenses';
import type { ReviewSession, Segment } from './session';
import { isInconclusive } from '../../protocol/vocabulary';
import { actionLabel } from '../../protocol/words';

/** Line ranges per decoration kind, as last drawn (tests read them back through inspect). */
export interface DrawnRanges {
  added: number[][];
  removed: number[][];
  accepted: number[][];
  rejected: number[];
}

export class ReviewView implements vscode.Disposable, vscode.CodeLensProvider, vscode.HoverProvider {
  private readonly added: vscode.TextEditorDecorationType;
  private readonly removed: vscode.TextEditorDecorationType;
  private readonly accepted: vscode.TextEditorDecorationType;
  private readonly rejected: vscode.TextEditorDecorationType;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  readonly drawn = new Map<string, DrawnRanges>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly controller: ReviewController) {
    this.added = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('skillopt.review.insertedLineBackground'),
      // High-contrast themes have no diff backgrounds; their border colours carry the meaning.
      borderStyle: 'dashed',
      borderWidth: '1px 0',
      borderColor: new vscode.ThemeColor('skillopt.review.insertedLineBorder'),
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.removed = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('skillopt.review.removedLineBackground'),
      textDecoration: 'line-through',
      borderStyle: 'dashed',
      borderWidth: '1px 0',
      borderColor: new vscode.ThemeColor('skillopt.review.removedLineBorder'),
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.deletedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.accepted = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      borderStyle: 'solid',
      borderWidth: '0 0 0 3px',
      borderColor: new vscode.ThemeColor('skillopt.review.acceptedBorder'),
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.rejected = vscode.window.createTextEditorDecorationType({
      after: {
        color: new vscode.ThemeColor('skillopt.review.rejectedForeground'),
        fontStyle: 'italic',
        margin: '0 0 0 2em',
      },
    });
    this.disposables.push(
      this.added,
      this.removed,
      this.accepted,
      this.rejected,
      this.lensesChanged,
      controller.onDidChange(() => this.redraw()),
      vscode.window.onDidChangeVisibleTextEditors(() => this.redraw()),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateContext()),
    );
  }

  private redraw(): void {
    for (const editor of vscode.window.visibleTextEditors) this.draw(editor);
    this.lensesChanged.fire();
    this.updateContext();
  }

  /** `skillopt:reviewActive` enables the review commands in the palette. */
  private updateContext(): void {
    const editor = vscode.window.activeTextEditor;
    const t = editor ? this.controller.sessionFor(editor.document.uri) : undefined;
    void vscode.commands.executeCommand(
      'setContext',
      'skillopt:reviewActive',
      !!t && t.session.phase !== 'done',
    );
  }

  private draw(editor: vscode.TextEditor): void {
    const t = this.controller.sessionFor(editor.document.uri);
    const ranges: DrawnRanges = { added: [], removed: [], accepted: [], rejected: [] };
    const added: vscode.DecorationOptions[] = [];
    const removed: vscode.DecorationOptions[] = [];
    const accepted: vscode.DecorationOptions[] = [];
    const rejected: vscode.DecorationOptions[] = [];
    const last = editor.document.lineCount - 1;
    const block = (seg: Segment): vscode.Range =>
      new vscode.Range(Math.min(seg.start, last), 0, Math.min(seg.start + seg.lines.length - 1, last), 0);
    if (t && t.session.phase !== 'done') {
      const s = t.session;
      for (const seg of s.allSegments()) {
        const o = s.owners.get(seg.owner);
        if (!o) continue;
        const shown = seg.present && seg.lines.length > 0;
        if (o.fate === 'pending' && shown && s.phase === 'review') {
          (seg.kind === 'added' ? added : removed).push({ range: block(seg) });
          (seg.kind === 'added' ? ranges.added : ranges.removed).push([
            seg.start,
            seg.start + seg.lines.length - 1,
          ]);
        } else if (o.fate === 'accepted' && shown && seg.kind === 'added' && s.phase !== 'review') {
          accepted.push({ range: block(seg) });
          ranges.accepted.push([seg.start, seg.start + seg.lines.length - 1]);
        } else if (o.fate === 'rejected' && o.decidedBy === 'gate' && seg.kind === 'added' && !seg.present) {
          // The gate dropped these lines; say so at the line where they would have gone.
          const line = Math.max(0, Math.min(seg.start - 1, last));
          rejected.push({
            range: new vscode.Range(line, Number.MAX_SAFE_INTEGER, line, Number.MAX_SAFE_INTEGER),
            renderOptions: {
              after: {
                contentText: `⊘ ${droppedBy(s)}: ${ownerTitle(o, s)} “${firstLine(seg.lines.join('\n'))}”`,
              },
            },
          });
          ranges.rejected.push(line);
        }
      }
    }
    editor.setDecorations(this.added, added);
    editor.setDecorations(this.removed, removed);
    editor.setDecorations(this.accepted, accepted);
    editor.setDecorations(this.rejected, rejected);
    this.drawn.set(editor.document.uri.toString(), ranges);
  }

  // ── CodeLens ──────────────────────────────────────────────────────────────────────────────

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    return reviewLenses(this.controller, document);
  }

  // ── hover ─────────────────────────────────────────────────────────────────────────────────

  provideHover(document: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const t = this.controller.sessionFor(document.uri);
    if (!t || t.session.phase === 'done') return undefined;
    const s = t.session;
    const seg = s
      .allSegments()
      .find(
        (x) =>
          x.present &&
          x.lines.length > 0 &&
          position.line >= x.start &&
          position.line < x.start + x.lines.length,
      );
    if (!seg) return undefined;
    const o = s.owners.get(seg.owner);
    if (!o) return undefined;
    return new vscode.Hover(
      hoverText(t, o, seg),
      new vscode.Range(seg.start, 0, seg.start + seg.lines.length - 1, 0),
    );
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** Why the gate dropped a candidate's lines: a rejection, or a verdict it could not tell from noise. */
function droppedBy(s: ReviewSession): string {
  return s.verdict && isInconclusive(s.verdict.action)
    ? 'not kept, the gate could not tell it from noise'
    : actionLabel('reject');
}
