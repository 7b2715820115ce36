/**
 * Per-task isolation for agent CLIs: a folder the product owns holds one directory per task with
 * the workspace (`work/`), a fresh home (`home/`) and a private temp folder (`tmp/`); the agent gets
 * an allow-listed environment whose HOME, XDG folders and CLI config folders all point inside it.
 * Nothing of the user's own setup reaches the agent unless a preset copies it on purpose (the
 * CLI's credentials file) or the user names a variable to pass through.
 */
import { resourceFiles, SKILL_RESOURCE_DIRS } from '../../skill/package/folder';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, parse } from 'node:path';

/** Variables every agent may see: where programs are, locale, time zone, proxies and CA bundles. */
export const BASE_ENV_ALLOW = [
  'PATH',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TZ',
  'USER',
  'LOGNAME',
  'SHELL',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  // Windows needs these to start programs at all.
  'SYSTEMROOT',
  'SystemRoot',
  'COMSPEC',
  'PATHEXT',
  'WINDIR',
] as const;

/** Instruction files agent CLIs pick up from the folders above the workspace. */
export const INSTRUCTION_FILES = [
  'CLAUDE.md',
  'CLAUDE.local.md',
  '.claude/CLAUDE.md',
  'AGENTS.md',
  'AGENTS.override.md',
  'GEMINI.md',
  '.github/copilot-instructions.md',
] as const;

export interface TaskDirs {
  /** The task's own folder; removing it removes everything below. */
  root: string;
  work: string;
  home: string;
  tmp: string;
}

/** The folder the product owns for agent workspaces: `<os temp>/skillopt-agents`. */
export function defaultAgentsRoot(): string {
  return join(tmpdir(), 'skillopt-agents');
}

export function ensurePrivateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch {
    // Not ours to change (a shared parent); the per-task folders below are still private.
  }
  return realpathSync(dir);
}

export function makeTaskDirs(agentsRoot: string): TaskDirs {
  const parent = ensurePrivateDir(agentsRoot);
  const root = realpathSync(mkdtempSync(join(parent, 'task-')));
  const dirs = { root, work: join(root, 'work'), home: join(root, 'home'), tmp: join(root, 'tmp') };
  for (const d of [dirs.work, dirs.home, dirs.tmp]) mkdirSync(d, { mode: 0o700 });
  return dirs;
}

export function removeTaskDirs(dirs: TaskDirs): void {
  rmSync(dirs.root, { recursive: true, force: true, maxRetries: 3 });
}

/** Every folder from `dir`'s parent up to the file-system root. */
export function ancestors(dir: string): string[] {
  const out: string[] = [];
  let cur = dirname(dir);
  const { root } = parse(dir);
  for (;;) {
    out.push(cur);
    if (cur === root) break;
    const up = dirname(cur);
    if (up === cur) break;
    cur = up;
  }
  return out;
}

/**
 * Skill folders Claude Code (`.claude/skills`) and Copilot CLI (`.github/skills`) discover in every
 * folder above their workspace, as the real CLIs do (seen against a loopback model): a project's own
 * skills, the one being trained among them, would be listed to the agent beside the candidate.
 */
export const SKILL_FOLDERS_ABOVE = ['.claude/skills', '.github/skills', '.agents/skills'] as const;

/** Instruction files and skill folders in the folders above `dir` (which an agent could read into its context). */
export function instructionFilesAbove(dir: string): string[] {
  const found: string[] = [];
  for (const a of ancestors(dir)) {
    for (const f of INSTRUCTION_FILES) {
      const p = join(a, f);
      if (existsSync(p)) found.push(p);
    }
    for (const f of SKILL_FOLDERS_ABOVE) {
      const p = join(a, f);
      if (hasSkill(p)) found.push(p);
    }
  }
  return found;
}

/**
 * Makes the workspace the root of an empty git repository (written by hand: git need not be
 * installed). Claude Code and Copilot CLI list the skills of every folder above their workspace up
 * to its repository's root (as the real CLIs do against a loopback model), so no project or shared
 * temp folder above it can add skills, or an old copy of the one being trained, to the task's.
 */
export function markProjectRoot(work: string): void {
  const git = join(work, '.git');
  for (const d of ['objects', 'refs/heads']) mkdirSync(join(git, d), { recursive: true });
  writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/main\n');
}

/** Whether `folder` holds a `<name>/SKILL.md`. */
function hasSkill(folder: string): boolean {
  try {
    return readdirSync(folder).some((n) => existsSync(join(folder, n, 'SKILL.md')));
  } catch {
    return false;
  }
}

