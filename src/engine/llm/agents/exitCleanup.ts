/**
 * What the agent runs of this process hold outside it: the process groups of running CLIs and the
 * task folders (a home with copied credentials among them). A run stopped the ordinary way ends
 * each of them itself; this is for a process that exits at once (a second Ctrl-C, a closed
 * terminal, a host that disconnects): on `exit` what each running agent has spent so far is
 * recorded, every live group is killed and every task folder removed, synchronously, so no agent
 * keeps running (and spending) unseen, its tokens reach the ledger, and nothing stays in tmp.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';

const lastWords = new Set<() => void>();
const groups = new Set<number>();
const folders = new Set<string>();
let hooked = false;

function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', endAgentsNow);
}

/** A CLI started in its own process group (`pid` leads it). */
export function trackAgentGroup(pid: number): void {
  hook();
  groups.add(pid);
}

export function untrackAgentGroup(pid: number): void {
  groups.delete(pid);
}

/** A task folder that is removed when its task ends (not one the user asked to keep). */
export function trackTaskFolder(path: string): void {
  hook();
  folders.add(path);
}

export function untrackTaskFolder(path: string): void {
  folders.delete(path);
}

/**
 * `record` runs if this process exits at once before the returned function is called: it records,
 * synchronously, what a running agent has spent so far (its output and task folder still there).
 */
export function atExitNow(record: () => void): () => void {
  hook();
  lastWords.add(record);
  return () => lastWords.delete(record);
}

/**
 * Records what the running agents spent (the ledger is appended synchronously), then kills every
 * live agent group with SIGKILL and removes every task folder, synchronously.
 */
export function endAgentsNow(): void {
  for (const record of lastWords) {
    try {
      record();
    } catch {
      // An unreadable output or ledger: the groups and folders are still ended below.
    }
  }
  lastWords.clear();
  for (const pid of groups) {
    try {
      if (process.platform === 'win32') {
        spawnSync('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true });
      } else process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  groups.clear();
  for (const dir of folders) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Nothing more can be done while exiting; the next run's sweep removes it.
    }
  }
  folders.clear();
}
