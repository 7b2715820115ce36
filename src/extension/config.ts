/**
 * Typed access to the `skillopt.*` settings. Every value read from settings is checked before use,
 * because settings.json is hand-edited. Which settings apply when:
 * - runsFolders: rescans the Runs tree at once.
 * - reviewMode, copilotModel: the next run or request.
 * - followRun: the next candidate of a run in auto mode.
 * - groupRunsBySkill: redraws the Runs view at once.
 * - engine.*: the next start of the engine process.
 */
import * as vscode from 'vscode';
import { isReviewMode, type ReviewMode } from '../protocol/vocabulary';

export const SettingKeys = {
  runsFolders: 'runsFolders',
  reviewMode: 'reviewMode',
  followRun: 'followRun',
  copilotModel: 'copilotModel',
  requestTimeout: 'engine.requestTimeoutSeconds',
  groupRunsBySkill: 'groupRunsBySkill',
} as const;

/** Settings that only take effect after a rescan of the run folders. */
export const rescanSettings = [SettingKeys.runsFolders];

function section(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('skillopt');
}

/** Extra folders (absolute, or relative to the first workspace folder) that hold run folders. */
export function runsFolders(): string[] {
  const v = section().get<unknown>(SettingKeys.runsFolders);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : [];
}

/** The review mode to force on new runs, or undefined to keep the config's `review.mode`. */
export function reviewModeOverride(): ReviewMode | undefined {
  const v = section().get<unknown>(SettingKeys.reviewMode);
  return isReviewMode(v) ? v : undefined;
}

/**
 * Auto mode: whether the open skill file follows the run (each candidate the gate keeps is written
 * into it and saved). Off by default: the trained skill stays in the run folder until Apply Best.
 */
export function followRun(): boolean {
  return section().get<unknown>(SettingKeys.followRun) === true;
}

/** Whether the Runs view groups runs by skill when it has runs of more than one (default on). */
export function groupRunsBySkill(): boolean {
  return section().get<unknown>(SettingKeys.groupRunsBySkill) !== false;
}

export async function setGroupRunsBySkill(on: boolean): Promise<void> {
  await section().update(SettingKeys.groupRunsBySkill, on, settingTarget());
}

/** The model picked with "Select Copilot Model" (a vscode-lm selector string), or ''. */
export function copilotModel(): string {
  const v = section().get<unknown>(SettingKeys.copilotModel);
  return typeof v === 'string' ? v.trim() : '';
}

export async function setCopilotModel(selector: string): Promise<void> {
  await section().update(SettingKeys.copilotModel, selector, settingTarget());
}

/** Settings the extension writes go to the workspace when one is open, else to the user's settings. */
function settingTarget(): vscode.ConfigurationTarget {
  return vscode.workspace.workspaceFolders?.length
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
}

/** Default deadline of a request to the engine (long runs report through events instead). */
export function requestTimeoutMs(): number {
  const v = section().get<unknown>(SettingKeys.requestTimeout);
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v * 1000) : 60_000;
}

/**
 * Port of the engine's Node inspector when the extension runs in development mode (F5). A
 * developer's knob, so an environment variable (SKILLOPT_INSPECT_PORT), not a user setting.
 */
export function inspectPort(): number {
  const v = Number(process.env.SKILLOPT_INSPECT_PORT);
  return Number.isInteger(v) && v > 0 && v < 65536 ? v : 6019;
}
