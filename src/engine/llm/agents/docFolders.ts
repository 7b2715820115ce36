/**
 * Document folders an agent target reads in its workspace (OfficeQA's corpus, as the reference's exec
 * targets find it under `docs/`). Each task gets its own read-only copy: a link back to the user's
 * folder would let the agent change the originals, and agent CLIs refuse (Claude Code, Copilot) or
 * sandbox paths outside their working folder. Only regular files are copied; a link that leads out of
 * its folder is refused, links to folders are not followed (as the document tools walk), and the
 * copy is bounded in file size and in total.
 */
import { createHash } from 'node:crypto';
import { chmodSync, constants, copyFileSync, mkdirSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { SkillOptError } from '../../errors';

/** A file larger than this is left out (OfficeQA's tools do not read it either). */
export const MAX_FOLDER_FILE_BYTES = 32 * 1024 * 1024;
/** All of one folder's files together: copied for every task, so a whole disk never is. */
export const MAX_FOLDER_BYTES = 1024 * 1024 * 1024;
export const MAX_FOLDER_FILES = 200_000;

export interface FolderListing {
  root: string;
  /** Regular files (or links to one inside the folder), by `/`-separated path relative to the root. */
  files: Array<{ rel: string; path: string; size: number }>;
  bytes: number;
  /** Files over MAX_FOLDER_FILE_BYTES, left out. */
  skipped: string[];
  /** Paths, sizes and modification times: keys cached agent answers to the folder's contents. */
  digest: string;
}

/** Where the listing is refused: the config key to name and what to do about it. */
export interface FolderOwner {
  key: string;
  fix: string;
}

function inside(root: string, real: string): boolean {
  const rel = relative(root, real);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The files of `root` to copy, in sorted walk order; refuses a link out, too many files or bytes. */
export function listFolder(root: string, owner: FolderOwner): FolderListing {
  const realRoot = realpathSync(root);
  const files: FolderListing['files'] = [];
  const skipped: string[] = [];
  const hash = createHash('sha256');
  let bytes = 0;
  const refuse = (what: string): never => {
    throw new SkillOptError('config', `the document folder ${realRoot} ${what}`, owner);
  };
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        walk(full);
        continue;
      }
      if (e.isSymbolicLink()) {
        let real: string;
        try {
          real = realpathSync(full);
        } catch {
          continue; // A dangling link leads nowhere.
        }
        if (!inside(realRoot, real)) refuse(`holds ${full}, a link to ${real} outside it`);
        if (!statSync(real).isFile()) continue;
      } else if (!e.isFile()) continue;
      const st = statSync(full);
      const size = st.size;
      const rel = relative(realRoot, full).split(sep).join('/');
      if (size > MAX_FOLDER_FILE_BYTES) {
        skipped.push(rel);
        continue;
      }
      if (files.length >= MAX_FOLDER_FILES) refuse(`holds more than ${MAX_FOLDER_FILES} files`);
      bytes += size;
      if (bytes > MAX_FOLDER_BYTES) {
        refuse(
          `holds more than ${MAX_FOLDER_BYTES / 2 ** 20} MiB of files, copied into every task's workspace`,
        );
      }
      files.push({ rel, path: full, size });
      hash.update(`${rel}\0${size}\0${st.mtimeMs}\n`);
    }
  };
  walk(realRoot);
  return { root: realRoot, files, bytes, skipped, digest: hash.digest('hex').slice(0, 16) };
}

/** A folder name inside the workspace, refused when it would leave it. */
export function workspaceFolder(work: string, name: string): string {
  const rel = normalize(name);
  if (!rel || isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) {
    throw new SkillOptError('internal', `"${name}" cannot be a folder in the agent's workspace`);
  }
  return join(work, rel);
}

/**
 * Copies `root`'s files to `dest` read-only (a copy-on-write clone where the file system has them).
 * The listing is taken again, so a link planted after the run started is refused here too.
 */
export function copyFolderReadOnly(root: string, dest: string, owner: FolderOwner): FolderListing {
  const listing = listFolder(root, owner);
  mkdirSync(dest, { recursive: true });
  for (const f of listing.files) {
    const to = join(dest, ...f.rel.split('/'));
    mkdirSync(join(to, '..'), { recursive: true });
    copyFileSync(f.path, to, constants.COPYFILE_FICLONE);
    // The folders stay writable (the task folder is removed afterwards); the documents are not.
    chmodSync(to, 0o444);
  }
  return listing;
}
