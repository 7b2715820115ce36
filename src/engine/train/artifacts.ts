import type { z } from 'zod';
import { writeJsonAtomic } from '../store/atomic';
import { readArtifact } from '../store/runSchemas';

/**
 * Resume without paying twice: the artifact saved at `path` when a previous process got that far,
 * or `compute()`'s value, saved before it is used (so a stop right after it costs nothing).
 * `schema` checks the fields a resumed run relies on. `onComputed` runs only for a fresh value.
 */
export async function cachedArtifact<T>(
  path: string,
  schema: z.ZodType,
  compute: () => Promise<T>,
  onComputed?: (value: T) => void,
): Promise<T> {
  const saved = readArtifact<T>(path, schema);
  if (saved !== undefined) return saved;
  const value = await compute();
  writeJsonAtomic(path, value);
  onComputed?.(value);
  return value;
}
