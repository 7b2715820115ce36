/** A task's input files in the agent's workspace, under the name the eval file gives them. */
import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';

/** Copies `path` to `<work>/<name>`; a name that would leave the workspace (absolute, `..`) keeps only its file name. */
export function copyInputFile(path: string, work: string, name: string): void {
  const rel = normalize(name);
  const safe = isAbsolute(rel) || rel.split(/[\\/]/).includes('..') ? basename(rel) : rel;
  const to = join(work, safe);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(path, to);
}
