/**
 * Helpers for the SkillOpt integration tests: the extension's API, the fixture workspace, waiting
 * for UI state that reaches the extension host asynchronously, and the events of one run.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { EngineEvent } from '../../../src/protocol/events';
import type { SkillOptApi } from '../../../src/extension/extension';
import type { RunView } from '../../../src/extension/runs/liveState';

/**
 * Overrides under which the target answers through vscode.lm with the test provider's model, which
 * takes 100 ms per answer: slow enough that a stop or a crash lands in the middle of the run (the
 * sim backend alone finishes a run before the host has read its first events).
 */
export const SLOW_RUN: readonly string[] = [
  'model.target_backend=vscode-lm',
  'model.target=vendor=skillopt-test,id=skillopt-test-dates',
  'cache.enabled=false',
];
import type { RunsTreeElement } from '../../../src/extension/views/runsTree';

export async function skillopt(): Promise<SkillOptApi> {
  const ext = vscode.extensions.getExtension<SkillOptApi>('skillopt.skillopt');
  if (!ext) throw new Error('the SkillOpt extension is not loaded');
  return ext.isActive ? ext.exports : await ext.activate();
}

export function workspacePath(...parts: string[]): string {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!root) throw new Error('no workspace folder is open');
  return join(root, ...parts);
}

/** Polls until `fn` returns something truthy; fails with `what` after `ms`. */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  what: string,
  ms = 30_000,
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Records the live events of every run from now on. */
export function recordEvents(api: SkillOptApi): {
  of(runId: string): EngineEvent[];
  dispose(): void;
} {
  const seen = new Map<string, EngineEvent[]>();
  const sub = api.ctx.runEvents((e) => {
    const list = seen.get(e.runId) ?? [];
    list.push(e.event);
    seen.set(e.runId, list);
  });
  return {
    of: (id) => seen.get(id) ?? [],
    dispose: () => {
      sub.dispose();
    },
  };
}

export function waitForStatus(
  api: SkillOptApi,
  runId: string,
  status: string,
  ms = 90_000,
): Promise<RunView> {
  return waitFor(
    () => {
      const run = api.ctx.runs.get(runId);
      return run?.live?.status === status ? run : undefined;
    },
    `run ${runId} to be ${status}`,
    ms,
  );
}

export interface TreeRow {
  label: string;
  description: string;
  contextValue: string;
  icon: string;
  el: RunsTreeElement;
}

/**
 * The rows under `parent`; at the root, each skill's runs in place of its row (the view groups runs
 * by skill when the workspace has runs of more than one), so tests find a run wherever it is.
 */
export function rows(api: SkillOptApi, parent?: RunsTreeElement): TreeRow[] {
  if (parent) return rowsOf(api, parent);
  return rowsOf(api).flatMap((r) => (r.el.spec.kind === 'skillGroup' ? rowsOf(api, r.el) : [r]));
}

/** The rows under `parent`, or the view's own top rows (skill rows when grouped). */
export function rowsOf(api: SkillOptApi, parent?: RunsTreeElement): TreeRow[] {
  return api.tree.getChildren(parent).map((el) => {
    const item = api.tree.getTreeItem(el);
    const icon = item.iconPath instanceof vscode.ThemeIcon ? item.iconPath.id : '';
    return {
      label: typeof item.label === 'string' ? item.label : (item.label?.label ?? ''),
      description: typeof item.description === 'string' ? item.description : '',
      contextValue: item.contextValue ?? '',
      icon,
      el,
    };
  });
}

export async function openSkill(path: string): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(path);
  return vscode.window.showTextDocument(doc);
}

export async function closeEditors(): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

export function diffTabs(): vscode.TabInputTextDiff[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .map((t) => t.input)
    .filter((i): i is vscode.TabInputTextDiff => i instanceof vscode.TabInputTextDiff);
}

/** The text of every hover at a position, Markdown escaping undone (non-breaking spaces, backslashes). */
export async function hoverText(uri: vscode.Uri, position: vscode.Position): Promise<string> {
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
    'vscode.executeHoverProvider',
    uri,
    position,
  );
  return hovers
    .flatMap((h) => h.contents)
    .map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))
    .join('\n')
    .replace(/&nbsp;/g, ' ')
    .replace(/\\(.)/g, '$1');
}

/**
 * Replaces `vscode.window` functions (dialogs, pickers, progress) for one test: `replace(name, fn)`
 * as often as needed, `restore()` in `afterEach` puts every original back.
 */
export function stubWindow(): { replace: (name: string, fn: unknown) => void; restore: () => void } {
  const win = vscode.window as unknown as Record<string, unknown>;
  const saved: Record<string, unknown> = {};
  return {
    replace: (name, fn) => {
      saved[name] ??= win[name];
      win[name] = fn;
    },
    restore: () => {
      for (const [name, fn] of Object.entries(saved)) win[name] = fn;
      for (const name of Object.keys(saved)) delete saved[name];
    },
  };
}
