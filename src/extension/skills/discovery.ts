/**
 * Where the agent hosts look for a workspace's skills, and what each skill folder holds. A skill is
 * a folder with a `SKILL.md` directly inside a skills location (`<location>/<name>/SKILL.md`), as
 * VS Code, Claude Code and Codex discover them. Pure Node (no `vscode`), so unit tests run it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { parseFrontMatter } from '../../engine/skill/frontMatter';
import { PRESETS } from '../../engine/llm/agents/presets';
import { lintSkillFile, SKILL_FILE_NAME } from '../../engine/skill/lint';

/** Which agent loads the skills of a location. */
export type SkillHost = 'copilot' | 'claude' | 'codex' | 'setting' | 'trained';

/** The project locations the agents read, relative to each workspace folder (the agent presets' own). */
export const PROJECT_SKILL_LOCATIONS: ReadonlyArray<{ dir: string; host: SkillHost }> = (
  ['copilot', 'claude', 'codex'] as const
).map((host) => ({ dir: PRESETS[host].skillRoot, host }));

export const HOST_LABEL: Record<SkillHost, string> = {
  copilot: 'Copilot / VS Code',
  claude: 'Claude Code',
  codex: 'Codex',
  setting: 'VS Code',
  trained: 'not loaded by an agent',
};

/** The setting VS Code reads extra skill folders from. */
export const SKILLS_LOCATIONS_SETTING = 'chat.agentSkillsLocations';

export interface SkillLocation {
  /** Absolute folder whose subfolders are skills. */
  dir: string;
  host: SkillHost;
}

/** A finding of the skill lint (src/engine/skill/lint.ts), as the view shows it. */
export interface SkillProblem {
  severity: 'error' | 'warning';
  message: string;
  /** 0-based line in SKILL.md. */
  line: number;
}

export interface SkillInfo {
  /** The SKILL.md file. */
  path: string;
  /** The skill folder (the SKILL.md's folder). */
  folder: string;
  /** The front matter's `name`, else the folder's name. */
  name: string;
  description?: string;
  host: SkillHost;
  /** The folder is the trained unit: `evals/evals.json` beside SKILL.md (skill-creator's convention). */
  hasEvals: boolean;
  problems: SkillProblem[];
}

/**
 * Paths named by `chat.agentSkillsLocations`. VS Code's shape is an object of path → boolean
 * (false turns a location off); an array of paths is also in use. Anything else is a problem to
 * say, never a silent nothing.
 */
export function agentSkillsLocations(value: unknown): { paths: string[]; problems: string[] } {
  const paths: string[] = [];
  const problems: string[] = [];
  if (value === undefined || value === null) return { paths, problems };
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (typeof v === 'string' && v.trim()) paths.push(v.trim());
      else problems.push(`${SKILLS_LOCATIONS_SETTING}[${i}] is not a folder path; it is left out`);
    });
  } else if (typeof value === 'object') {
    for (const [path, on] of Object.entries(value as Record<string, unknown>)) {
      if (on === true) paths.push(path.trim());
      else if (on !== false)
        problems.push(`${SKILLS_LOCATIONS_SETTING}["${path}"] should be true or false; it is left out`);
    }
  } else {
    problems.push(`${SKILLS_LOCATIONS_SETTING} should map folder paths to true or false; it is left out`);
  }
  return { paths: paths.filter(Boolean), problems };
}

/** A location path as VS Code resolves it: `~` is the home folder, relative is per workspace folder. */
export function resolveLocation(path: string, roots: readonly string[], home = homedir()): string[] {
  if (path === '~' || path.startsWith('~/') || path.startsWith('~\\')) return [join(home, path.slice(1))];
  if (isAbsolute(path)) return [resolve(path)];
  return roots.map((r) => resolve(r, path));
}

/**
 * Which agent a setting's folder belongs to: VS Code's default value names the agents' own folders,
 * personal ones included (`~/.claude/skills`, `~/.copilot/skills`, `~/.agents/skills`).
 */
export function hostOfFolder(dir: string): SkillHost {
  const tail = dir.split(/[\\/]/).slice(-2).join('/');
  // Copilot's personal folder is ~/.copilot/skills; its project one is the preset's .github/skills.
  if (tail === '.copilot/skills') return 'copilot';
  return PROJECT_SKILL_LOCATIONS.find((l) => l.dir === tail)?.host ?? 'setting';
}

/** Every location to scan: the project ones of each workspace folder, then the setting's. */
export function skillLocations(
  roots: readonly string[],
  setting: unknown,
  home = homedir(),
): { locations: SkillLocation[]; problems: string[] } {
  const seen = new Set<string>();
  const locations: SkillLocation[] = [];
  const add = (dir: string, host: SkillHost): void => {
    if (seen.has(dir)) return;
    seen.add(dir);
    locations.push({ dir, host });
  };
  for (const root of roots) for (const loc of PROJECT_SKILL_LOCATIONS) add(resolve(root, loc.dir), loc.host);
  const { paths, problems } = agentSkillsLocations(setting);
  for (const p of paths) for (const dir of resolveLocation(p, roots, home)) add(dir, hostOfFolder(dir));
  return { locations, problems };
}

function isDir(path: string): boolean {
  try {
    // statSync follows links: skills are often symlinked into .agents/skills.
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The folders directly inside `dir` (hidden ones left out, as the hosts do); none when it does not exist. */
export function childFolders(dir: string): string[] {
  if (!isDir(dir)) return [];
  return readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .map((name) => join(dir, name))
    .filter(isDir)
    .sort();
}

/** The SKILL.md files of one location (`<dir>/<name>/SKILL.md`). */
export function skillFilesIn(dir: string): string[] {
  return childFolders(dir)
    .map((folder) => join(folder, SKILL_FILE_NAME))
    .filter((file) => existsSync(file) && !isDir(file));
}

/** Reads one skill; a file that cannot be read is still listed, with why. */
export function readSkill(path: string, host: SkillHost): SkillInfo {
  const folder = dirname(path);
  const info: SkillInfo = {
    path,
    folder,
    name: basename(folder),
    host,
    hasEvals: existsSync(join(folder, 'evals', 'evals.json')),
    problems: [],
  };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    info.problems.push({ severity: 'error', message: `cannot read: ${(err as Error).message}`, line: 0 });
    return info;
  }
  const fm = parseFrontMatter(text);
  if (fm?.name?.trim()) info.name = fm.name.trim();
  if (fm?.description?.trim()) info.description = fm.description.trim();
  // The lint the editor's diagnostics and `skillopt validate` use: the same findings everywhere.
  info.problems = lintSkillFile(path, text).map((f) => ({
    severity: f.severity,
    message: f.message,
    line: f.range.startLine,
  }));
  return info;
}

/** The skills of every location, each SKILL.md once (the first location that holds it names its host). */
export function discoverSkills(locations: readonly SkillLocation[]): SkillInfo[] {
  const seen = new Set<string>();
  const skills: SkillInfo[] = [];
  for (const loc of locations) {
    for (const file of skillFilesIn(loc.dir)) {
      if (seen.has(file)) continue;
      seen.add(file);
      skills.push(readSkill(file, loc.host));
    }
  }
  return skills;
}
