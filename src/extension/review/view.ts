/**
 * What a review looks like in the editor: decorations (types created once, theme colours only),
 * CodeLens actions addressed by edit id, and hovers that explain each edit. Everything is derived
 * from the session on each (debounced) redraw.
 */
import { describeGateTest, describeItemRegressions } from '../../protocol/gateText';
import * as vscode from 'vscode';
import { candidateName } from '../../protocol/webview';
import { editTitle } from '../../protocol/words';
import type { ReviewController, TrackedSession } from './controller';
import { membersOf } from './registry';
import { isHunkOwner } from './layout';
import { endedTitle } from './outcomes';
import { firstLine, hoverText } from './reviewHover';
import { Commands } from '../constants';
import type { OwnerState, ReviewSession, Segment } from './session';

/** Line ranges per decoration kind, as last drawn (tests read them back through inspect). */
export interface DrawnRanges {
  added: number[][];
  removed: number[][];
  accepted: number[][];
  rejected: number[];
}

export interface EditArgs {
  uri: string;
  key: string;
  editId?: string;
  reason?: string;
}

function ownerTitle(o: OwnerState, s: ReviewSession): string {
  if (isHunkOwner(o.id)) return s.init.origin === 'slow_update' ? 'slow update' : 'change';
  const title = editTitle({
    ...(o.edit?.op ? { op: o.edit.op } : {}),
    ...(o.edit?.support_count !== undefined ? { supportCount: o.edit.support_count } : {}),
    ...(o.edit?.source_type ? { sourceType: o.edit.source_type } : {}),
  });
  // Two edits pulling the same rule opposite ways: say so where the person decides.
  return o.edit?.conflicts_with?.length ? `⚠ conflicts with another edit · ${title}` : title;
}

function what(s: ReviewSession): string {
  return candidateName(s.init.origin, s.init.step, s.init.epoch);
}

const score = (v: number): string => v.toFixed(3);

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
                contentText: `⊘ rejected by the gate: ${ownerTitle(o, s)} “${firstLine(seg.lines.join('\n'))}”`,
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
    const t = this.controller.sessionFor(document.uri);
    if (!t || t.session.phase === 'done') return endedLenses(this.controller, document.uri);
    const s = t.session;
    const args = (editId?: string): EditArgs => ({
      uri: document.uri.toString(),
      key: s.key,
      ...(editId ? { editId } : {}),
    });
    const top = new vscode.Range(0, 0, 0, 0);
    const lenses: vscode.CodeLens[] = [];
    const lens = (range: vscode.Range, title: string, command = '', a?: EditArgs, tooltip?: string): void => {
      lenses.push(
        new vscode.CodeLens(range, {
          title,
          command,
          ...(a ? { arguments: [a] } : {}),
          ...(tooltip ? { tooltip } : {}),
        }),
      );
    };
    const placed = s.placedOwners();
    const conflicts = s.withFate('conflict').length;
    const unplaced = conflicts
      ? ` · ${conflicts} edit${conflicts === 1 ? '' : 's'} not shown here (see diff)`
      : '';
    const count = `${placed.length} edit${placed.length === 1 ? '' : 's'}`;
    switch (s.phase) {
      case 'awaiting-gate':
        lens(
          top,
          s.startedOnCandidate || s.withFate('accepted').length
            ? `$(sync~spin) SkillOpt ${what(s)}: the gate is scoring your kept edits`
            : `$(sync~spin) SkillOpt ${what(s)}: the gate is scoring the candidate (${count})${unplaced}`,
        );
        break;
      case 'review': {
        if (!s.perEdit) {
          const g = s.gateScores;
          const vs = g ? ` (${score(g.candidateScore)} vs ${score(g.currentScore)})` : '';
          // What the gate found beyond the means: the paired test and any broken items.
          const evidence = [
            ...(g?.gateTest ? [describeGateTest(g.gateTest)] : []),
            ...(g?.itemRegressions?.items.length ? [describeItemRegressions(g.itemRegressions)] : []),
          ]
            .map((t) => ` · ${t}`)
            .join('');
          lens(
            top,
            g?.gateTest?.verdict === 'inconclusive'
              ? `$(question) SkillOpt ${what(s)}: the gate could not tell it from noise${vs}${evidence}; the run waits for you${unplaced}`
              : `$(pass) SkillOpt ${what(s)} passed the gate${vs}${evidence}; the run waits for you${unplaced}`,
          );
          lens(
            top,
            'Accept Candidate',
            'skillopt.review.acceptAll',
            args(),
            'Make this candidate the current skill',
          );
          lens(
            top,
            'Reject Candidate…',
            'skillopt.review.rejectAll',
            args(),
            'Drop this candidate, with an optional reason',
          );
        } else {
          const waiting = s.waiting ? '; the run waits for you' : '';
          const gate = s.verdict
            ? ` · gate ${s.verdict.accepted ? 'accepted' : 'rejected'} it (${score(s.verdict.candidateScore)})`
            : '';
          lens(top, `$(git-compare) SkillOpt ${what(s)}: ${count} to review${waiting}${gate}${unplaced}`);
          lens(top, 'Accept All', 'skillopt.review.acceptAll', args(), 'Accept every edit of this candidate');
          lens(
            top,
            'Reject All…',
            'skillopt.review.rejectAll',
            args(),
            'Reject every edit, with an optional reason',
          );
        }
        break;
      }
      case 'verdict': {
        const v = s.verdict;
        if (v?.accepted || (!v && s.withFate('accepted').length)) {
          lens(
            top,
            `$(pass-filled) Gate accepted ${what(s)}${v ? ` (${score(v.candidateScore)})` : ''}${unplaced}`,
          );
          lens(
            top,
            'Revert Candidate…',
            'skillopt.review.rejectAll',
            args(),
            'Overrule the gate: go back to the previous skill',
          );
        } else {
          lens(
            top,
            `$(error) Gate rejected ${what(s)}${v ? ` (${score(v.candidateScore)}, needed more than ${score(v.currentScore)})` : ''}`,
          );
          lens(
            top,
            'Accept Anyway',
            'skillopt.review.acceptAll',
            args(),
            'Overrule the gate: make this candidate current',
          );
        }
        lens(top, 'Dismiss', 'skillopt.review.dismiss', args(), 'Stop showing this verdict');
        break;
      }
    }
    lens(
      top,
      'Open in Diff View',
      'skillopt.review.openDiff',
      args(),
      'Previous skill against the candidate',
    );
    // Right after the review's title, where the line of lenses is never cut off.
    lenses.splice(1, 0, ...otherFileLenses(t, top));

    for (const id of placed) {
      const o = s.owners.get(id);
      const line = s.ownerLine(id);
      if (!o || line === undefined) continue;
      const range = new vscode.Range(
        Math.min(line, document.lineCount - 1),
        0,
        Math.min(line, document.lineCount - 1),
        0,
      );
      if (s.phase === 'review' && o.fate === 'pending') {
        if (s.perEdit) {
          lens(
            range,
            '$(check) Accept',
            'skillopt.review.acceptEdit',
            args(id),
            `Keep this ${o.edit?.op ?? 'change'}`,
          );
          lens(
            range,
            '$(close) Reject…',
            'skillopt.review.rejectEdit',
            args(id),
            'Drop it, with an optional reason',
          );
        }
        lens(range, ownerTitle(o, s));
      } else if (s.phase === 'verdict' && o.fate === 'accepted') {
        lens(range, `$(check) kept by the gate · ${ownerTitle(o, s)}`);
      }
    }
    return lenses;
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

