/**
 * Counts the engine's file-system calls. CPU per step swings with the machine's load and its file
 * system, but how many times a step creates a folder, writes or renames a file does not: this
 * count, times what one call costs on a given machine, is the run-folder part of the overhead.
 * It works by wrapping the `node:fs` functions for the duration of one run (the engine calls them
 * through the module object, so the wrappers see every call).
 */
import { createRequire } from 'node:module';

export const COUNTED_FS_CALLS = [
  'mkdirSync',
  'writeFileSync',
  'renameSync',
  'appendFileSync',
  'readFileSync',
  'existsSync',
  'statSync',
  'rmSync',
] as const;
export type FsCallName = (typeof COUNTED_FS_CALLS)[number] | 'promises.readFile' | 'promises.writeFile';

export interface FsCall {
  /** performance.now() at the call. */
  at: number;
  name: FsCallName;
}

type Fn = (...args: unknown[]) => unknown;

// The module object itself (an ES namespace import would be a copy whose members cannot be replaced).
const fsModule = createRequire(__filename)('node:fs') as Record<string, Fn> & {
  promises: Record<string, Fn>;
};

/** Run `fn` with every counted fs function wrapped; returns its value and the calls in order. */
export async function countFsCalls<T>(fn: () => Promise<T>): Promise<{ value: T; calls: FsCall[] }> {
  const calls: FsCall[] = [];
  const mod = fsModule;
  const promises = fsModule.promises;
  const restore: Array<() => void> = [];
  // Node implements some calls with others (appendFileSync calls writeFileSync): count the outer one only.
  let depth = 0;
  const wrap = (target: Record<string, Fn>, key: string, name: FsCallName): void => {
    const original = target[key];
    target[key] = function (this: unknown, ...args: unknown[]): unknown {
      if (depth === 0) calls.push({ at: performance.now(), name });
      depth++;
      try {
        return original.apply(this, args);
      } finally {
        depth--;
      }
    };
    restore.push(() => (target[key] = original));
  };
  for (const name of COUNTED_FS_CALLS) wrap(mod, name, name);
  wrap(promises, 'readFile', 'promises.readFile');
  wrap(promises, 'writeFile', 'promises.writeFile');
  try {
    return { value: await fn(), calls };
  } finally {
    for (const r of restore) r();
  }
}

/** Calls per name inside [from, to) (performance.now() times). */
export function countIn(
  calls: readonly FsCall[],
  from: number,
  to: number,
): Partial<Record<FsCallName, number>> {
  const out: Partial<Record<FsCallName, number>> = {};
  for (const c of calls) if (c.at >= from && c.at < to) out[c.name] = (out[c.name] ?? 0) + 1;
  return out;
}
