/**
 * A run folder belongs to the config it was started with. Resuming it under a different config
 * would mix two experiments in one history (and config.json would name a seed the steps never
 * used), so it is refused, naming the differences; keys that only steer how the run is carried out
 * (caps, concurrency, timeouts, cache, review mode, prices, keys, the speed options whose decisions are
 * identical by construction) may change between sessions.
 */
import { existsSync, readdirSync } from 'node:fs';
import type { TaskDataDigest } from '../data/digest';
import { SkillOptError } from '../errors';
import { isTempName } from '../store/atomic';
import { EVAL_FILE, RUN_FILE, RunLayout } from '../store/layout';
import { artifactSchemas, readArtifact } from '../store/runSchemas';
import { checkOutFolderData } from './sameData';

const OPERATIONAL = new Set([
  'optimizer_concurrency',
  'target_concurrency',
  'provider_concurrency',
  'agent_concurrency',
  'workers',
  'request_timeout_s',
  'max_retries',
  'max_tokens',
  'max_dollars',
  'max_wall_time_s',
  'max_errored_share',
  'cache_enabled',
  'cache_dir',
  'cache_all_roles',
  'review_mode',
  'batch_poll_s',
  // Tested to give the same decisions with and without (test/unit/train/speed.test.ts).
  'speed_speculate',
  'early_stop',
  'prices',
  'out_root',
  'split_output_dir',
  'codex_exec_path',
  'claude_code_exec_path',
  'cursor_exec_path',
  'copilot_exec_path',
]);

/** Keys whose values are credentials or how to obtain them: never a reason to refuse. */
const isCredential = (key: string): boolean =>
  /(_api_key|_auth_mode|_ad_scope|_managed_identity_client_id)$/.test(key);

/**
 * A value config.json holds masked: runs before the token-count fix stored `minimax_max_tokens:
 * "8000"` as "***", and runs before the short-secret fix kept four and four characters of a secret
 * now shown as "***". It cannot be compared, so it is no reason to refuse.
 */
const masked = (v: unknown): boolean =>
  typeof v === 'string' && /^(\*\*\*|[\s\S]{4}\.\.\.[\s\S]{4})$/.test(v);

const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? 'unset';
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/**
 * Keys that decide which items each step sees (the splits and the epoch plan): a run cannot go on
 * under other values even with --force, because its finished steps were drawn from the old plan.
 */
const PLAN = new Set([
  'env',
  'data_path',
  'split_dir',
  'split_mode',
  'split_ratio',
  'split_seed',
  'limit',
  'seed',
  'train_size',
  'batch_size',
  'accumulation',
]);

/**
 * Refuses to resume `outDir` under `now` when it differs from the config the run was started with.
 * With `force` (`skillopt train --force`) the run goes on under the new config and the differences
 * come back for a warning, unless one of them changes the run's data or epoch plan.
 */
export function checkSameConfig(
  outDir: string,
  saved: Record<string, unknown>,
  now: Record<string, unknown>,
  force = false,
): string[] {
  const keys = [...new Set([...Object.keys(saved), ...Object.keys(now)])];
  const differ = keys.filter(
    (k) =>
      !OPERATIONAL.has(k) &&
      !isCredential(k) &&
      k in saved &&
      !masked(saved[k]) &&
      JSON.stringify(saved[k]) !== JSON.stringify(now[k]),
  );
  const lines = differ.map((k) => `${k}: ${show(saved[k])} → ${show(now[k])}`);
  if (!differ.length) return [];
  const planned = differ.filter((k) => PLAN.has(k));
  if (force && !planned.length) return lines;
  const list = lines.slice(0, 6).join('; ');
  const more = differ.length > 6 ? `; and ${differ.length - 6} more` : '';
  if (force) {
    throw new SkillOptError(
      'config',
      `--force cannot change ${planned.join(', ')}: they decide which items each step sees (${list}${more})`,
      {
        file: outDir,
        fix: 'resume with the values the run was started with, train into another --out folder, or start this folder afresh with --fresh',
      },
    );
  }
  throw new SkillOptError('config', `this run folder was started with a different config (${list}${more})`, {
    file: outDir,
    fix: 'resume with the config the run was started with, pass --force to go on under the new one (keeping the steps done), train into another --out folder, or start this folder afresh with --fresh',
  });
}

