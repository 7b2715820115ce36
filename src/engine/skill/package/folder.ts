/**
 * A skill folder on disk ⇄ the package text the loop trains (text.ts). The folder is read as
 * SKILL.md plus the resource folders agents open (references/, scripts/, assets/); anything else in
 * it (task data, configs, run folders) stays out, with a notice. Text files are trained; binary and
 * over-large files are carried read-only: their bytes are copied from the folder they were read from.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { decodeUtf8 } from '../../data/utf8';
import { SkillOptError } from '../../errors';
import { writeFileAtomic } from '../../store/atomic';
import {
  joinPackage,
  SKILL_FILE,
  splitPackage,
  type PackageReadOnlyFile,
  type PackageTextFile,
} from './text';

/** The folders an Agent Skill keeps beside SKILL.md, which the agent may open while it works. */
export const SKILL_RESOURCE_DIRS = ['references', 'scripts', 'assets'] as const;

/**
 * A file larger than this is carried read-only: it is not trained, and a package the loop reads
 * back from a run folder is split the same way whatever the config says.
 */
export const PACKAGE_TEXT_FILE_MAX = 128 * 1024;

/**
 * Where the bytes of each read-only file were seen, by digest, in the order seen (the skill folder
 * first, then the run's copies), for writing them into snapshots and workspaces.
 */
const readOnlySources = new Map<string, string[]>();

function digest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

export interface ReadPackage {
  text: string;
  /** One line per entry of the folder left out of the package. */
  notices: string[];
}

/** True for a folder holding a SKILL.md. */
export function isSkillFolder(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory() && existsSync(join(path, SKILL_FILE));
}

/**
 * Reads a skill folder. `readSkill` reads SKILL.md with the single-file checks; the resource
 * folders are walked in sorted order so the same folder always gives the same text.
 */
export function readPackageFolder(folder: string, readSkill: (path: string) => string): ReadPackage {
  const skill = readSkill(join(folder, SKILL_FILE));
  const files: PackageTextFile[] = [];
  const readOnly: PackageReadOnlyFile[] = [];
  const notices: string[] = [];
  const leftOut: string[] = [];
  const resources = resourceFiles(folder);
  for (const entry of readdirSync(folder).sort()) {
    if (entry === SKILL_FILE) continue;
    if (resources.dirs.includes(entry)) continue;
    leftOut.push(entry);
  }
  leftOut.push(...resources.leftOut);
  for (const path of resources.files) {
    const abs = join(folder, ...path.split('/'));
    if (/\s/.test(path)) {
      leftOut.push(path);
      continue;
    }
    const bytes = readFileSync(abs);
    const decoded =
      bytes.length <= PACKAGE_TEXT_FILE_MAX && !bytes.includes(0) ? decodeUtf8(bytes) : undefined;
    if (decoded && 'text' in decoded)
      files.push({ path, text: decoded.text, ...(isExecutable(abs) ? { executable: true } : {}) });
    else {
      const sha = digest(bytes);
      remember(sha, abs);
      readOnly.push({ path, bytes: bytes.length, sha });
    }
  }
  if (leftOut.length) {
    notices.push(
      `skill folder ${folder}: only SKILL.md and ${SKILL_RESOURCE_DIRS.join('/, ')}/ are part of the skill (without hidden entries, ${LEFT_OUT_DIRS.join('/, ')}/ and names with spaces); left out: ${leftOut.join(', ')}`,
    );
  }
  // A file SKILL.md points to that no chat target can be given: said, since its answers lack it.
  const named = readOnly.filter((f) => [skill, ...files.map((t) => t.text)].some((t) => t.includes(f.path)));
  if (named.length) {
    notices.push(
      `skill folder ${folder}: ${named.map((f) => `${f.path} (${f.bytes} bytes)`).join(', ')} ${named.length === 1 ? 'is' : 'are'} named by the skill but binary or over ${PACKAGE_TEXT_FILE_MAX / 1024} KiB: never shown to a model, so a chat target answers without ${named.length === 1 ? 'it' : 'them'} (an agent target gets ${named.length === 1 ? 'it' : 'them'} in its folder); split a large text file into smaller ones to have it sent`,
    );
  }
  return { text: joinPackage({ skill, files, readOnly }), notices };
}

/**
 * Folders a script's tools fill in beside it (installed packages, compiled caches): they are not
 * written as part of a skill, can hold thousands of files and links out of the folder (a virtual
 * environment's interpreter), and would fill every optimizer prompt and run-folder copy.
 */
export const LEFT_OUT_DIRS = ['node_modules', '__pycache__'] as const;

/** An entry inside the resource folders that is not part of the skill: hidden, or a tool's folder. */
export function isLeftOut(name: string): boolean {
  return name.startsWith('.') || (LEFT_OUT_DIRS as readonly string[]).includes(name);
}

/**
 * The resource folders of skill folder `folder` that it holds, and their regular files (`references/…`,
 * sorted), walked without following a symbolic link: a link is refused, since through one a skill
 * folder would carry files from elsewhere on the disk (a key, a system folder, a loop back into
 * itself) into the prompts, the run folder and the agents' workspaces. Hidden entries and tools'
 * folders (`isLeftOut`) are not walked: they are named in `leftOut`.
 */
