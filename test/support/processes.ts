import { readFileSync } from 'node:fs';

/** Alive means running: a zombie (exited, not yet reaped by init) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

/** Whether `pid` is gone within `ms` (about five seconds unless told). */
export async function waitUntilDead(pid: number, ms = 5_000): Promise<boolean> {
  for (let i = 0; i < ms / 50; i++) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
