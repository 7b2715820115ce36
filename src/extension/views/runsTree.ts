/**
 * The Runs view. Nodes come from the pure mapping in runs/treeNodes.ts; this adapter keeps one
 * element object per node id, because VS Code tracks tree elements by identity: redrawing a single
 * run then updates only that run's rows, and expansion survives live updates without flicker.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import { EVAL_FILE } from '../../engine/store/layout';
import { stepArtifacts, type StepArtifacts } from '../../engine/store/runReader';
import { gateNodes } from '../runs/gateNodes';
import {
  EVALS_DIR,
  evaluationChildren,
  evaluationNode,
  evaluationsGroupNode,
  evaluationsIn,
  readEvaluation,
  runEvaluations,
  type EvaluationView,
} from '../runs/evalNodes';
import { ContextKeys, runsViewId } from '../constants';
import { groupRunsBySkill, SettingKeys } from '../config';
import type { Ctx } from '../ctx';
import { runsBySkill, skillGroupId, skillGroupNodes, type SkillGroup } from '../runs/skillGroups';
import type { RunView } from '../runs/liveState';
import {
  artifactNodes,
  epochNodes,
  runFileNodes,
  runNode,
  sortRuns,
  stepNodes,
  trajectoryNodes,
  type NodeSpec,
} from '../runs/treeNodes';

export interface RunsTreeElement {
  readonly id: string;
  spec: NodeSpec;
  parentId?: string;
}

export class RunsTreeProvider implements vscode.TreeDataProvider<RunsTreeElement>, vscode.Disposable {
  private readonly elements = new Map<string, RunsTreeElement>();
  private readonly changed = new vscode.EventEmitter<RunsTreeElement | RunsTreeElement[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  /** The workspace's eval-only output roots (`…/.skillopt/evals`), found and watched. */
  private readonly evalRoots = new Set<string>();

  constructor(private readonly ctx: Ctx) {
    // Evaluate writes `<config dir>/.skillopt/evals/<skill>_<split>_<time>/eval_summary.json`.
    const pattern = `**/${EVALS_DIR}/*/${EVAL_FILE.summary}`;
    const watcher = vscode.workspace.createFileSystemWatcher(pattern);
    const found = (uri: vscode.Uri): void => {
      this.evalRoots.add(dirname(dirname(uri.fsPath)));
      this.changed.fire(undefined);
    };
    watcher.onDidCreate(found);
    watcher.onDidChange(found);
    watcher.onDidDelete(() => this.changed.fire(undefined));
    void vscode.workspace.findFiles(pattern, '**/node_modules/**').then((uris) => uris.forEach(found));
    this.disposables.push(watcher);
    this.disposables.push(
      ctx.runs.onDidChange((runId) => {
        const el = runId ? this.elements.get(`run:${runId}`) : undefined;
        // VS Code redraws the element from getTreeItem(el), so its spec must be new before the event.
        const run = runId ? this.run(runId) : undefined;
        if (el && run) el.spec = runNode(run);
        // Its skill's row counts the runs training: redrawn with it.
        const group = el?.parentId ? this.groupElement(el.parentId) : undefined;
        this.changed.fire(el && group ? [el, group] : el);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`skillopt.${SettingKeys.groupRunsBySkill}`)) this.changed.fire(undefined);
      }),
    );
  }

  /** The element of a node, its spec and parent brought up to date (a run's parent changes with grouping). */
  private element(spec: NodeSpec, parentId: string | undefined): RunsTreeElement {
    let el = this.elements.get(spec.id);
    if (!el) {
      el = { id: spec.id, spec };
      this.elements.set(spec.id, el);
    } else {
      el.spec = spec;
    }
    if (parentId) el.parentId = parentId;
    else delete el.parentId;
    return el;
  }

  /** The runs by skill when the view shows them so: setting on and runs of more than one skill. */
  private groups(): SkillGroup[] | undefined {
    if (!groupRunsBySkill()) return undefined;
    return runsBySkill(this.ctx.runs.list(), (dir) => this.ctx.runs.origin(dir)?.skillPath);
  }

  /** A skill row with its spec recomputed (run counts change while runs train). */
  private groupElement(id: string): RunsTreeElement | undefined {
    const spec = skillGroupNodes(this.groups() ?? []).find((g) => g.id === id);
    return spec ? this.element(spec, undefined) : undefined;
  }

  private run(runId: string): RunView | undefined {
    return this.ctx.runs.get(runId);
  }

  private artifacts(run: RunView, step: number): StepArtifacts {
    return stepArtifacts(run.dir, step);
  }

  /** The specs under a node (or the runs at the root); exported for tests through getChildren. */
  childSpecs(parent?: NodeSpec): NodeSpec[] {
    if (!parent) {
      const evals = this.workspaceEvaluations();
      const groups = this.groups();
      return [
        ...(groups ? skillGroupNodes(groups) : sortRuns(this.ctx.runs.list()).map(runNode)),
        ...(evals.length ? [evaluationsGroupNode('', evals.length)] : []),
      ];
    }
    if (parent.kind === 'skillGroup')
      return (this.groups()?.find((g) => skillGroupId(g) === parent.id)?.runs ?? []).map(runNode);
    if (parent.kind === 'evaluations' && !parent.runId)
      return this.workspaceEvaluations().map((e) => evaluationNode(e, ''));
    if (parent.kind === 'evaluation' && parent.path) {
      const e = readEvaluation(parent.path);
      return e ? evaluationChildren(e, parent.runId) : [];
    }
    const run = this.run(parent.runId);
    if (!run) return [];
    switch (parent.kind) {
      case 'run': {
        const evals = runEvaluations(run.dir);
        return [
          ...epochNodes(run),
          ...gateNodes(run, evals.find((e) => e.summary.aa)?.summary.aa),
          ...runFileNodes(run, existsSync),
          ...(evals.length ? [evaluationsGroupNode(run.dir, evals.length)] : []),
        ];
      }
      case 'evaluations':
        return runEvaluations(run.dir).map((e) => evaluationNode(e, run.dir));
      case 'epoch':
        return parent.epoch !== undefined ? stepNodes(run, parent.epoch) : [];
      case 'step':
        return parent.step !== undefined
          ? artifactNodes(run, parent.step, this.artifacts(run, parent.step))
          : [];
      case 'trajectories':
        return parent.step !== undefined
          ? trajectoryNodes(run, parent.step, this.artifacts(run, parent.step))
          : [];
      default:
        return [];
    }
  }

  getChildren(parent?: RunsTreeElement): RunsTreeElement[] {
    return this.childSpecs(parent?.spec).map((s) => this.element(s, parent?.id));
  }

  getParent(el: RunsTreeElement): RunsTreeElement | undefined {
    return el.parentId ? this.elements.get(el.parentId) : undefined;
  }

  getTreeItem(el: RunsTreeElement): vscode.TreeItem {
    const s = el.spec;
    const state =
      s.collapsible === 'expanded'
        ? vscode.TreeItemCollapsibleState.Expanded
        : s.collapsible === 'collapsed'
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(s.label, state);
    item.id = s.id;
    if (s.description) item.description = s.description;
    if (s.tooltip) item.tooltip = s.tooltip;
    item.contextValue = s.contextValue;
    if (s.icon) {
      item.iconPath = new vscode.ThemeIcon(
        s.icon.id,
        s.icon.color ? new vscode.ThemeColor(s.icon.color) : undefined,
      );
    }
    if (s.path) item.resourceUri = vscode.Uri.file(s.path);
    // Read out as the row reads (a file row would otherwise be announced by its full path).
    item.accessibilityInformation = { label: s.description ? `${s.label}, ${s.description}` : s.label };
    if (s.command) item.command = s.command;
    return item;
  }

  /** An evaluation just written (its folder holds eval_summary.json): listed at once. */
  addEvaluation(dir: string): void {
    this.evalRoots.add(dirname(dir));
    this.changed.fire(undefined);
  }

  /** The workspace's evaluations, newest first. */
  private workspaceEvaluations(): EvaluationView[] {
    return [...this.evalRoots]
      .flatMap((root) => evaluationsIn(root))
      .sort((a, b) => b.at.getTime() - a.at.getTime());
  }

  /** The element of a run, creating it (and its skill's row) if the tree has not shown it yet. */
  runElement(runId: string): RunsTreeElement | undefined {
    const run = this.run(runId);
    if (!run) return undefined;
    const groups = this.groups();
    const group = groups?.find((g) => g.runs.some((r) => r.dir === runId));
    const parent = group
      ? this.element(
          skillGroupNodes(groups!).find((n) => n.id === skillGroupId(group))!,
          undefined,
        )
      : undefined;
    return this.element(runNode(run), parent?.id);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

export function registerRunsTree(ctx: Ctx): {
  provider: RunsTreeProvider;
  view: vscode.TreeView<RunsTreeElement>;
} {
  const provider = new RunsTreeProvider(ctx);
  const view = vscode.window.createTreeView(runsViewId, {
    treeDataProvider: provider,
    showCollapseAll: true,
  });
  const updateMessage = (): void => {
    view.message = ctx.trusted
      ? undefined
      : 'Restricted Mode: you can browse runs, but training and evaluation need a trusted workspace.';
  };
  updateMessage();
  // A badge on the view: a paused run is easy to miss when its document is not visible.
  const updateBadge = (): void => {
    const waiting = ctx.runs.list().filter((r) => r.live?.status === 'running' && r.live.waiting).length;
    view.badge =
      waiting > 0
        ? { value: waiting, tooltip: `${waiting} run${waiting === 1 ? '' : 's'} waiting for your review` }
        : undefined;
  };
  updateBadge();
  // The title's "group by skill / one list" buttons only where there is something to group.
  let several: boolean | undefined;
  const updateSeveral = (): void => {
    const now = runsBySkill(ctx.runs.list(), (dir) => ctx.runs.origin(dir)?.skillPath) !== undefined;
    if (now === several) return;
    several = now;
    void vscode.commands.executeCommand('setContext', ContextKeys.runsOfSeveralSkills, now);
  };
  updateSeveral();
  ctx.pushExtCleanup(
    provider,
    view,
    vscode.workspace.onDidGrantWorkspaceTrust(updateMessage),
    ctx.runs.onDidChange(updateBadge),
    ctx.runs.onDidChange(updateSeveral),
  );
  return { provider, view };
}
