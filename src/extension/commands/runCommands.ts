/**
 * Starting, stopping and resuming runs. The host only asks: the engine process validates, trains
 * and writes the run folder; progress comes back as events.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { parse as parseYaml } from 'yaml';
import { isSkillFolder } from '../../engine/skill/package/folder';
import { defaultRunsRoot } from '../../engine/store/layout';
import {
  EngineRequests,
  type StartParams,
  type StartResult,
  type ValidateResult,
} from '../../protocol/engine';
import { describeGatePower, NO_SKILL_OFF } from '../../protocol/gateText';
import { reviewModeOverride } from '../config';
import { Commands, configFileName } from '../constants';
import type { Ctx } from '../ctx';
import { ensureLmAccess } from '../lm/lmBridge';
import { effectiveStatus, isActive } from '../runs/liveState';
import { runGuidedSetup } from '../setup/guidedSetup';
import { collectKeys } from './keys';
import { runSourceOf } from './runSource';
import { requireTrust, resolveRun, showEngineError, withProgress, isMarkdownFile } from './shared';

/** Options for programmatic calls (tests, other commands); the UI path leaves them unset. */
export interface OptimizeOptions {
  /** false: start without the confirmation dialog. */
  confirm?: boolean;
  /** Extra `section.key=value` overrides. */
  overrides?: string[];
}

const lmJustification =
  'SkillOpt sends your skill and training tasks to this model while it trains a skill document.';

function isOptions(v: unknown): v is OptimizeOptions {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof vscode.Uri);
}

/** The Markdown file to optimize: the argument, the active editor, or one the person picks. */
async function skillFile(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  const active = vscode.window.activeTextEditor?.document;
  if (active && isMarkdownFile(active.uri)) return active.uri;
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    filters: { 'Skill (Markdown)': ['md'] },
    openLabel: 'Optimize This Skill',
  });
  return picked?.[0];
}

/** Model names of `vscode-lm` roles in a validation result (`vscode-lm <model>`). */
export function lmModelsOf(v: Pick<ValidateResult, 'target' | 'optimizer'>): string[] {
  return [v.target, v.optimizer]
    .filter((d) => d.startsWith('vscode-lm '))
    .map((d) => d.slice('vscode-lm '.length));
}

function confirmText(v: ValidateResult): { message: string; detail: string } {
  const sim = v.simulated ? ' (simulated models: scores not meaningful)' : '';
  return {
    message: `Train ${basename(v.skillPath)}? About ${v.estimatedCalls} model calls${sim}.`,
    detail: [
      `Target: ${v.target}`,
      `Optimizer: ${v.optimizer}`,
      v.estimatedCost,
      `${v.totalSteps} steps on ${v.splits.train} training tasks; gate on ${v.splits.val} selection tasks; ${v.splits.test} held out for the final test.`,
      ...(v.gatePower ? [`Gate: ${describeGatePower(v.gatePower)}.`] : []),
      ...(v.noSkillCalls !== undefined
        ? [`The target alone (no skill) is scored at the end: ${v.noSkillCalls} of those calls.`]
        : v.noSkillOff
          ? [NO_SKILL_OFF]
          : []),
      ...v.warnings.map((w) => `Warning: ${w}`),
    ].join('\n'),
  };
}

async function validate(ctx: Ctx, params: StartParams): Promise<ValidateResult> {
  const engine = await ctx.engine();
  return withProgress('SkillOpt: checking config, skill, tasks and models…', (token) =>
    engine.request(
      EngineRequests.validate,
      {
        configPath: params.configPath,
        ...(params.overrides ? { overrides: params.overrides } : {}),
        ...(params.keys ? { keys: params.keys } : {}),
      },
      { token },
    ),
  );
}

