/** Applies a review transition's line operations to an open document as one undoable edit. */
import * as vscode from 'vscode';
import { isSkillLanguage } from './languages';
import { runWithoutProtectedWarning } from './selfEdits';
import { applyLineOps, type LineOp, type ReviewSession } from './session';

/**
 * Applies `ops` to `doc` as one WorkspaceEdit and waits until the document shows the result (the
 * change event may trail the edit's promise). False when VS Code refused the edit.
 */
export async function applyOpsToDocument(doc: vscode.TextDocument, ops: readonly LineOp[]): Promise<boolean> {
  const edit = new vscode.WorkspaceEdit();
  edit.set(doc.uri, lineOpEdits(doc, ops));
  const expected = applyLineOps(doc.getText().replace(/\r\n/g, '\n'), ops);
  const ok = await runWithoutProtectedWarning(doc.uri, () => vscode.workspace.applyEdit(edit));
  if (ok) await textReaches(doc, expected);
  return ok;
}

/** The text edits of `ops`, each addressed in the document as it is now. */
export function lineOpEdits(doc: vscode.TextDocument, ops: readonly LineOp[]): vscode.TextEdit[] {
  const eol = doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n';
  const n = doc.lineCount;
  const lineEnd = (line: number): vscode.Position => doc.lineAt(line).range.end;
  return ops.map((op) => {
    if (op.kind === 'insert') {
      const text = op.lines.join(eol);
      return op.at < n
        ? vscode.TextEdit.insert(new vscode.Position(op.at, 0), text + eol)
        : vscode.TextEdit.insert(lineEnd(n - 1), eol + text);
    }
    const end = op.start + op.count;
    if (end < n) return vscode.TextEdit.delete(new vscode.Range(op.start, 0, end, 0));
    if (op.start > 0) return vscode.TextEdit.delete(new vscode.Range(lineEnd(op.start - 1), lineEnd(n - 1)));
    return vscode.TextEdit.delete(new vscode.Range(new vscode.Position(0, 0), lineEnd(n - 1)));
  });
}

/** Resolves once the document holds `expected` (or after a short wait, if it never does). */
function textReaches(doc: vscode.TextDocument, expected: string, ms = 2000): Promise<void> {
  const done = (): boolean => doc.getText().replace(/\r\n/g, '\n') === expected;
  if (done()) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms);
    const sub = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc && done()) finish();
    });
    function finish(): void {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    }
  });
}

/**
 * Carries the person's typing into the review: each change shifts or detaches the edits it
 * touches. Returns the ids of the edits it detached.
 */
export function followTyping(session: ReviewSession, e: vscode.TextDocumentChangeEvent): string[] {
  const lost: string[] = [];
  for (const c of e.contentChanges) {
    lost.push(
      ...session.applyTextChange({
        startLine: c.range.start.line,
        startChar: c.range.start.character,
        endLine: c.range.end.line,
        endChar: c.range.end.character,
        text: c.text.replace(/\r\n/g, '\n'),
      }),
    );
  }
  const lines: string[] = [];
  for (let i = 0; i < e.document.lineCount; i++) lines.push(e.document.lineAt(i).text);
  session.refreshLines(lines);
  return lost;
}

/** The open document of a skill; without a path, the active editor's skill document. */
export function openSkillDocument(skillPath: string | undefined): vscode.TextDocument | undefined {
  if (skillPath) {
    const want = vscode.Uri.file(skillPath).toString();
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === want);
    if (open) return open;
    return undefined;
  }
  const active = vscode.window.activeTextEditor?.document;
  return active && isSkillLanguage(active.languageId) ? active : undefined;
}

/** Deletes of the lines only the review put in the document (its undecided additions). */
export function pendingInsertions(s: ReviewSession): LineOp[] {
  const pending = s.withFate('pending');
  return s
    .allSegments()
    .filter(
      (seg) => pending.includes(seg.owner) && seg.kind === 'added' && seg.present && seg.lines.length > 0,
    )
    .map((seg): LineOp => ({ kind: 'delete', start: seg.start, count: seg.lines.length }));
}
