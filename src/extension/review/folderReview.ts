/**
 * Beginning a candidate's review in the editor. For a skill folder's candidate, besides SKILL.md's
 * review, each other file the candidate changes or adds gets a review of its own on its own
 * document (a new file is an untitled document at its path, so nothing reaches the disk until the
 * person saves it). The reviews form one group (reviewGroup.ts): whole-candidate actions act on
 * every file and the engine hears one decision.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { lineHunks } from '../../engine/skill/hunks';
import type { PackageChange } from '../../engine/skill/package/changes';
import type { CandidateContentProvider } from './candidateContent';
import type { DocumentSync } from './documentSync';
import { pendingInsertions } from './documentEdits';
import { editsOfFile } from './layout';
import { ReviewGroup } from './reviewGroup';
import { membersOf, type ReviewRegistry, type TrackedSession } from './registry';
import { saveFollowed, savesAsItFollows } from './followRun';
import { closeSessionDiffs } from './diffTabs';
import { verdictOf, type ReviewContext } from './reviewContext';
import { otherFilesOfCandidate, type CandidateReady, type GateVerdictEvent } from './runFiles';
import { candidateName } from '../../protocol/webview';
import { ReviewSession, type Transition, type Verdict } from './session';

export type FileGroup = ReviewGroup<TrackedSession, CandidateReady>;

/** What the folder reviews act through (the controller's registry, document sync and diff texts). */
export interface FolderReviewHost {
  registry: ReviewRegistry;
  docs: DocumentSync;
  content: CandidateContentProvider;
  retire(t: TrackedSession): Promise<void>;
  schedule(uri: vscode.Uri): void;
  fail(what: string, err: unknown): void;
}

/**
 * The files other than SKILL.md a candidate changes (`candidate_files.json`); none for a
 * single-file skill. A record that cannot be read is said, and SKILL.md alone is reviewed.
 */
export function otherFilesOf(host: FolderReviewHost, ready: CandidateReady): PackageChange[] {
  try {
    return otherFilesOfCandidate(ready.candidatePath);
  } catch (err) {
    host.fail(`reading the changed files of ${ready.candidatePath}`, err);
    void vscode.window.showWarningMessage(
      `SkillOpt: the changed files of ${candidateName(ready.origin, ready.step, ready.epoch)} could not be read, so only SKILL.md is reviewed; see the SkillOpt log.`,
    );
    return [];
  }
}

/** The document of a skill folder's file: the file itself, or an untitled one at its path when new. */
async function fileDocument(skillDir: string, path: string): Promise<vscode.TextDocument> {
  const fsPath = join(skillDir, ...path.split('/'));
  const uri = vscode.Uri.file(fsPath);
  return vscode.workspace.openTextDocument(existsSync(fsPath) ? uri : uri.with({ scheme: 'untitled' }));
}

/** SKILL.md's review takes the edits no other file's review shows (it lists them as not applied). */
function primaryEdits(ready: CandidateReady, files: readonly PackageChange[]): CandidateReady['edits'] {
  const others = new Set(files.map((f) => f.path));
  return ready.edits.filter((e) => e.file === undefined || !others.has(e.file));
}

/** What a review of a candidate starts from (the controller has read and checked all of it). */
export interface ReviewStart {
  runId: string;
  event: CandidateReady;
  run: ReviewContext;
  /** The skill document (SKILL.md of a folder) open in the editor. */
  doc: vscode.TextDocument;
  runDir: string;
  previous: string;
  candidate: string;
  history?: { verdict?: GateVerdictEvent; reviewNow: boolean };
}

/**
 * Lays a candidate onto the skill document, and, for a skill folder's candidate, onto each other
 * file it changes (openFileReviews): the reviews are registered and begun per their mode.
 */
export async function beginReview(host: FolderReviewHost, r: ReviewStart): Promise<TrackedSession> {
  const { event, run, doc, history } = r;
  const files = otherFilesOf(host, event);
  const session = ReviewSession.create({
    runId: r.runId,
    runDir: r.runDir,
    step: event.step,
    epoch: event.epoch,
    origin: event.origin,
    mode: run.mode,
    live: run.live,
    edits: files.length ? primaryEdits(event, files) : event.edits,
    hunks: event.hunks,
    previousText: r.previous,
    candidateText: r.candidate,
    docText: doc.getText(),
    candidatePath: event.candidatePath,
    ...(history?.reviewNow ? { reviewNow: true } : {}),
  });
  if (history?.verdict) session.verdict = verdictOf(history.verdict);
  const tracked: TrackedSession = {
    session,
    uri: doc.uri,
    sent: [],
    fileName: doc.uri.path.split('/').pop() ?? 'SKILL.md',
    ...(savesAsItFollows(run, doc, history?.reviewNow === true) ? { savesAsItFollows: true } : {}),
  };
  host.registry.set(tracked);
  await host.docs.run(tracked, session.begin());
  if (files.length) await openFileReviews(host, tracked, event, files, session.verdict);
  return tracked;
}

/**
 * Opens a review on every other changed file of `primary`'s candidate and groups them with it.
 * Each file's review starts like SKILL.md's (same run, mode and phase rules).
 */
