/**
 * Shared setup for the review integration tests: a real `sim` run trained in-process into a temp
 * folder (real run files, real events), and small helpers over the review's inspect command.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StartResult } from '../../../src/protocol/engine';
import type { EngineEvent } from '../../../src/protocol/events';
import { prepareRun, trainPrepared } from '../../../src/engine/run';
import { stubWindow } from './support';

export type Ready = Extract<EngineEvent, { type: 'candidate/ready' }>;
export type Verdict = Extract<EngineEvent, { type: 'gate/verdict' }>;

export interface SimRun {
  dir: string;
  skillPath: string;
  runDir: string;
  events: EngineEvent[];
  /** Skill text before step `n` (the run's `skills/skill_v<n-1>.md`). */
  previousOf(step: number): string;
  candidateOf(step: number): string;
  ready(step: number): Ready;
  verdict(step: number): Verdict;
  cleanup(): void;
}

function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.all.find(
    (e) => (e.packageJSON as { name?: string } | undefined)?.name === 'skillopt',
  );
  if (!ext) throw new Error('the SkillOpt extension is not loaded');
  return ext;
}

export function repoRoot(): string {
  return extension().extensionPath;
}

/** Activates SkillOpt (tests may start before its activation event fires). */
export async function activate(): Promise<void> {
  await extension().activate();
}

/** The bundled house-style example (skill, tasks, config) copied into `dir`; returns its SKILL.md. */
export function copyHouseStyle(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const example = join(repoRoot(), 'examples', 'house-style');
  for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml']) copyFileSync(join(example, f), join(dir, f));
  return join(dir, 'SKILL.md');
}

