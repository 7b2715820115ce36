/**
 * The Skills view: the workspace's skills (skills/discovery.ts) with their latest run, and the
 * actions on each: Optimize and Evaluate run the existing commands on its SKILL.md, Open, and
 * Reveal Last Run in the Runs view. Rows come from the pure mapping in skills/skillNodes.ts.
 */
import * as vscode from 'vscode';
import { Commands, SkillCommands, skillsViewId } from '../constants';
import type { Ctx } from '../ctx';
import { registerCommandTable } from '../commands/index';
import { createSkill } from '../skills/createSkill';
import { skillRow, sortSkills, type SkillRow } from '../skills/skillNodes';
import { SkillsModel } from '../skills/skillsModel';

export class SkillsTreeProvider implements vscode.TreeDataProvider<SkillRow>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SkillRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor(readonly model: SkillsModel) {
    this.disposables.push(model.onDidChange(() => this.changed.fire(undefined)));
  }

  /** The rows, in order (tests read them through here). */
  rows(now = Date.now()): SkillRow[] {
    const entries = this.model.list();
    const last = new Map(entries.map((e) => [e.skill.path, e.last]));
    return sortSkills(entries.map((e) => e.skill)).map((s) => skillRow(s, last.get(s.path), now));
  }

  getChildren(parent?: SkillRow): SkillRow[] {
    return parent ? [] : this.rows();
  }

  getTreeItem(row: SkillRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = row.id;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = row.contextValue;
    item.iconPath = new vscode.ThemeIcon(
      row.icon.id,
      row.icon.color ? new vscode.ThemeColor(row.icon.color) : undefined,
    );
    item.accessibilityInformation = { label: row.accessibilityLabel };
    item.command = { command: SkillCommands.open, title: 'Open Skill', arguments: [row] };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** The SKILL.md a command was given: a row (of this view, or a skill's row in the Runs view), a Uri or a path. */
function skillUri(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  if (typeof arg === 'string' && arg) return vscode.Uri.file(arg);
  const row = arg as { path?: unknown; spec?: { skillPath?: unknown } } | undefined;
  const path = row?.spec ? row.spec.skillPath : row?.path;
  return typeof path === 'string' && path ? vscode.Uri.file(path) : undefined;
}

export function registerSkillsView(ctx: Ctx): SkillsTreeProvider {
  const model = new SkillsModel(ctx.log, ctx.runs);
  const provider = new SkillsTreeProvider(model);
  const view = vscode.window.createTreeView(skillsViewId, { treeDataProvider: provider });
  // A setting VS Code could not use is said where the skills are missing, not only in the log.
  const updateMessage = (): void => {
    const problems = model.settingProblems();
    view.message = problems.length ? problems.join('\n') : undefined;
  };
  updateMessage();
  const withSkill =
    (run: (uri: vscode.Uri, arg: unknown) => unknown) =>
    (arg: unknown): unknown => {
      const uri = skillUri(arg);
      return uri ? run(uri, arg) : undefined;
    };
  const table: Record<string, (arg?: unknown) => unknown> = {
    [SkillCommands.optimize]: withSkill((uri) => vscode.commands.executeCommand(Commands.optimizeSkill, uri)),
    [SkillCommands.evaluate]: withSkill((uri) => vscode.commands.executeCommand(Commands.evaluateSkill, uri)),
    [SkillCommands.open]: withSkill((uri) => vscode.window.showTextDocument(uri, { preview: true })),
    [SkillCommands.revealLastRun]: withSkill((uri, arg) => {
      const runId =
        (arg as Partial<SkillRow> | undefined)?.runId ??
        model.list().find((e) => e.skill.path === uri.fsPath)?.last?.run.dir;
      return runId ? vscode.commands.executeCommand(Commands.revealRun, runId) : undefined;
    }),
    [SkillCommands.create]: () => createSkill(ctx),
  };
  registerCommandTable(ctx, table);
  ctx.pushExtCleanup(model, provider, view, model.onDidChange(updateMessage));
  return provider;
}