async function openFileReviews(
  host: FolderReviewHost,
  primary: TrackedSession,
  ready: CandidateReady,
  files: readonly PackageChange[],
  verdict?: Verdict,
): Promise<void> {
  const group: FileGroup = new ReviewGroup(ready);
  primary.group = group;
  group.add(primary);
  const skillDir = dirname(primary.uri.fsPath);
  const { init } = primary.session;
  for (const f of files) {
    const doc = await fileDocument(skillDir, f.path);
    const old = host.registry.get(doc.uri);
    if (old) await host.retire(old);
    if (init.runDir) host.content.remember(init.runDir, init.step, init.origin, f.before, f.after, f.path);
    const session = ReviewSession.create({
      ...init,
      file: f.path,
      edits: editsOfFile(ready.edits, f.path),
      hunks: lineHunks(f.before, f.after),
      previousText: f.before,
      candidateText: f.after,
      docText: doc.getText(),
    });
    if (verdict) session.verdict = verdict;
    const member: TrackedSession = {
      session,
      uri: doc.uri,
      // One answer for the candidate: every file's review shows the same sent decisions.
      sent: primary.sent,
      fileName: f.path,
      group,
      ...(primary.savesAsItFollows && !doc.isDirty ? { savesAsItFollows: true } : {}),
    };
    host.registry.set(member);
    group.add(member);
    await host.docs.run(member, session.begin());
  }
}

/**
 * Applies one file's transition. A grouped file's decision is held until no file of the candidate
 * asks the person anything; then the whole candidate's decision goes out once.
 */
async function runInGroup(host: FolderReviewHost, t: TrackedSession, tr: Transition): Promise<void> {
  const decision = tr.send ?? tr.record;
  if (!t.group || !decision) return host.docs.run(t, tr);
  await host.docs.run(t, { ops: tr.ops });
  const merged = t.group.hold(t, decision, tr.send !== undefined);
  if (!merged) return;
  await host.docs.run(t, merged.send ? { ops: [], send: merged.params } : { ops: [], record: merged.params });
  for (const m of t.group.members) {
    // A file with nothing left to decide (SKILL.md unchanged, say) has no review to keep showing.
    if (m.session.phase === 'review') m.session.dismiss();
    host.schedule(m.uri);
  }
}

/** The candidate's reviews are all decided (or dismissed). */
function allDone(t: TrackedSession): boolean {
  return membersOf(t).every((m) => m.session.phase === 'done');
}

/**
 * What a whole-candidate action acts on: every file of a skill folder's candidate at the same point
 * of its review as `t` (a file the person already decided keeps its answer, sent with the others).
 */
export function wholeCandidateReviews(t: TrackedSession): TrackedSession[] {
  const phase = t.session.phase;
  return membersOf(t).filter((m) => m === t || m.session.phase === phase);
}

/**
 * Applies one action to reviews in turn (a grouped file's decision held until all are decided);
 * once every file is decided, the step's diff tabs and an unused new file's document go.
 */
export async function transitionReviews(
  host: FolderReviewHost,
  ts: readonly TrackedSession[],
  make: (s: ReviewSession) => Transition,
): Promise<void> {
  for (const t of ts) {
    await runInGroup(host, t, make(t.session));
    await saveFollowed(t);
  }
  const t = ts[0];
  if (t && allDone(t)) {
    // A decided step's diff tabs go: none of them may act on the skill any more.
    await closeSessionDiffs(t.session.init);
    await closeUnusedNewFiles(membersOf(t));
  }
}

/**
 * A file the candidate would have added whose review ended without it (rejected, replaced): its
 * empty unsaved document is reverted and closed, so VS Code never offers to save an empty file.
 */
export async function closeUnusedNewFiles(ts: readonly TrackedSession[]): Promise<void> {
  for (const m of ts) {
    if (m.uri.scheme !== 'untitled' || m.session.phase !== 'done') continue;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === m.uri.toString());
    if (!doc || doc.getText() !== '') continue;
    await vscode.window.showTextDocument(doc, { preview: true });
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
}

/** Ends reviews on screen: each takes out the lines only it put in its document. */
export async function retireReviews(host: FolderReviewHost, ts: readonly TrackedSession[]): Promise<void> {
  for (const m of ts) {
    host.registry.delete(m.uri);
    const ops = m.session.phase === 'review' ? pendingInsertions(m.session) : [];
    m.session.dismiss();
    await host.docs.applyOps(m, ops);
    host.schedule(m.uri);
  }
  await closeUnusedNewFiles(ts);
}

/**
 * One file of a grouped review lost its document or its lines (closed, reverted, saved): the whole
 * candidate is set aside, the other files' undecided lines go, and a live review waits under
 * SKILL.md's path to be rebuilt whole (reopening SKILL.md, or the run's "waiting" surfaces).
 */
export async function setAsideGroup(host: FolderReviewHost, t: TrackedSession, open: boolean): Promise<void> {
  const group = t.group as FileGroup;
  const members = [...group.members];
  const primary = members.find((m) => m.session.init.file === undefined);
  // `t`'s document already lost its lines (or is gone): only the others' are taken out.
  host.registry.delete(t.uri);
  t.session.dismiss();
  host.schedule(t.uri);
  await retireReviews(
    host,
    members.filter((m) => m !== t),
  );
  if (open && primary?.session.init.live) {
    const { init } = primary.session;
    host.registry.parked.parkSession(primary.uri.fsPath, group.ready, init, primary.request);
  }
}