async function start(ctx: Ctx, params: StartParams, skillPath: string | undefined): Promise<StartResult> {
  const engine = await ctx.engine();
  const result = await engine.request(EngineRequests.startRun, params);
  // Overrides that carry a credential are not stored; the engine does not compare credentials.
  const overrides = (params.overrides ?? []).filter(
    (o) => !/(key|token|secret|password)/i.test(o.split('=')[0] ?? ''),
  );
  await ctx.runs.rememberOrigin(result.runId, {
    configPath: params.configPath,
    ...(skillPath ? { skillPath } : {}),
    ...(overrides.length ? { overrides } : {}),
  });
  ctx.log.info(`[run] ${params.resume ? 'resumed' : 'started'} ${result.outDir}`);
  void vscode.commands.executeCommand(Commands.revealRun, result.runId);
  return result;
}

function timestamp(): string {
  const d = new Date();
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/**
 * The folder for a new run: where and how the engine would name it (`<config dir>/.skillopt/runs/
 * <env.name>_<timestamp>`), but never an existing folder. The engine's own default has one-second
 * resolution, and a second start within that second would resume the first run. A config that
 * sets env.out_root chose its folder itself (undefined: let the engine use it).
 */
export function newRunDir(configPath: string): string | undefined {
  let env: unknown;
  try {
    env = (parseYaml(readFileSync(configPath, 'utf8')) as { env?: unknown } | null)?.env;
  } catch {
    return undefined;
  }
  const e = typeof env === 'object' && env !== null ? (env as Record<string, unknown>) : {};
  if (typeof e.out_root === 'string' && e.out_root.trim()) return undefined;
  const name = typeof e.name === 'string' && e.name.trim() ? e.name.trim() : basename(dirname(configPath));
  const root = defaultRunsRoot(dirname(configPath));
  const stamp = timestamp();
  let dir = join(root, `${name}_${stamp}`);
  for (let i = 2; existsSync(dir); i++) dir = join(root, `${name}_${stamp}_${i}`);
  return dir;
}

/** The skill folder of `skillPath` when the config's env.skill_init names it, else `skillPath`. */
function trainedPath(configPath: string, skillPath: string): string {
  let init: unknown;
  try {
    const env = (parseYaml(readFileSync(configPath, 'utf8')) as { env?: { skill_init?: unknown } } | null)
      ?.env;
    init = env?.skill_init;
  } catch {
    return skillPath;
  }
  if (typeof init !== 'string' || !init.trim()) return skillPath;
  const folder = dirname(skillPath);
  return resolve(dirname(configPath), init) === folder && isSkillFolder(folder) ? folder : skillPath;
}

/**
 * The engine reads the skill from disk, so unsaved changes would not be trained: the person
 * chooses to save them first (never done for them) or to go back to the editor.
 */
async function saveToTrain(doc: vscode.TextDocument): Promise<boolean> {
  const name = vscode.workspace.asRelativePath(doc.uri);
  const save = 'Save and Train';
  const choice = await vscode.window.showWarningMessage(
    `SkillOpt: ${name} has unsaved changes.`,
    {
      modal: true,
      detail:
        'Training reads the skill from disk and would not see them. Save them and train the saved file, or cancel to look at them first (save or revert, then optimize again).',
    },
    save,
  );
  if (choice !== save) return false;
  return doc.save();
}

/** "Optimize This Skill". Returns the started run, or undefined when cancelled or refused. */
export async function optimizeSkill(
  ctx: Ctx,
  arg?: unknown,
  optsArg?: unknown,
): Promise<StartResult | undefined> {
  if (!requireTrust('train a skill')) return undefined;
  const opts: OptimizeOptions = isOptions(optsArg) ? optsArg : isOptions(arg) ? arg : {};
  const uri = await skillFile(arg instanceof vscode.Uri ? arg : undefined);
  if (!uri) return undefined;
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open?.isDirty && !(await saveToTrain(open))) return undefined;
  const skillPath = uri.fsPath;
  let configPath = join(dirname(skillPath), configFileName);
  if (!existsSync(configPath)) {
    const written = await runGuidedSetup(skillPath);
    if (!written) return undefined;
    configPath = written;
  }
  const review = reviewModeOverride();
  const outDir = newRunDir(configPath);
  const params: StartParams = {
    configPath,
    // Train the file the person chose, whatever skill_init the config names; the whole folder
    // when the config names the skill folder this SKILL.md is in.
    overrides: [`env.skill_init=${trainedPath(configPath, skillPath)}`, ...(opts.overrides ?? [])],
    keys: await collectKeys(ctx),
    ...(outDir ? { outDir } : {}),
    resume: false,
    ...(review ? { reviewMode: review } : {}),
  };
  try {
    const v = await validate(ctx, params);
    ctx.log.info(
      `[run] validated ${configPath}: ${v.totalSteps} steps, about ${v.estimatedCalls} model calls`,
    );
    for (const model of lmModelsOf(v)) await ensureLmAccess(ctx, model, lmJustification);
    if (opts.confirm !== false) {
      const { message, detail } = confirmText(v);
      const choice = await vscode.window.showInformationMessage(
        message,
        { modal: true, detail },
        'Start Training',
      );
      if (choice !== 'Start Training') return undefined;
    }
    return await start(ctx, params, skillPath);
  } catch (err) {
    await showEngineError(ctx, 'cannot start training', err);
    return undefined;
  }
}