export function resourceFiles(folder: string): { dirs: string[]; files: string[]; leftOut: string[] } {
  const dirs: string[] = [];
  const files: string[] = [];
  const leftOut: string[] = [];
  const walk = (rel: string, into: string[]): void => {
    const entries = readdirSync(join(folder, ...rel.split('/')), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = `${rel}/${entry.name}`;
      if (isLeftOut(entry.name)) {
        leftOut.push(path);
        continue;
      }
      if (entry.isSymbolicLink()) refuseLink(folder, path);
      if (entry.isDirectory()) walk(path, into);
      else if (entry.isFile()) into.push(path);
    }
  };
  for (const dir of SKILL_RESOURCE_DIRS) {
    const stat = lstatSync(join(folder, dir), { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) refuseLink(folder, dir);
    if (!stat?.isDirectory()) continue;
    dirs.push(dir);
    // Sorted per folder, the folders in their fixed order: the same files give the same text.
    const inDir: string[] = [];
    walk(dir, inDir);
    files.push(...inDir.sort());
  }
  return { dirs, files, leftOut };
}

function refuseLink(folder: string, path: string): never {
  const abs = join(folder, ...path.split('/'));
  let to = '';
  try {
    to = ` to ${readlinkSync(abs)}`;
  } catch {
    // The link's target is only named when it can be read.
  }
  throw new SkillOptError('skill', `the skill folder holds a symbolic link: ${path}${to}`, {
    file: folder,
    fix: `replace ${path} by a copy of what it points to, or remove it (a skill is trained, shown to the models and installed from its own files only)`,
  });
}

/** Reads a package folder the loop wrote (a snapshot or a candidate): no limits beyond the split rule. */
export function readRunPackage(folder: string): string {
  return readPackageFolder(folder, (p) => readFileSync(p, 'utf8')).text;
}

/**
 * Writes a package text as a folder, replacing what was there (a snapshot rewritten at an epoch end
 * must not keep a file the new version dropped). Read-only files are copied from where they were read.
 */
export function writePackageFolder(folder: string, text: string): void {
  const pkg = splitPackage(text);
  const tmp = `${folder}.tmp-${process.pid}`;
  // One process writes a run (the run lock): other processes' leftovers are a killed writer's.
  for (const left of siblings(folder, 'tmp')) rmSync(left, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileAtomic(join(tmp, SKILL_FILE), pkg.skill);
  writeTextFiles(tmp, pkg.files);
  for (const f of pkg.readOnly) copyReadOnlyFile(f, join(tmp, ...f.path.split('/')), folder);
  // Swapped in by renames, so a folder of one whole version is always there (or, after a kill
  // between the two renames, its previous version under `.old-`, which readers fall back to).
  const old = `${folder}.old-${process.pid}`;
  if (existsSync(folder)) renameSync(folder, old);
  renameSync(tmp, folder);
  for (const left of [old, ...siblings(folder, 'old')]) rmSync(left, { recursive: true, force: true });
  for (const f of pkg.readOnly) remember(f.sha, join(folder, ...f.path.split('/')));
}

/** True when the owner may run the file (Windows has no such bit: never there). */
function isExecutable(path: string): boolean {
  return (statSync(path).mode & 0o100) !== 0;
}

/**
 * Writes a package's text files under `folder`, an executable one with its bits (the copy stays
 * runnable where the skill is used: snapshots, best_skill/, an agent's workspace).
 */
export function writeTextFiles(folder: string, files: readonly PackageTextFile[]): void {
  for (const f of files) {
    const to = join(folder, ...f.path.split('/'));
    writeFileAtomic(to, f.text);
    if (f.executable) chmodSync(to, 0o755);
  }
}

/** Leftovers of a process killed while writing `folder`: its `.tmp-` and `.old-` siblings. */
function siblings(folder: string, kind: 'tmp' | 'old'): string[] {
  const dir = dirname(folder);
  const prefix = `${basename(folder)}.${kind}-`;
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => n.startsWith(prefix))
        .map((n) => join(dir, n))
    : [];
}

/** The folder of a package written by writePackageFolder, or the whole previous version a kill left. */
export function packageFolderOnDisk(folder: string): string | undefined {
  if (existsSync(folder)) return folder;
  return siblings(folder, 'old')[0];
}

/** The size and modification time at which a source was last found to hold its digest's bytes. */
const verified = new Map<string, string>();

/** Adds a place a read-only file's bytes were seen. */
function remember(sha: string, path: string): void {
  const known = readOnlySources.get(sha) ?? [];
  if (!known.includes(path)) readOnlySources.set(sha, [...known, path]);
}

/**
 * Writes the bytes of read-only file `file` (and its permission bits) at `to`, from the first place
 * they were seen that still holds exactly them: a file changed in the skill folder since the run
 * read it is passed over, so every copy is byte for byte the file the run trained with.
 */
export function copyReadOnlyFile(file: PackageReadOnlyFile, to: string, where?: string): void {
  for (const from of readOnlySources.get(file.sha) ?? []) {
    const stat = statSync(from, { throwIfNoEntry: false });
    if (!stat?.isFile()) continue;
    const stamp = `${file.sha} ${stat.size} ${stat.mtimeMs}`;
    // Hashed once per version of the file (a large asset is copied for every task of an agent target).
    if (verified.get(from) !== stamp) {
      if (digest(readFileSync(from)) !== file.sha) continue;
      verified.set(from, stamp);
    }
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
    chmodSync(to, stat.mode & 0o777);
    return;
  }
  throw new SkillOptError(
    'skill',
    `the bytes of the skill's read-only file ${file.path} are no longer on disk as the run read them`,
    {
      ...(where ? { file: where } : {}),
      fix: 'start the run again from the skill folder, or put the file back as it was (a read-only file is copied from where it was read)',
    },
  );
}
