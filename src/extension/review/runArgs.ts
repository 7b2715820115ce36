/** Run id from a command argument: a string, or a tree item / run view carrying one. */
export function runIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string' && arg) return arg;
  if (typeof arg !== 'object' || arg === null) return undefined;
  const o = arg as Record<string, unknown>;
  for (const key of ['runId', 'id', 'dir']) {
    const v = o[key];
    if (typeof v === 'string' && v) return v;
  }
  const run = o.run;
  return run && run !== arg ? runIdOf(run) : undefined;
}
