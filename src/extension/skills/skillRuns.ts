/**
 * Which skill each run trained, and a skill's latest run. A run folder records its skill in
 * config.json (`skill_init`: absolute as this engine writes it; relative in the Python reference's
 * folders, taken from the config's folder) and, for runs started in VS Code, in the remembered
 * origin. Pure Node (no `vscode`).
 */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { configDirOfDefaultRun, RUN_FILE, RunLayout } from '../../engine/store/layout';
import { SKILL_FILE_NAME } from '../../engine/skill/lint';

export interface RunRef {
  dir: string;
  config: Record<string, unknown>;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The skill file a run trained, when it is still on this machine; a skill folder means its SKILL.md. */
export function trainedSkillPath(run: RunRef, originSkillPath?: string): string | undefined {
  const init = run.config.skill_init;
  for (const given of [init, originSkillPath]) {
    if (typeof given !== 'string' || !given.trim()) continue;
    let path = given;
    if (!isAbsolute(path)) {
      const base = configDirOfDefaultRun(run.dir);
      if (!base) continue;
      path = resolve(base, path);
    }
    if (isDir(path)) path = join(path, SKILL_FILE_NAME);
    if (existsSync(path)) return resolve(path);
  }
  return undefined;
}

/** When a run last wrote its record (ms since the epoch), for "last run 2 h ago"; undefined when unknown. */
export function lastWritten(runDir: string): number | undefined {
  const layout = new RunLayout(runDir);
  let newest: number | undefined;
  for (const f of [RUN_FILE.state, RUN_FILE.history, RUN_FILE.summary, RUN_FILE.config]) {
    try {
      const t = statSync(layout.file(f)).mtimeMs;
      if (newest === undefined || t > newest) newest = t;
    } catch {
      // Not written (yet).
    }
  }
  return newest;
}

/** Each trained skill's latest run: skill path → run, newest by last write (then by folder name). */
export function latestRunBySkill<R extends RunRef>(
  runs: readonly R[],
  originOf: (runDir: string) => string | undefined,
  writtenAt: (runDir: string) => number | undefined = lastWritten,
): Map<string, { run: R; at?: number }> {
  const latest = new Map<string, { run: R; at?: number }>();
  for (const run of runs) {
    const skill = trainedSkillPath(run, originOf(run.dir));
    if (!skill) continue;
    const at = writtenAt(run.dir);
    const held = latest.get(skill);
    const newer =
      !held ||
      (at ?? -1) > (held.at ?? -1) ||
      ((at ?? -1) === (held.at ?? -1) && run.dir.localeCompare(held.run.dir) > 0);
    if (newer) latest.set(skill, at === undefined ? { run } : { run, at });
  }
  return latest;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago", then the date. */
export function formatAgo(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d < 30) return `${d} day${d === 1 ? '' : 's'} ago`;
  return new Date(at).toISOString().slice(0, 10);
}
