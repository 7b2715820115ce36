/**
 * Keys only one part reads (a benchmark, a backend), set for a run that does not use that part:
 * found and worded the same way wherever they are checked, one line per part, never silently dropped.
 */
import { isDeepStrictEqual } from 'node:util';
import type { z } from 'zod';

/** The keys set to something other than blank or their default (a reference config's defaults say nothing). */
export function keysSet<K extends string>(
  values: Readonly<Partial<Record<K, unknown>>>,
  fields: Readonly<Record<K, z.ZodType>>,
  keys: readonly K[],
): K[] {
  return keys.filter((k) => {
    const value = values[k];
    const unset = value === undefined || value === null || value === '';
    return !unset && !isDeepStrictEqual(value, fields[k].parse(undefined));
  });
}

/** `a, b: read only by <owner> (<needs>), so they have no effect on this run[: <current>]`. */
export function idleKeysLine(
  dotted: readonly string[],
  owner: string,
  needs: string,
  current?: string,
): string {
  const verb = dotted.length > 1 ? 'they have' : 'it has';
  return `${dotted.join(', ')}: read only by ${owner} (${needs}), so ${verb} no effect on this run${current ? `: ${current}` : ''}`;
}
