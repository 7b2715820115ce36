/**
 * Every run the workspace has: folders written by this extension, by the CLI and by the Python
 * reference, read with the engine's runReader, plus live state folded from the engine's events.
 * `onDidChange(runId)` fires for one run (throttled, so a burst of progress events redraws once);
 * `onDidChange(undefined)` when the set of runs changed.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import { isRunFolder, listRunFolders, readRunFolder, type RunFolder } from '../../engine/store/runReader';
import { defaultRunsRoot, RUN_FILE } from '../../engine/store/layout';
import { ENGINE_ID } from '../../protocol/vocabulary';
import { runsFolders } from '../config';
import { runOriginsStateKey } from '../constants';
import { errorDetail } from '../log';
import { applyEvent, isActive, markInterrupted, mergeLive, type LiveState, type RunView } from './liveState';

export interface RunEventMessage {
  runId: string;
  seq: number;
  event: EngineEvent;
}

/** Where a run came from, remembered so Resume can find its config again. */
export interface RunOrigin {
  configPath: string;
  skillPath?: string;
  /**
   * The `--cfg-options` the run was started with (secrets left out), so Resume trains under the
   * same config: the engine refuses a resume whose config differs.
   */
  overrides?: string[];
}

/** Redraws of one run at most this often; events can arrive hundreds per second. */
const redrawMs = 150;
/** Re-reads of a folder wait for writes to settle. */
const rereadMs = 250;

/** Events after which the folder on disk has new content worth reading. */
const folderEvents = new Set<EngineEvent['type']>([
  'run/started',
  'baseline/scored',
  'step/finished',
  'epoch/finished',
  'run/finished',
  'run/stopped',
  'run/failed',
]);

