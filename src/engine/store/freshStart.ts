/**
 * `--fresh`: empty a run folder so a new run starts in it. It holds the folder's lock while it
 * deletes, so a run another process is writing there is refused (naming the holder) rather than
 * deleted under it. Only what a run writes is deleted: a run trained into a folder of the person's
 * own (`--out .` beside the config, the skill and the tasks) leaves those files alone.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isTempName } from './atomic';
import { writeError } from './ioErrors';
import { packageDirOf, RUN_DIR, RUN_FILE } from './layout';
import { acquireRunLock } from './runLock';

/**
 * The top-level names a run writes (layout.ts); nothing else in a run folder is the run's. A skill
 * file of a skill-folder run has its package folder beside it (best_skill/, packageDirOf).
 */
const RUN_ENTRIES: ReadonlySet<string> = new Set([...Object.values(RUN_FILE), ...Object.values(RUN_DIR)]);
const PACKAGE_DIRS = Object.values(RUN_FILE)
  .filter((f) => f.endsWith('.md'))
  .map(packageDirOf);

function isRunEntry(name: string): boolean {
  // The lock's own temp and takeover-guard files start with its name; a package folder's write
  // leaves `.tmp-`/`.old-` siblings after a kill (skill/package/folder.ts).
  return (
    RUN_ENTRIES.has(name) ||
    name.startsWith(RUN_FILE.lock) ||
    isTempName(name) ||
    PACKAGE_DIRS.some((d) => name === d || name.startsWith(`${d}.tmp-`) || name.startsWith(`${d}.old-`))
  );
}

/**
 * Deletes what a run wrote in run folder `dir`, but the lock it takes while doing so; returns the
 * names it kept because no run writes them (the person's own files).
 */
export function clearRunFolder(dir: string): string[] {
  const release = acquireRunLock(dir);
  const kept: string[] = [];
  try {
    for (const entry of readdirSync(dir)) {
      if (entry === RUN_FILE.lock) continue;
      if (!isRunEntry(entry)) {
        kept.push(entry);
        continue;
      }
      const path = join(dir, entry);
      try {
        // A link is removed itself; what it points to is never followed.
        rmSync(path, { recursive: true, force: true });
      } catch (err) {
        throw writeError(err, path);
      }
    }
  } finally {
    release();
  }
  return kept.sort();
}
