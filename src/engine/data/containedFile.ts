/**
 * Files that task data names (eval input files, task images), kept inside the folders they may come
 * from: a data file from a cloned repository must not be able to send `~/.ssh/id_rsa` to a model.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileKind } from '../regularFile';
import { isInside } from '../store/atomic';

export type ContainedLookup =
  /** The file's real path: a regular file inside a root. */
  | { found: string }
  /** Where it was looked for: nothing there. */
  | { missing: string[] }
  /** Something that is not a regular file (a folder, a FIFO, a device): never read. */
  | { notFile: string; kind: string }
  /** It would leave every root: by its text (absolute, `..`), or through a symbolic link. */
  | { outside: 'path' | 'link'; path: string };

/**
 * `name` looked up under each of `bases` in turn (an absolute name as it is). What it names must lie
 * inside one of `roots` both by its text and by its real path, so neither `..` nor a link leads out.
 */
export function findContained(
  name: string,
  bases: readonly string[],
  roots: readonly string[],
): ContainedLookup {
  const candidates = [...new Set(isAbsolute(name) ? [resolve(name)] : bases.map((b) => resolve(b, name)))];
  const inside = candidates.filter((c) => roots.some((r) => isInside(c, resolve(r))));
  if (!inside.length) return { outside: 'path', path: candidates[0] };
  const realRoots = roots.map((r) => realPath(r) ?? resolve(r));
  let notFile: { notFile: string; kind: string } | undefined;
  for (const c of inside) {
    const real = realPath(c);
    if (real === undefined) continue;
    if (!realRoots.some((r) => isInside(real, r))) return { outside: 'link', path: c };
    // A device or a FIFO is never read: it could hang the load or never end.
    const st = statSync(real);
    if (st.isFile()) return { found: real };
    notFile ??= { notFile: c, kind: fileKind(st) };
  }
  return notFile ?? { missing: inside };
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
