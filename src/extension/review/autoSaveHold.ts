/**
 * Keeps VS Code's auto-save from writing a candidate's undecided lines. The extension API cannot
 * skip an auto-save, but VS Code's own `files.autoSaveWhenNoErrors` skips a file that has an error
 * marker: with it on for the document, each undecided block is marked as an error ("accept or
 * reject") for as long as it is undecided, and auto-save resumes by itself once the last one is
 * decided. Without that setting nothing is marked (the marks would hold nothing), and the person
 * is offered to turn it on for the skill's language in this workspace (autoSaveNotice.ts).
 */
import * as vscode from 'vscode';
import { candidateName } from '../../protocol/webview';
import { pendingInsertions } from './documentEdits';
import type { TrackedSession } from './registry';

/** What the marks say where they come from (the Problems panel's source column). */
export const HOLD_SOURCE = 'SkillOpt review';

/** How long marks outlive their review: long enough for an ending review to take its lines out. */
const CLEAR_AFTER_MS = 1000;

export type AutoSaveState = 'off' | 'held' | 'writes';

/** Whether auto-save would write `doc`, and whether undecided lines marked as errors hold it. */
export function autoSaveState(doc: vscode.TextDocument): AutoSaveState {
  const files = vscode.workspace.getConfiguration('files', doc);
  if ((files.get<string>('autoSave') ?? 'off') === 'off') return 'off';
  return files.get<boolean>('autoSaveWhenNoErrors') === true ? 'held' : 'writes';
}

function openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
}

export class AutoSaveHold implements vscode.Disposable {
  private readonly marks = vscode.languages.createDiagnosticCollection('skillopt-review');
  /** The marked documents, and since when no review wants them marked. */
  private readonly held = new Map<string, { uri: vscode.Uri; unwantedSince?: number }>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [this.marks];

  constructor(private readonly sessions: () => readonly TrackedSession[]) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('files.autoSave') || e.affectsConfiguration('files.autoSaveWhenNoErrors'))
          this.refresh();
      }),
    );
  }

  /** Marks every open review's undecided lines where that holds auto-save; clears the rest. */
  refresh(): void {
    const wanted = new Map<string, { uri: vscode.Uri; marks: vscode.Diagnostic[] }>();
    for (const t of this.sessions()) {
      if (t.session.phase === 'done') continue;
      const doc = openDocument(t.uri);
      if (!doc || autoSaveState(doc) !== 'held') continue;
      const { origin, step, epoch } = t.session.init;
      const name = candidateName(origin, step, epoch);
      const marks = pendingInsertions(t.session).flatMap((op) => {
        if (op.kind !== 'delete') return [];
        const last = Math.min(op.start + op.count - 1, doc.lineCount - 1);
        const range = new vscode.Range(op.start, 0, last, doc.lineAt(last).text.length);
        const lines = op.count === 1 ? 'An undecided line' : `${op.count} undecided lines`;
        const mark = new vscode.Diagnostic(
          range,
          `${lines} from ${name}: accept or reject. Auto-save leaves ${t.fileName} alone until every line is decided.`,
          vscode.DiagnosticSeverity.Error,
        );
        mark.source = HOLD_SOURCE;
        return [mark];
      });
      if (marks.length) wanted.set(t.uri.toString(), { uri: t.uri, marks });
    }
    const now = Date.now();
    for (const [key, held] of this.held) {
      if (wanted.has(key)) continue;
      // A review that ends takes its lines out just after it leaves the registry; clearing the
      // marks at once would let auto-save write them first. So they go a moment later.
      held.unwantedSince ??= now;
      if (now - held.unwantedSince < CLEAR_AFTER_MS) {
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          this.refresh();
        }, CLEAR_AFTER_MS);
        continue;
      }
      this.marks.delete(held.uri);
      this.held.delete(key);
    }
    for (const [key, { uri, marks }] of wanted) {
      this.marks.set(uri, marks);
      this.held.set(key, { uri });
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
