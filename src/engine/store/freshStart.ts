/**
 * `--fresh`: empty a run folder so a new run starts in it. It holds the folder's lock while it
 * deletes, so a run another process is writing there is refused (naming the holder) rather than
 * deleted under it.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeError } from './ioErrors';
import { RUN_FILE } from './layout';
import { acquireRunLock } from './runLock';

/** Deletes everything in run folder `dir` but the lock it takes while doing so. */
export function clearRunFolder(dir: string): void {
  const release = acquireRunLock(dir);
  try {
    for (const entry of readdirSync(dir)) {
      if (entry === RUN_FILE.lock) continue;
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
}
