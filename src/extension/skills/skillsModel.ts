/**
 * The workspace's skills, kept current without polling: VS Code's workspace watchers (SKILL.md and
 * evals files anywhere, folders created or deleted on the way to a location), direct watches on
 * each location and the folders in it (folderWatches.ts), and changes of the workspace folders and
 * of `chat.agentSkillsLocations`. Each skill's latest run comes from the Runs model, so a run's
 * score shows on its skill while it trains.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, sep } from 'node:path';
import * as vscode from 'vscode';
import { errorDetail } from '../log';
import type { RunView } from '../runs/liveState';
import type { RunsModel } from '../runs/runsModel';
import {
  childFolders,
  discoverSkills,
  readSkill,
  SKILLS_LOCATIONS_SETTING,
  skillLocations,
  type SkillInfo,
} from './discovery';
import { SKILL_FILE_NAME } from '../../engine/skill/lint';
import { FolderWatches } from './folderWatches';
import type { LastRun } from './skillNodes';
import { latestRunBySkill } from './skillRuns';

/** Changes come in bursts (a folder copied, a run writing): one rescan after they settle. */
const settleMs = 150;

export class SkillsModel implements vscode.Disposable {
  /** The skills the locations hold, then every skill listed (those plus trained ones). */
  private found: SkillInfo[] = [];
  private skills: SkillInfo[] = [];
  /** Trained skills outside the locations, re-read only by a rescan. */
  private trained = new Map<string, SkillInfo>();
  private locations: string[] = [];
  /** The locations that exist and the folders inside them. */
  private locationFolders: string[] = [];
  private latest = new Map<string, { run: RunView; at?: number }>();
  /** Folders whose creation or deletion adds or removes a skill or a location. */
  private watchedPaths: string[] = [];
  private readonly folderWatches = new FolderWatches(
    () => this.schedule(true),
    (dir, err) => this.log.debug(`[skills] stopped watching ${dir}: ${err.message}`),
  );
  private readonly said = new Set<string>();
  private problems: string[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private rescanDue = false;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly runs: RunsModel,
  ) {
    const files = vscode.workspace.createFileSystemWatcher(`**/{${SKILL_FILE_NAME},evals.json}`);
    // A folder created or deleted is reported once, not per file inside it (a SKILL.md written
    // right after its folder can go unreported): watch creations and deletions of any path.
    const folders = vscode.workspace.createFileSystemWatcher('**/*', false, true, false);
    const onFolder = (uri: vscode.Uri): void => {
      if (this.affects(uri.fsPath)) rescan();
    };
    const rescan = (): void => this.schedule(true);
    this.disposables.push(
      files,
      files.onDidCreate(rescan),
      files.onDidChange(rescan),
      files.onDidDelete(rescan),
      folders,
      folders.onDidCreate(onFolder),
      folders.onDidDelete(onFolder),
      vscode.workspace.onDidChangeWorkspaceFolders(rescan),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SKILLS_LOCATIONS_SETTING)) rescan();
      }),
      // Runs only change the scores and which skills were trained: no need to read the locations again.
      runs.onDidChange(() => this.schedule(false)),
    );
    this.rescan();
  }

  /** Every skill with its latest run. */
  list(): { skill: SkillInfo; last?: LastRun }[] {
    return this.skills.map((skill) => {
      const last = this.latest.get(skill.path);
      return last ? { skill, last } : { skill };
    });
  }

  /** What is wrong with chat.agentSkillsLocations, for the view's message. */
  settingProblems(): readonly string[] {
    return this.problems;
  }

  /** Reads every location again now (the watchers call it after changes settle). */
  rescan(): void {
    const { locations, problems } = skillLocations(this.roots(), this.setting(), homedir());
    this.problems = problems;
    for (const p of problems) this.sayOnce(p);
    try {
      this.found = discoverSkills(locations);
    } catch (err) {
      this.found = [];
      this.log.warn(`[skills] cannot list the skill folders: ${errorDetail(err)}`);
    }
    this.locations = locations.map((l) => l.dir);
    this.locationFolders = this.locations
      .flatMap((l) => [l, ...childFolders(l)])
      .filter((d) => existsSync(d));
    this.trained.clear();
    this.updateRuns();
    this.log.debug(`[skills] ${this.skills.length} skill(s) in ${locations.length} location(s)`);
  }

  /**
   * Each skill's latest run, and the trained SKILL.md files no location holds (listed under the
   * host "trained"). Runs change often while one trains: this reads no location.
   */
  private updateRuns(): void {
    this.latest = latestRunBySkill(this.runs.list(), (dir) => this.runs.origin(dir)?.skillPath);
    const known = new Set(this.found.map((s) => s.path));
    const trained = [...this.latest.keys()]
      .filter((path) => !known.has(path) && path.endsWith(`${sep}${SKILL_FILE_NAME}`))
      .map((path) => this.trained.get(path) ?? readSkill(path, 'trained'));
    this.trained = new Map(trained.map((s) => [s.path, s]));
    this.skills = [...this.found, ...trained];
    this.watchedPaths = [...this.locations, ...this.skills.map((s) => s.folder)];
    this.watchFolders();
  }

  private roots(): string[] {
    return (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === 'file')
      .map((f) => f.uri.fsPath);
  }

  private setting(): unknown {
    return vscode.workspace.getConfiguration().get<unknown>(SKILLS_LOCATIONS_SETTING);
  }

  private schedule(rescan: boolean): void {
    this.rescanDue ||= rescan;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.rescanDue) this.rescan();
      else this.updateRuns();
      this.rescanDue = false;
      this.changed.fire();
    }, settleMs);
  }

  /** A location, a skill folder, a folder holding one, or a new entry of a location. */
  private affects(path: string): boolean {
    return (
      this.watchedPaths.some((p) => p === path || p.startsWith(path + sep)) ||
      this.locations.includes(dirname(path))
    );
  }

  /** Each location, each folder inside one (a skill or not yet), and each trained skill's folder. */
  private watchFolders(): void {
    this.folderWatches.set([...this.locationFolders, ...[...this.trained.values()].map((s) => s.folder)]);
  }

  private sayOnce(message: string): void {
    if (this.said.has(message)) return;
    this.said.add(message);
    this.log.warn(`[skills] ${message}`);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.folderWatches.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
