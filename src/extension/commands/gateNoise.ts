/**
 * "Check Gate Noise (A/A)…": one skill scored several times on the selection split, every run
 * compared with every other as if it were a candidate (`skillopt eval --aa N`). On a run, its best
 * skill (else its initial one) against the run's config, kept in the run's Evaluations; from the
 * palette, also any skill file. What the gates would have accepted is noise the person can see.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import { RUN_DIR, RUN_FILE, RunLayout } from '../../engine/store/layout';
import type { EvalResult } from '../../protocol/engine';
import type { Ctx } from '../ctx';
import { sortRuns } from '../runs/treeNodes';
import type { RunView } from '../runs/liveState';
import { evaluateSkill } from './evaluate';
import { requireTrust, runIdOf } from './shared';

export interface GateNoiseOptions {
  runId?: string;
  /** How many times to score the skill (2–20); absent = the person picks. */
  runs?: number;
}

const choices = [2, 3, 4, 6, 8];

function isOptions(v: unknown): v is GateNoiseOptions {
  return typeof v === 'object' && v !== null && !('spec' in v) && ('runs' in v || 'runId' in v);
}

async function pickRuns(): Promise<number | undefined> {
  const pick = await vscode.window.showQuickPick(
    choices.map((n) => ({
      label: `${n} times`,
      description: n === 4 ? 'a good start' : '',
      detail: `${n} × the selection items × evaluation.repeats in target calls; ${n * (n - 1)} comparisons`,
      n,
    })),
    { title: 'SkillOpt: Check Gate Noise (A/A)', placeHolder: 'How many times to score the same skill' },
  );
  return pick?.n;
}

/** The run's skill to score: the best one when the run wrote it, else the one it started from. */
function runSkill(run: RunView): string | undefined {
  const layout = new RunLayout(run.dir);
  return [layout.file(RUN_FILE.bestSkill), layout.skillVersion(0)].find((p) => existsSync(p));
}

async function pickTarget(ctx: Ctx): Promise<RunView | 'file' | undefined> {
  const runs = sortRuns(ctx.runs.list()).filter((r) => runSkill(r));
  if (runs.length === 0) return 'file';
  type Item = vscode.QuickPickItem & { run?: RunView };
  const pick = await vscode.window.showQuickPick<Item>(
    [
      ...runs.map((r) => ({ label: r.name, description: 'the run’s best skill, its config', run: r })),
      { label: 'A skill file…', description: 'any SKILL.md and a config with its tasks' },
    ],
    { title: 'SkillOpt: Check Gate Noise (A/A)', placeHolder: 'Whose gate noise to measure' },
  );
  if (!pick) return undefined;
  return pick.run ?? 'file';
}

/**
 * Returns the evaluation with its A/A report, or undefined when cancelled or refused. `listed` is
 * told of an evaluation written outside a run (the workspace's Evaluations show it at once).
 */
export async function checkGateNoise(
  ctx: Ctx,
  arg: unknown,
  listed: (dir: string) => void,
): Promise<EvalResult | undefined> {
  if (!requireTrust('check the gate noise')) return undefined;
  const opts: GateNoiseOptions = isOptions(arg) ? arg : {};
  const id = opts.runId ?? (isOptions(arg) ? undefined : runIdOf(arg));
  const target = id ? ctx.runs.get(id) : await pickTarget(ctx);
  if (id && !target) {
    void vscode.window.showErrorMessage(`SkillOpt: no run folder at ${id}.`);
    return undefined;
  }
  if (!target) return undefined;
  const run = target === 'file' ? undefined : target;
  const n = opts.runs ?? (await pickRuns());
  if (!n) return undefined;
  if (!run) {
    const result = await evaluateSkill(ctx, { aa: n, split: 'val' });
    if (result) listed(result.out_dir);
    return result;
  }
  const skillPath = runSkill(run);
  if (!skillPath) {
    void vscode.window.showErrorMessage(`SkillOpt: run ${run.name} has no skill file to score yet.`);
    return undefined;
  }
  const configPath = ctx.runs.origin(run.dir)?.configPath;
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '_').replace(/\..*$/, '');
  const result = await evaluateSkill(ctx, {
    skillPath,
    ...(configPath && existsSync(configPath) ? { configPath } : {}),
    split: 'val',
    aa: n,
    // Kept with the run: its Evaluations in the Runs view and its Gate History show it.
    outDir: join(run.dir, RUN_DIR.evalOnly, `${basename(skillPath, '.md')}_selection_aa${n}_${stamp}`),
  });
  if (result) ctx.runs.reread(run.dir);
  return result;
}
