/**
 * One agent process: its own process group, bounded output, a wall-clock limit, cancellation.
 * On a timeout or cancellation the whole process group is terminated (SIGTERM, then SIGKILL after
 * a grace period); stragglers left in the group after a normal exit are killed too. A process that
 * moves itself into another session (setsid) escapes this.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { cancelledError } from '../../errors';
import { trackAgentGroup, untrackAgentGroup } from './exitCleanup';

/** Keeps the first and last `max/2` bytes of a stream and counts the rest. */
class HeadTail {
  private readonly head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  total = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(max: number) {
    this.headMax = Math.floor(max / 2);
    this.tailMax = max - this.headMax;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.headMax) {
      const take = Math.min(this.headMax - this.headLen, chunk.length);
      this.head.push(chunk.subarray(0, take));
      this.headLen += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    while (this.tail.length > 1 && this.tailLen - this.tail[0].length >= this.tailMax) {
      this.tailLen -= this.tail.shift()!.length;
    }
  }

  read(): { text: string; truncated: boolean } {
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailMax) tail = tail.subarray(tail.length - this.tailMax);
    const head = Buffer.concat(this.head);
    const cut = this.total - head.length - tail.length;
    if (cut <= 0) return { text: Buffer.concat([head, tail]).toString('utf8'), truncated: false };
    const marker = `\n[... ${cut} of ${this.total} bytes cut here by SkillOpt ...]\n`;
    return { text: head.toString('utf8') + marker + tail.toString('utf8'), truncated: true };
  }
}

export interface ProcessResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  truncated: boolean;
  stdoutBytes: number;
  stderrBytes: number;
  /** The signal fired while it ran: it was stopped, and its output holds what it had done. */
  cancelled: boolean;
  /** Ended by `stopOn`: it printed that it keeps failing the same way. */
  gaveUp?: boolean;
}

export interface RunProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Ends the program (as a timeout does) once `times` lines of its stdout match `line`. */
  stopOn?: { line: RegExp; times: number };
  /** Given, once the program started, a way to read its output so far (for a process exiting at once). */
  onStart?: (soFar: () => ProcessResult) => void;
}

const isWindows = process.platform === 'win32';

function killTree(pid: number, signal: NodeJS.Signals): void {
  if (isWindows) {
    spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on(
      'error',
      () => {
        // Nothing more can be done; the process may already be gone.
      },
    );
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

/** The program could not be started: not found (`ENOENT`), not executable (`EACCES`), ... */
export class SpawnError extends Error {
  override readonly name = 'SpawnError';
  constructor(
    readonly program: string,
    readonly code: string,
  ) {
    super(`${program}: ${code}`);
  }
}

/**
 * Runs one program in its own process group and collects bounded output. Resolves for any exit
 * (including timeout and cancellation: `cancelled`, with the output so far); rejects with
 * SpawnError if the program cannot be started and with SkillOptError('cancelled') if the signal
 * had fired before it started.
 */
export function runProcess(argv: readonly string[], opts: RunProcessOptions): Promise<ProcessResult> {
  if (opts.signal?.aborted) return Promise.reject(cancelledError('The target command'));
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const out = new HeadTail(opts.maxOutputBytes);
    const err = new HeadTail(opts.maxOutputBytes);
    const child = spawn(argv[0], argv.slice(1), {
      cwd: opts.cwd,
      env: opts.env,
      detached: !isWindows,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    // Killed with this process if it exits before the run ends the agent (exitCleanup.ts).
    if (child.pid !== undefined) trackAgentGroup(child.pid);
    let timedOut = false;
    let aborted = false;
    let gaveUp = false;
    let matched = 0;
    let partial = '';
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const cleanup = (): void => {
      for (const t of timers) clearTimeout(t);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    const soFar = (): ProcessResult => {
      const o = out.read();
      const e = err.read();
      return {
        stdout: o.text,
        stderr: e.text,
        exitCode,
        signal: exitSignal,
        timedOut,
        durationMs: Math.round(performance.now() - started),
        truncated: o.truncated || e.truncated,
        stdoutBytes: out.total,
        stderrBytes: err.total,
        cancelled: aborted,
        ...(gaveUp ? { gaveUp } : {}),
      };
    };
    if (child.pid !== undefined) opts.onStart?.(soFar);
    const finish = (): void => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(soFar());
    };
    const terminate = (): void => {
      if (child.pid === undefined) return;
      const pid = child.pid;
      killTree(pid, 'SIGTERM');
      const hard = setTimeout(() => killTree(pid, 'SIGKILL'), opts.killGraceMs);
      hard.unref();
      timers.push(hard);
    };
    function onAbort(): void {
      aborted = true;
      terminate();
    }

    child.stdout.on('data', (c: Buffer) => {
      out.push(c);
      if (!opts.stopOn || gaveUp) return;
      const lines = (partial + c.toString('utf8')).split('\n');
      partial = lines.pop()!.slice(-4096);
      matched += lines.filter((l) => opts.stopOn!.line.test(l)).length;
      if (matched >= opts.stopOn.times) {
        gaveUp = true;
        terminate();
      }
    });
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (child.pid !== undefined || settled) return;
      settled = true;
      cleanup();
      reject(new SpawnError(argv[0], e.code ?? e.message));
    });
    child.on('exit', (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      // Helpers the agent left behind in its group would keep running (and keep our pipes open).
      if (child.pid !== undefined) {
        killTree(child.pid, 'SIGKILL');
        untrackAgentGroup(child.pid);
      }
      // A straggler outside the group may still hold the pipes; do not wait for it forever.
      const drain = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, opts.killGraceMs);
      drain.unref();
      timers.push(drain);
    });
    child.on('close', finish);

    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timeout = setTimeout(() => {
      timedOut = true;
      terminate();
    }, opts.timeoutMs);
    timeout.unref();
    timers.push(timeout);
  });
}

/**
 * The full path of `program` as a spawn would find it on `PATH` (with PATHEXT on Windows), or
 * undefined. A program given with a directory is checked as it stands.
 */
export function findOnPath(program: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const exts = isWindows ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';')] : [''];
  const runnable = (p: string): boolean => {
    try {
      accessSync(p, isWindows ? fsConstants.F_OK : fsConstants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/') || (isWindows && program.includes('\\'))) {
    return exts.map((e) => program + e).find(runnable);
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const e of exts) {
      const p = join(dir, program + e);
      if (runnable(p)) return p;
    }
  }
  return undefined;
}
