/**
 * How often an agent target opened the skill it was given. With native delivery the skill's
 * description decides whether the agent loads it at all; an agent that never opens it gets the
 * same answer from every candidate, so no edit to the body can help. Counted from the rollout
 * rows' `agent_run.skill_loaded` (the CLI's own events), errored runs and no-skill runs aside.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RolloutResult, RolloutRow } from '../../protocol/records';
import { readJsonl } from '../store/jsonl';
import { EVAL_FILE, RUN_DIR } from '../store/layout';
import { RESULT_ROWS } from '../store/runRows';
import { isErrored } from './rollout';

export interface SkillUse {
  /** Answered agent runs that had the skill installed and say whether they opened it. */
  runs: number;
  loaded: number;
}

/** Below this share of runs the skill's description, not its body, is what to fix. */
const LOW_SHARE = 0.5;

/** The agent runs of these rows that report skill loading; undefined when none do (not an agent CLI). */
export function skillUseOf(
  rows: readonly Pick<RolloutResult, 'outcome' | 'agent_run'>[],
): SkillUse | undefined {
  let runs = 0;
  let loaded = 0;
  for (const r of rows) {
    const flag = r.agent_run?.skill_loaded;
    if (typeof flag !== 'boolean' || isErrored(r)) continue;
    runs++;
    if (flag) loaded++;
  }
  return runs > 0 ? { runs, loaded } : undefined;
}

/** "the agent opened the skill in 3 of 19 runs (16%)". */
export function describeSkillUse(use: SkillUse): string {
  return `the agent opened the skill in ${use.loaded} of ${use.runs} run(s) (${Math.round((100 * use.loaded) / use.runs)}%)`;
}

/** What to do when the agent seldom opens the skill; undefined when it opens it often enough. */
export function skillUseAdvice(use: SkillUse): string | undefined {
  if (use.loaded / use.runs >= LOW_SHARE) return undefined;
  return 'an edit cannot change a run that never opens the skill, and the description decides whether the agent loads it: say there when to use the skill, or set model.target_delivery: pointer to name the skill file in every prompt';
}

/** Folders whose rows ran without the skill (evaluation.no_skill_baseline). */
const NO_SKILL_DIRS: ReadonlySet<string> = new Set([RUN_DIR.noSkillSelection, RUN_DIR.testNoSkill]);

/** Every rollout row of the run folder (train, selection, slow-update, test, eval_only), by folder. */
export function forEachResultRow(
  outDir: string,
  visit: (row: RolloutRow, dir: string) => void,
  skip: ReadonlySet<string> = new Set(),
): void {
  const walk = (dir: string, depth: number): void => {
    if (depth > 6 || !existsSync(dir)) return;
    // Entries as they are, links not followed: a link planted in the run folder would lead the
    // walk out of it (and a dangling one would throw).
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const name = entry.name;
      if (name === EVAL_FILE.predictions || name === RUN_DIR.generatedSplits || skip.has(name)) continue;
      const p = join(dir, name);
      // A torn line from an interrupted write is not evidence either way: passed over.
      if (name === EVAL_FILE.results && entry.isFile())
        for (const row of readJsonl(p, RESULT_ROWS)) visit(row, dir);
      else if (entry.isDirectory()) walk(p, depth + 1);
    }
  };
  walk(outDir, 0);
}

/** Skill use over every agent run of the run folder that had the skill. */
export function runSkillUse(outDir: string): SkillUse | undefined {
  const rows: RolloutRow[] = [];
  forEachResultRow(outDir, (r) => rows.push(r), NO_SKILL_DIRS);
  return skillUseOf(rows);
}

/** The warning for an evaluation whose agent runs seldom opened the skill (shown when it ends). */
export function skillUseWarning(
  where: string,
  rows: readonly Pick<RolloutResult, 'outcome' | 'agent_run'>[] | undefined,
): string | undefined {
  const use = rows && skillUseOf(rows);
  const advice = use && skillUseAdvice(use);
  return use && advice ? `${where}: ${describeSkillUse(use)}; ${advice}` : undefined;
}
