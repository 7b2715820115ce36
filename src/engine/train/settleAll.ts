/**
 * Promise.all that waits for every promise before it throws the first error: work running side
 * by side (the test evaluations, the slow update beside the meta skill) has all stopped writing
 * to the run folder, and every provider batch it sent is recorded, when the failure or stop is handled.
 */
export async function settleAll<T extends readonly unknown[] | []>(
  ps: T,
): Promise<{ -readonly [P in keyof T]: Awaited<T[P]> }> {
  const results = await Promise.allSettled<readonly unknown[]>(ps);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  return Promise.all(ps);
}