export class RunsModel implements vscode.Disposable {
  private readonly folders = new Map<string, RunFolder>();
  private readonly live = new Map<string, LiveState>();
  private readonly redraws = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly rereads = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly changed = new vscode.EventEmitter<string | undefined>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];
  private scanning: Promise<void> | undefined;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly state: vscode.Memento,
  ) {
    const watched = [RUN_FILE.history, RUN_FILE.state, RUN_FILE.summary, RUN_FILE.lock];
    const watcher = vscode.workspace.createFileSystemWatcher(`**/{${watched.join(',')}}`);
    const onFile = (uri: vscode.Uri): void => this.scheduleReread(dirname(uri.fsPath), true);
    this.disposables.push(
      watcher,
      watcher.onDidCreate(onFile),
      watcher.onDidChange(onFile),
      watcher.onDidDelete(onFile),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.refresh()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('skillopt.runsFolders')) void this.refresh();
      }),
    );
  }

  list(): RunView[] {
    const dirs = new Set([...this.folders.keys(), ...this.live.keys()]);
    return [...dirs].map((d) => this.get(d)).filter((r): r is RunView => r !== undefined);
  }

  /** A run by id (its folder path). Live runs whose folder has no files yet are included. */
  get(runId: string): RunView | undefined {
    const folder = this.folders.get(runId);
    const live = this.live.get(runId);
    if (!folder && !live) return undefined;
    const base: RunFolder = folder ?? {
      dir: runId,
      name: runId.split(/[\\/]/).pop() ?? runId,
      status: 'running',
      writer: ENGINE_ID,
      config: {},
      history: [],
      epochs: [],
    };
    return mergeLive(base, live);
  }

  activeRuns(): RunView[] {
    return this.list().filter((r) => isActive(r.live));
  }

  origin(runId: string): RunOrigin | undefined {
    return this.origins()[runId];
  }

  async rememberOrigin(runId: string, origin: RunOrigin): Promise<void> {
    await this.state.update(runOriginsStateKey, { ...this.origins(), [runId]: origin });
  }

  private origins(): Record<string, RunOrigin> {
    const v = this.state.get<unknown>(runOriginsStateKey);
    return typeof v === 'object' && v !== null ? (v as Record<string, RunOrigin>) : {};
  }

  /** Folders to scan: workspace folders, `<config dir>/.skillopt/runs`, settings, known origins. */
  private async roots(): Promise<string[]> {
    const roots = new Set<string>();
    const folders = vscode.workspace.workspaceFolders ?? [];
    for (const f of folders) if (f.uri.scheme === 'file') roots.add(f.uri.fsPath);
    const first = folders[0]?.uri.fsPath;
    for (const r of runsFolders()) {
      if (isAbsolute(r)) roots.add(r);
      else if (first) roots.add(resolve(first, r));
    }
    try {
      const configs = await vscode.workspace.findFiles('**/skillopt*.{yaml,yml}', '**/node_modules/**', 200);
      for (const c of configs) roots.add(defaultRunsRoot(dirname(c.fsPath)));
    } catch (err) {
      this.log.warn(`[runs] searching for configs failed: ${errorDetail(err)}`);
    }
    for (const dir of Object.keys(this.origins())) roots.add(dirname(dir));
    return [...roots];
  }

  /** Rescans every root; coalesces concurrent calls. */
  refresh(): Promise<void> {
    this.scanning ??= this.scan().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  private async scan(): Promise<void> {
    const found = new Map<string, RunFolder>();
    for (const root of await this.roots()) {
      let dirs: string[] = [];
      try {
        dirs = listRunFolders(root);
      } catch (err) {
        this.log.warn(`[runs] cannot list ${root}: ${errorDetail(err)}`);
      }
      for (const dir of dirs) {
        if (found.has(dir)) continue;
        const run = this.read(dir);
        if (run) found.set(dir, run);
      }
    }
    this.folders.clear();
    for (const [k, v] of found) this.folders.set(k, v);
    this.log.debug(`[runs] ${found.size} run folder(s) found`);
    this.changed.fire(undefined);
  }

  private read(dir: string): RunFolder | undefined {
    try {
      return readRunFolder(dir);
    } catch (err) {
      this.log.warn(`[runs] cannot read ${dir}: ${errorDetail(err)}`);
      return undefined;
    }
  }

  /** Re-reads one folder now; adds it when it became a run folder, drops it when it vanished. */
  reread(dir: string): void {
    const known = this.folders.has(dir);
    if (!existsSync(dir) || !isRunFolder(dir)) {
      if (known) {
        this.folders.delete(dir);
        this.changed.fire(undefined);
      }
      return;
    }
    const run = this.read(dir);
    if (!run) return;
    this.folders.set(dir, run);
    if (known) this.scheduleRedraw(dir);
    else this.changed.fire(undefined);
  }

  private scheduleReread(dir: string, onlyKnownOrNew: boolean): void {
    if (onlyKnownOrNew && !this.folders.has(dir) && !this.live.has(dir) && !isRunFolder(dir)) return;
    if (this.rereads.has(dir)) return;
    this.rereads.set(
      dir,
      setTimeout(() => {
        this.rereads.delete(dir);
        this.reread(dir);
      }, rereadMs),
    );
  }

  private scheduleRedraw(runId: string): void {
    if (this.redraws.has(runId)) return;
    this.redraws.set(
      runId,
      setTimeout(() => {
        this.redraws.delete(runId);
        this.changed.fire(runId);
      }, redrawMs),
    );
  }

  /** Folds a live event in; the folder is re-read after events that change it. */
  applyEvent(msg: RunEventMessage): void {
    // Eval-only requests stream under `eval:<skill>` ids; they are not runs.
    if (msg.runId.startsWith('eval:')) return;
    const isNew = !this.live.has(msg.runId) && !this.folders.has(msg.runId);
    this.live.set(msg.runId, applyEvent(this.live.get(msg.runId), msg.seq, msg.event));
    if (isNew) this.changed.fire(undefined);
    else this.scheduleRedraw(msg.runId);
    if (folderEvents.has(msg.event.type)) this.scheduleReread(msg.runId, false);
  }

  /** The engine died: every run it was training is interrupted. Returns their ids. */
  markEngineGone(why: string): string[] {
    const hit: string[] = [];
    for (const [id, state] of this.live) {
      if (!isActive(state)) continue;
      this.live.set(id, markInterrupted(state, why));
      hit.push(id);
      this.scheduleReread(id, false);
    }
    if (hit.length) this.changed.fire(undefined);
    return hit;
  }

  dispose(): void {
    for (const t of [...this.redraws.values(), ...this.rereads.values()]) clearTimeout(t);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