/**
 * `--resume` on a folder where no run has started: refused before the folder is made or its ledger
 * opened, so the refusal leaves nothing behind. A run has started once its ledger is written (before
 * config.json and its first call); a folder with only runtime_state.json is the Python SkillOpt's.
 */
export function refuseResumeWithoutRun(outDir: string): void {
  if (holdsRun(outDir)) return;
  throw new SkillOptError('config', 'there is no run to resume in this folder', {
    file: outDir,
    fix: 'check the --out folder (it holds config.json once a run has started), or leave out --resume to start one',
  });
}

/**
 * Files whose presence says a folder is a run's (a run killed early may have written only these).
 * Not config.json alone: a run writes its ledger first, and a project folder may hold a config.json.
 */
const RUN_MARKERS = [RUN_FILE.state, RUN_FILE.ledger, RUN_FILE.dataDigest];

/**
 * Whether `dir` holds a run, even one killed before its first save (what `--fresh` clears). An
 * evaluation's folder has a ledger too, but is no training run.
 */
export function holdsRun(dir: string): boolean {
  const layout = new RunLayout(dir);
  if (existsSync(layout.file(EVAL_FILE.identity))) return false;
  return RUN_MARKERS.some((f) => existsSync(layout.file(f)));
}

/**
 * A new run only in a new or empty folder, or in a run's: in a folder of the person's own (`--out .`
 * beside the config) it would overwrite a `report.md` or write into a `skills/` folder of theirs.
 */
export function refuseForeignFolder(
  outDir: string,
  writes = 'a run writes report.md, skills/, steps/ and more into it, and --fresh deletes them',
): void {
  if (!existsSync(outDir) || holdsRun(outDir)) return;
  let entries: string[];
  try {
    entries = readdirSync(outDir).filter((n) => !n.startsWith(RUN_FILE.lock) && !isTempName(n));
  } catch {
    return; // Not a folder, or unreadable: the first write says so, naming it.
  }
  if (!entries.length) return;
  const fix = `give --out a new or empty folder (e.g. runs/first): ${writes}`;
  if (entries.includes(EVAL_FILE.identity))
    throw new SkillOptError('config', `holds an evaluation (${EVAL_FILE.identity}), not a training run`, {
      file: outDir,
      fix,
    });
  const shown = entries.sort().slice(0, 5).join(', ') + (entries.length > 5 ? ', …' : '');
  throw new SkillOptError('config', `the folder holds files but no run (${shown})`, {
    file: outDir,
    fix,
  });
}

/** How `train` was asked to use its run folder (its flags). */
export interface OutFolderUse {
  /** `--resume`: the folder must hold a run. */
  requireResume?: boolean;
  /** `--force`: a changed config goes on, unless it changes the data or batch plan. */
  force?: boolean;
  /** `--fresh` just cleared a run and kept files of the person's beside it. */
  keepsOtherFiles?: boolean;
}

/**
 * What `train --out DIR` refuses about DIR (a folder of the person's files, `--resume` with no run,
 * a run under another config or other task data, even one killed before its first save), checked
 * without writing anything: by `validate --out DIR`, and by `train` before it prints or spends.
 */
export function refuseOutFolder(
  outDir: string,
  now: Record<string, unknown>,
  data: TaskDataDigest,
  use: OutFolderUse = {},
): void {
  if (use.requireResume) refuseResumeWithoutRun(outDir);
  else if (!use.keepsOtherFiles) refuseForeignFolder(outDir);
  const layout = new RunLayout(outDir);
  const saved = readArtifact<Record<string, unknown>>(layout.file(RUN_FILE.config), artifactSchemas.config);
  if (saved) checkSameConfig(outDir, saved, now, use.force);
  checkOutFolderData(layout, data);
}