/** "Resume Run": continues an interrupted run in its own folder. */
export async function resumeRun(ctx: Ctx, arg?: unknown): Promise<StartResult | undefined> {
  if (!requireTrust('resume a run')) return undefined;
  const run = await resolveRun(
    ctx,
    arg,
    (r) => effectiveStatus(r) === 'interrupted',
    'Pick an interrupted run to resume',
  );
  if (!run) return undefined;
  if (isActive(run.live)) {
    void vscode.window.showInformationMessage(`SkillOpt: ${run.name} is already running.`);
    return undefined;
  }
  const source = await runSourceOf(ctx, run, 'Resume With This Config');
  if (!source) return undefined;
  const { origin } = source;
  const review = reviewModeOverride();
  const params: StartParams = {
    ...source.params,
    outDir: run.dir,
    resume: true,
    ...(review ? { reviewMode: review } : {}),
  };
  try {
    return await start(ctx, params, origin.skillPath);
  } catch (err) {
    await showEngineError(ctx, `cannot resume ${run.name}`, err);
    return undefined;
  }
}

/** "Stop Run": the engine stops at the next safe point; finished steps are kept for Resume. */
export async function stopRun(ctx: Ctx, arg?: unknown): Promise<boolean> {
  const run = await resolveRun(ctx, arg, (r) => isActive(r.live), 'Pick a running run to stop');
  if (!run) return false;
  if (!ctx.engineRunning) return false;
  try {
    const engine = await ctx.engine();
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `SkillOpt: stopping ${run.name}…` },
      () => engine.request(EngineRequests.stopRun, { runId: run.dir }, { timeoutMs: 120_000 }),
    );
    if (res.stopped) {
      ctx.log.info(`[run] stopped ${run.dir}`);
      // The lock is gone now: read what the folder holds (a batch left running), watched or not.
      ctx.runs.reread(run.dir);
    }
    return res.stopped;
  } catch (err) {
    await showEngineError(ctx, `cannot stop ${run.name}`, err);
    return false;
  }
}

/** "Open Run Folder": reveals it in the Explorer when it is in the workspace, else in the OS. */
export async function openRunFolder(ctx: Ctx, arg?: unknown): Promise<void> {
  const run = await resolveRun(ctx, arg, () => true, 'Pick a run');
  if (!run) return;
  const uri = vscode.Uri.file(run.dir);
  if (vscode.workspace.getWorkspaceFolder(uri)) {
    await vscode.commands.executeCommand('revealInExplorer', uri);
    return;
  }
  if (vscode.env.uiKind === vscode.UIKind.Desktop) {
    await vscode.commands.executeCommand('revealFileInOS', uri);
    return;
  }
  const choice = await vscode.window.showInformationMessage(
    `SkillOpt: ${run.dir} is outside this workspace.`,
    'Open in New Window',
  );
  if (choice) await vscode.commands.executeCommand('vscode.openFolder', uri, { forceNewWindow: true });
}