/** Trains the bundled house-style example with the sim backend into a fresh folder. */
export async function simRun(): Promise<SimRun> {
  await activate();
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-review-it-'));
  copyHouseStyle(dir);
  const runDir = join(dir, 'run');
  const prepared = prepareRun({
    configPath: join(dir, 'skillopt.yaml'),
    outDir: runDir,
    overrides: ['cache.enabled=false'],
  });
  const events: EngineEvent[] = [];
  await trainPrepared(prepared, {
    emit: (e) => events.push(e),
    signal: new AbortController().signal,
    resumeCommand: 'resume',
  });
  const pad = (n: number): string => String(n).padStart(4, '0');
  const ready = (step: number): Ready => {
    const e = events.find(
      (x): x is Ready => x.type === 'candidate/ready' && x.step === step && x.origin === 'step',
    );
    if (!e) throw new Error(`no candidate for step ${step}`);
    return e;
  };
  return {
    dir,
    skillPath: join(dir, 'SKILL.md'),
    runDir,
    events,
    previousOf: (step) => readFileSync(join(runDir, 'skills', `skill_v${pad(step - 1)}.md`), 'utf8'),
    candidateOf: (step) => readFileSync(ready(step).candidatePath, 'utf8'),
    ready,
    verdict: (step) => {
      const e = events.find(
        (x): x is Verdict => x.type === 'gate/verdict' && x.step === step && x.origin === 'step',
      );
      if (!e) throw new Error(`no verdict for step ${step}`);
      return e;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export { askBeforeGate } from '../../support/reviewEvents';

/** First step whose gate verdict matches. */
export function stepWhere(run: SimRun, accepted: boolean): number {
  const v = run.events.find(
    (e): e is Verdict =>
      e.type === 'gate/verdict' && e.origin === 'step' && e.action.startsWith('accept') === accepted,
  );
  if (!v) throw new Error(`the sim run has no ${accepted ? 'accepted' : 'rejected'} step`);
  return v.step;
}

/** UI state reaches the extension host asynchronously: poll. */
export async function waitFor<T>(
  fn: () => T | PromiseLike<T>,
  what: string,
  ms = 8000,
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: T | undefined;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last as NonNullable<T>;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

export interface InspectRow {
  uri: string;
  key: string;
  runId: string;
  step: number;
  origin: string;
  mode: string;
  live: boolean;
  phase: string;
  waiting: boolean;
  perEdit: boolean;
  owners: Array<{ id: string; fate: string; decidedBy?: string; reason?: string; line?: number }>;
  segments: Array<{ owner: string; kind: string; start: number; lines: number; present: boolean }>;
  drawn?: { added: number[][]; removed: number[][]; accepted: number[][]; rejected: number[] };
  sent: Array<{ params: Record<string, unknown>; outcome: string; detail?: string }>;
}

export async function inspect(uri: vscode.Uri): Promise<InspectRow | undefined> {
  const rows = await vscode.commands.executeCommand<InspectRow[]>('skillopt.review.inspect', uri.toString());
  return rows[0];
}

export async function lensTitles(uri: vscode.Uri): Promise<vscode.CodeLens[]> {
  return (
    (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? []
  );
}

/** The titles of a document's CodeLenses, in order. */
export async function lensTitleTexts(uri: vscode.Uri): Promise<string[]> {
  return (await lensTitles(uri)).map((l) => l.command?.title ?? '');
}

export async function openSkill(path: string): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  return vscode.window.showTextDocument(doc, { preview: false });
}

/** Replaces the whole document text (as a person pasting would). */
export async function setText(editor: vscode.TextEditor, text: string): Promise<void> {
  const doc = editor.document;
  if (doc.getText() === text) return;
  const ok = await editor.edit((b) => b.replace(new vscode.Range(0, 0, doc.lineCount, 0), text));
  if (!ok) throw new Error('edit refused');
  // Its change event can trail the promise; a review opened before it arrives would see it.
  await waitFor(() => doc.getText() === text, 'the new text');
  await new Promise((r) => setTimeout(r, 100));
}

/** Feeds one engine event through the review, as if it came from the engine. */
export async function feed(
  runId: string,
  event: EngineEvent,
  hints: { skillPath: string; mode: string; live: boolean; runDir?: string },
): Promise<void> {
  await vscode.commands.executeCommand('skillopt.review.handleEvent', { runId, event, ...hints });
}

/** Reverts every dirty file and closes every editor (reviews leave documents dirty on purpose). */
export async function closeAll(): Promise<void> {
  const dirty = (): vscode.TextDocument[] =>
    vscode.workspace.textDocuments.filter((d) => d.isDirty && d.uri.scheme === 'file');
  // A revert reaches the extension host after the command returns, and a review that ends just then
  // (its run stopped) may edit the document once more: revert until nothing is left dirty.
  await waitFor(async () => {
    const left = dirty();
    for (const doc of left) {
      await vscode.window.showTextDocument(doc, { preview: false });
      await vscode.commands.executeCommand('workbench.action.files.revert');
    }
    return left.length === 0 ? true : undefined;
  }, 'reverted documents');
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await new Promise((r) => setTimeout(r, 100));
}

/** A skill file of a test's own in the sim run's folder, holding `text`, open in an editor. */
export async function skillWith(
  run: SimRun,
  name: string,
  text: string,
): Promise<{ path: string; uri: vscode.Uri; editor: vscode.TextEditor }> {
  const path = join(run.dir, `${name}.md`);
  writeFileSync(path, text);
  const editor = await openSkill(path);
  return { path, uri: editor.document.uri, editor };
}

/**
 * Settings for a suite of `auto` reviews: the skill file follows the run (skillopt.followRun) and
 * auto-save is off, so what saves the file is the review. Returns the restore function.
 */
export async function followRunSettings(follow: boolean): Promise<() => Promise<void>> {
  const skillopt = vscode.workspace.getConfiguration('skillopt');
  const files = vscode.workspace.getConfiguration('files');
  await skillopt.update('followRun', follow, vscode.ConfigurationTarget.Global);
  await files.update('autoSave', 'off', vscode.ConfigurationTarget.Global);
  return async () => {
    await skillopt.update('followRun', undefined, vscode.ConfigurationTarget.Global);
    await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
  };
}

/** Optimize This Skill on `skill` in `human-first` mode (no cache): the run pauses for the person. */
export async function startHumanFirstRun(skill: vscode.Uri): Promise<StartResult> {
  const started = await vscode.commands.executeCommand<StartResult | undefined>(
    'skillopt.optimizeSkill',
    skill,
    {
      confirm: false,
      overrides: ['review.mode=human-first', 'cache.enabled=false'],
    },
  );
  if (!started) throw new Error('no run started');
  return started;
}

/** Stops a run left waiting for the person: it would hold the engine for the suites after it. */
export async function stopRun(
  runs: { get(id: string): { live?: { status: string } } | undefined },
  id: string,
): Promise<void> {
  await vscode.commands.executeCommand('skillopt.stopRun', id);
  await waitFor(
    () => (runs.get(id)?.live?.status === 'running' ? undefined : true),
    'the run to end after Stop',
    90_000,
  );
}

/**
 * Mocha hooks for a suite about the person's own saves and clicks: auto-save off for the suite
 * (it would write the buffer by itself), and after each test the window's stubs restored and
 * every editor closed. Call inside `describe`; returns the stubs.
 */
export function personSuite(): ReturnType<typeof stubWindow> {
  const stubs = stubWindow();
  const files = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('files');
  before(async () => {
    await files().update('autoSave', 'off', vscode.ConfigurationTarget.Global);
  });
  afterEach(async () => {
    stubs.restore();
    await closeAll();
  });
  after(async () => {
    await files().update('autoSave', undefined, vscode.ConfigurationTarget.Global);
  });
  return stubs;
}

/** The review of the step the run waits for, once its lines are in the document. */
export function reviewShown(uri: vscode.Uri, what = 'the review to be shown'): Promise<InspectRow> {
  return waitFor(async () => {
    const r = await inspect(uri);
    return r?.waiting && r.drawn?.added.length ? r : undefined;
  }, what);
}