/** A skill folder's candidate: one lens per other file it changes, opening that file's review. */
function otherFileLenses(t: TrackedSession, top: vscode.Range): vscode.CodeLens[] {
  return membersOf(t)
    .filter((m) => m !== t)
    .map((m) => {
      const s = m.session;
      const open = s.placedOwners().filter((id) => s.owners.get(id)?.fate === 'pending').length;
      const state =
        s.phase === 'review' && open ? `${open} to review` : s.phase === 'done' ? 'decided' : 'shown';
      const isNew = m.uri.scheme === 'untitled' ? ' (new file)' : '';
      return new vscode.CodeLens(top, {
        title: `$(file) ${m.fileName}${isNew}: ${state}`,
        command: 'vscode.open',
        // Beside the file the lens is on, so both files of the candidate show at once.
        arguments: [m.uri, { viewColumn: vscode.ViewColumn.Beside, preview: false }],
        tooltip: `This candidate also changes ${m.fileName}; open its review`,
      });
    });
}

/** An ended run's review: one line saying so, Resume, Dismiss; nothing that could decide. */
function endedLenses(controller: ReviewController, uri: vscode.Uri): vscode.CodeLens[] {
  const e = controller.ended.get(uri.toString());
  if (!e) return [];
  const top = new vscode.Range(0, 0, 0, 0);
  const args: EditArgs = { uri: uri.toString(), key: e.key };
  return [
    new vscode.CodeLens(top, { title: endedTitle(e), command: '' }),
    new vscode.CodeLens(top, {
      title: 'Resume Run',
      command: Commands.resumeRun,
      arguments: [e.runId],
      tooltip: 'Continue the run from its last finished step',
    }),
    new vscode.CodeLens(top, {
      title: 'Dismiss',
      command: 'skillopt.review.dismiss',
      arguments: [args],
      tooltip: 'Stop showing this line',
    }),
  ];
}
