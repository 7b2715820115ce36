/**
 * What the reviews do when their run moves on: a run that ends turns the reviews still waiting on
 * it inert (their undecided lines go, a lens says the run stopped and offers Resume); a new run of
 * a skill replaces what an earlier run still shows on it; the diff's Accept of a candidate the
 * editor could not show whole writes the whole candidate.
 */
import * as vscode from 'vscode';
import type { TrackedSession } from './controller';
import { membersOf } from './registry';
import { endedReviewOf, waitsOnRun, type EndedReviews, type RunEnd } from './outcomes';
import { runWithoutProtectedWarning } from './selfEdits';

/** The parts of the review controller this module acts through. */
export interface RunEndHost {
  all(): TrackedSession[];
  ended: EndedReviews;
  sessionFor(uri: vscode.Uri): TrackedSession | undefined;
  skillPathOf(runId: string, outDir: string): string | undefined;
  /** Ends a review on screen, taking out the lines only it put in the document. */
  retire(t: TrackedSession): Promise<void>;
  /** Drops a finished review without touching the document. */
  forget(t: TrackedSession): void;
  schedule(uri: vscode.Uri): void;
}

/** Reviews still waiting on the ended run turn inert; the lens of an ended review says why. */
export async function endRun(host: RunEndHost, runId: string, how: RunEnd): Promise<void> {
  for (const t of host.all()) {
    const { init } = t.session;
    if ((init.runId !== runId && init.runDir !== runId) || !waitsOnRun(t.session)) continue;
    // Every file of a skill folder's candidate still waiting says so; retire takes them all.
    for (const m of membersOf(t))
      if (waitsOnRun(m.session)) host.ended.set(m.uri.toString(), endedReviewOf(m.session, how));
    await host.retire(t);
  }
}

/** A new run of a skill replaces an earlier run's verdict, review or ended notice on it. */
export async function replaceOtherRuns(host: RunEndHost, runId: string, outDir: string): Promise<void> {
  const skillPath = host.skillPathOf(runId, outDir);
  if (!skillPath) return;
  const uri = vscode.Uri.file(skillPath);
  if (host.ended.clear(uri.toString())) host.schedule(uri);
  const t = host.sessionFor(uri);
  if (t && t.session.init.runId !== runId && t.session.init.runDir !== outDir) await host.retire(t);
}

/**
 * The person accepted, in the diff view, a whole candidate the editor could not place: write it
 * (into each file of a skill folder's candidate whose review could not place every change).
 */
export async function writeCandidate(host: RunEndHost, t: TrackedSession): Promise<boolean> {
  const unplaced = membersOf(t).filter((m) => m.session.withFate('conflict').length > 0);
  let ok = true;
  for (const m of unplaced) ok = (await writeOneCandidate(host, m)) && ok;
  return ok;
}

async function writeOneCandidate(host: RunEndHost, t: TrackedSession): Promise<boolean> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri.toString());
  if (!doc || t.session.phase !== 'done') return false;
  // The review is over; the whole-text edit must not read as the person typing over it.
  host.forget(t);
  const eol = doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n';
  const edit = new vscode.WorkspaceEdit();
  edit.replace(
    doc.uri,
    new vscode.Range(0, 0, doc.lineCount, 0),
    t.session.init.candidateText.replace(/\r?\n/g, eol),
  );
  return runWithoutProtectedWarning(doc.uri, () => vscode.workspace.applyEdit(edit));
}
