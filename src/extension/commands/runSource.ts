/**
 * The config (and overrides, and keys) an existing run folder was trained with, for the requests
 * that work on that run again: Resume Run, Cancel Provider Batch.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { configDirOfDefaultRun } from '../../engine/store/layout';
import type { RunSource } from '../../protocol/engine';
import { configFileName } from '../constants';
import type { Ctx } from '../ctx';
import type { RunView } from '../runs/liveState';
import type { RunOrigin } from '../runs/runsModel';
import { collectKeys } from './keys';

/** The config a run was started from, when this workspace remembers or can guess it. */
function configFor(ctx: Ctx, run: RunView): RunOrigin | undefined {
  const origin = ctx.runs.origin(run.dir);
  if (origin && existsSync(origin.configPath)) return origin;
  // Default run folders sit at <config dir>/.skillopt/runs/<name>.
  const configDir = configDirOfDefaultRun(run.dir);
  if (configDir) {
    const direct = join(configDir, configFileName);
    if (existsSync(direct)) return { configPath: direct };
    const other = readdirSync(configDir).find((f) => /^skillopt.*\.ya?ml$/.test(f));
    if (other) return { configPath: join(configDir, other) };
  }
  return undefined;
}

/**
 * The run's config as Resume would train it (remembered overrides, else the skill it trained), the
 * stored keys; the person picks the config when the workspace cannot tell (undefined: they did not).
 */
export async function runSourceOf(
  ctx: Ctx,
  run: RunView,
  openLabel: string,
): Promise<{ origin: RunOrigin; params: RunSource } | undefined> {
  let origin = configFor(ctx, run);
  if (!origin) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { 'SkillOpt config': ['yaml', 'yml'] },
      openLabel,
      title: `Which config trained ${run.name}?`,
    });
    if (!picked?.[0]) return undefined;
    origin = { configPath: picked[0].fsPath };
  }
  const params: RunSource = {
    configPath: origin.configPath,
    ...(origin.overrides?.length
      ? { overrides: origin.overrides }
      : origin.skillPath
        ? { overrides: [`env.skill_init=${origin.skillPath}`] }
        : {}),
    keys: await collectKeys(ctx),
  };
  return { origin, params };
}