/** The XDG and home variables of an isolated home, and where git stops looking for a repository. */
export function homeEnv(dirs: TaskDirs): Record<string, string> {
  return {
    HOME: dirs.home,
    USERPROFILE: dirs.home,
    XDG_CONFIG_HOME: join(dirs.home, '.config'),
    XDG_CACHE_HOME: join(dirs.home, '.cache'),
    XDG_DATA_HOME: join(dirs.home, '.local', 'share'),
    XDG_STATE_HOME: join(dirs.home, '.local', 'state'),
    APPDATA: join(dirs.home, 'AppData', 'Roaming'),
    LOCALAPPDATA: join(dirs.home, 'AppData', 'Local'),
    TMPDIR: dirs.tmp,
    TMP: dirs.tmp,
    TEMP: dirs.tmp,
    // Git stops at the task folder: a repository above it (workspaces kept in the user's project) is
    // not the agent's, and Copilot CLI reads AGENTS.md, CLAUDE.md, .github/instructions/… at its root.
    GIT_CEILING_DIRECTORIES: dirs.root,
  };
}

/** What every agent process of a task gets over its allow-listed environment, before its preset's own. */
export function taskProcessEnv(dirs: TaskDirs, taskId: string): Record<string, string> {
  return {
    ...homeEnv(dirs),
    NO_COLOR: '1',
    TERM: 'dumb',
    SKILLOPT_TASK_ID: taskId,
    SKILLOPT_WORKSPACE: dirs.work,
  };
}

/** The allow-listed part of `parent`: the base names plus `extra` (exact names). */
export function allowedEnv(parent: NodeJS.ProcessEnv, extra: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...BASE_ENV_ALLOW, ...extra]) {
    const v = parent[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

/** Removes task folders older than `maxAgeMs` that a crashed run left behind in `agentsRoot`. */
export function sweepStaleTaskDirs(agentsRoot: string, maxAgeMs: number): void {
  let names: string[];
  try {
    names = readdirSync(agentsRoot);
  } catch {
    return;
  }
  const now = Date.now();
  for (const n of names) {
    if (!n.startsWith('task-')) continue;
    const p = join(agentsRoot, n);
    try {
      if (now - statSync(p).mtimeMs > maxAgeMs) rmSync(p, { recursive: true, force: true });
    } catch {
      // Another process's folder, or already gone.
    }
  }
}

/**
 * The folders an Agent Skill keeps beside its SKILL.md, which the agent may open while it works.
 * Nothing else of the skill's folder goes to the agent: it often also holds the task data (with the
 * expected answers), the config and run folders.
 */
export { SKILL_RESOURCE_DIRS };

/**
 * Copies the files of the skill's resource folders (references/, scripts/, assets/) into the
 * workspace's skill directory: the files a skill folder is trained with, so hidden entries and
 * tools' folders (node_modules/, __pycache__/) stay behind here too.
 */
export function copySkillFolder(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const path of resourceFiles(from).files) {
    const target = join(to, ...path.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(from, ...path.split('/')), target);
  }
}

/** A digest of the resource folders' files (paths and contents), so cached answers follow their changes. */
export function skillResourcesDigest(from: string): string | undefined {
  const hash = createHash('sha256');
  let files = 0;
  // A symbolic link in them is refused here, before anything is spent (and before they are copied).
  for (const path of resourceFiles(from).files) {
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(from, ...path.split('/'))))
      .update('\0');
    files++;
  }
  return files ? hash.digest('hex').slice(0, 16) : undefined;
}

/**
 * Folders a CLI makes at a fixed place outside the task (TMPDIR does not move them), with how many
 * tasks of this process use each. One that was not there before this process's first task is
 * removed when no task uses it any more, if it is empty: a folder in use by another program of the
 * user's (a socket in it) stays.
 */
const fixedDirs = new Map<string, { users: number; preexisting: boolean }>();

export function enterFixedDirs(paths: readonly string[]): void {
  for (const p of paths) {
    const d = fixedDirs.get(p) ?? { users: 0, preexisting: existsSync(p) };
    d.users++;
    fixedDirs.set(p, d);
  }
}

export function leaveFixedDirs(paths: readonly string[]): void {
  for (const p of paths) {
    const d = fixedDirs.get(p);
    if (!d || --d.users > 0 || d.preexisting) continue;
    try {
      rmdirSync(p);
    } catch {
      // Not empty (another program uses it) or already gone.
    }
  }
}
