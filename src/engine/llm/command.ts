/**
 * The `command` target backend: runs an agent CLI (Claude Code, Codex, Copilot, or any program)
 * once per task in a fresh temporary workspace, like the reference's exec targets (§9.4).
 *
 * Workspace layout:
 *   .agents/skills/<skillName>/SKILL.md   YAML front matter (name, description), then the skill
 *   task.md                               the task text
 *
 * The command is an argv template: an array, or a string split shell-style (quotes and
 * backslashes only). No shell is involved, so pipes, redirections and `$(...)` are refused rather
 * than passed on as literal text. Placeholders are substituted inside each argument:
 *   {task_file}  absolute path of task.md
 *   {skill_file} absolute path of SKILL.md
 *   {workspace}  absolute path of the workspace (also the working directory)
 *   {prompt}     the task text, preceded by one line that points at the skill and task.md
 *
 * The reply text is the program's stdout; the trace carries exit code, signal, stderr, duration
 * and whether output was cut. A non-zero exit or a timeout is a reply (the task is scored from what
 * the agent printed, normally as a failure), not an exception. Only a program that cannot be
 * started is an error. On a timeout or cancellation the whole process group is terminated
 * (SIGTERM, then SIGKILL after a grace period); stragglers left in the group after a normal exit
 * are killed too. A process that moves itself into another session (setsid) escapes this.
 *
 * Agent CLIs act on files and run tools, so the backend refuses to exist unless the caller states
 * that the workspace is trusted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { cancelledError, SkillOptError } from '../errors';
import type { Logger } from '../log';
import { writeFileAtomic } from '../store/atomic';
import type { BackendReply, ChatBackend, ChatRequest, TaskContext } from './types';

export type CommandPresetName = 'claude' | 'codex' | 'copilot';

const PRESETS: Record<CommandPresetName, readonly string[]> = {
  claude: ['claude', '-p', '{prompt}', '--output-format', 'text'],
  codex: ['codex', 'exec', '{prompt}'],
  copilot: ['copilot', '-p', '{prompt}'],
};

/** The argv template of a known agent CLI. */
export function commandPreset(name: string): string[] {
  if (!Object.hasOwn(PRESETS, name)) {
    throw new SkillOptError('config', `Unknown command preset "${name}"`, {
      key: 'model.target_command',
      fix: `use one of ${Object.keys(PRESETS).join(', ')}, or write the command out`,
    });
  }
  return [...PRESETS[name as CommandPresetName]];
}

const SHELL_ONLY = new Set(['|', '&', ';', '<', '>', '`']);
/** Characters a backslash escapes outside quotes; elsewhere it stays literal (Windows paths). */
const ESCAPABLE = new Set(['\\', "'", '"', ' ', '\t', '\n', '$', '|', '&', ';', '<', '>', '`', '(', ')']);

/** Splits a command string into argv the way a POSIX shell would quote it, without expansions. */
export function splitCommand(command: string): string[] {
  const bad = (problem: string): SkillOptError =>
    new SkillOptError('config', problem, {
      key: 'model.target_command',
      fix: 'the command runs without a shell: write one program and its arguments, and use {task_file}, {skill_file}, {workspace} or {prompt} instead of shell tricks',
    });
  const args: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < command.length) {
    const ch = command[i];
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      if (inWord) args.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (ch === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw bad(`Unterminated single quote in target command: ${command}`);
      word += command.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (ch === '"') {
      inWord = true;
      i++;
      for (;;) {
        if (i >= command.length) throw bad(`Unterminated double quote in target command: ${command}`);
        const c = command[i];
        if (c === '"') break;
        if (c === '$' && command[i + 1] === '(') throw bad('Command substitution "$(...)" is not supported');
        if (c === '`') throw bad('Command substitution with backquotes is not supported');
        if (c === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1])) {
          word += command[i + 1];
          i += 2;
          continue;
        }
        word += c;
        i++;
      }
      i++;
    } else if (ch === '\\' && i + 1 < command.length && ESCAPABLE.has(command[i + 1])) {
      word += command[i + 1];
      inWord = true;
      i += 2;
    } else if (SHELL_ONLY.has(ch) || (ch === '$' && command[i + 1] === '(')) {
      throw bad(`"${ch === '$' ? '$(' : ch}" in the target command needs a shell, which is not used`);
    } else {
      word += ch;
      inWord = true;
      i++;
    }
  }
  if (inWord) args.push(word);
  if (args.length === 0 || args[0] === '') throw bad('The target command is empty');
  return args;
}

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
}

export interface RunProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
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

/**
 * Runs one program in its own process group and collects bounded output. Resolves for any exit
 * (including timeout); rejects with SkillOptError('config') if the program cannot be started and
 * with SkillOptError('cancelled') if the signal fires.
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
    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const cleanup = (): void => {
      for (const t of timers) clearTimeout(t);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    const finish = (): void => {
      if (settled) return;
      settled = true;
      cleanup();
      if (aborted) {
        reject(cancelledError('The target command'));
        return;
      }
      const o = out.read();
      const e = err.read();
      resolve({
        stdout: o.text,
        stderr: e.text,
        exitCode,
        signal: exitSignal,
        timedOut,
        durationMs: Math.round(performance.now() - started),
        truncated: o.truncated || e.truncated,
        stdoutBytes: out.total,
        stderrBytes: err.total,
      });
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

    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (child.pid !== undefined || settled) return;
      settled = true;
      cleanup();
      const missing = e.code === 'ENOENT';
      reject(
        new SkillOptError(
          'config',
          missing
            ? `The target command "${argv[0]}" was not found`
            : `The target command "${argv[0]}" could not be started (${e.code ?? e.message})`,
          {
            key: 'model.target_command',
            fix: missing
              ? 'install the agent CLI or give the full path of the program in model.target_command'
              : 'check that the program is executable by you',
          },
          { cause: e },
        ),
      );
    });
    child.on('exit', (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      // Helpers the agent left behind in its group would keep running (and keep our pipes open).
      if (child.pid !== undefined) killTree(child.pid, 'SIGKILL');
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

export interface CommandBackendOptions {
  /** argv template, or a command string split shell-style. */
  command: string | readonly string[];
  /** Must be true: agent CLIs run tools and edit files. */
  trusted: boolean;
  /** Label for accounting and run records; defaults to the program name. */
  model?: string;
  /** Wall-clock limit per task (default 600 s). */
  timeoutMs?: number;
  /** Wait between SIGTERM and SIGKILL (default 5 s). */
  killGraceMs?: number;
  /** Bytes of stdout (and of stderr) kept for the trajectory; head and tail survive (default 64 KiB). */
  maxOutputBytes?: number;
  /** Leave each workspace on disk and report its path in the trace. */
  keepWorkspaces?: boolean;
  /** Parent of the per-task workspaces (default: the OS temp directory). */
  workspaceRoot?: string;
  /** Skill directory name under `.agents/skills/`; overrides the request's `task.skillName`. */
  skillName?: string;
  /** `description` in the SKILL.md front matter. */
  skillDescription?: string;
  /** Extra environment variables for the agent. */
  env?: Record<string, string>;
  logger?: Logger;
}

const DEFAULT_DESCRIPTION =
  'Guidance for the task in this workspace, learned from earlier attempts. Read it before you start and follow it.';

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function renderSkillFile(task: TaskContext, description: string): string {
  // A skill that already brings its own front matter is written unchanged.
  if (/^---\r?\n/.test(task.skill)) return task.skill;
  const front = yamlStringify({ name: task.skillName, description }, { lineWidth: 0 });
  return `---\n${front}---\n\n${task.skill.trimEnd()}\n`;
}

export function renderPrompt(task: TaskContext): string {
  return `Use the skill in .agents/skills/${task.skillName}/SKILL.md. The task is also saved in task.md.\n\n${task.prompt}`;
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export class CommandBackend implements ChatBackend {
  readonly provider = 'command';
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  private readonly argv: readonly string[];

  constructor(private readonly options: CommandBackendOptions) {
    if (options.trusted !== true) {
      throw new SkillOptError(
        'untrusted',
        'The command target backend runs an agent program that can read and change files',
        {
          key: 'model.target_command',
          fix: 'trust this workspace first (VS Code: "Workspaces: Manage Workspace Trust"), then start the run again',
        },
      );
    }
    this.argv = typeof options.command === 'string' ? splitCommand(options.command) : [...options.command];
    if (this.argv.length === 0 || !this.argv[0]) {
      throw new SkillOptError('config', 'The target command is empty', {
        key: 'model.target_command',
        fix: 'give the agent program and its arguments, for example ["claude", "-p", "{prompt}"]',
      });
    }
    this.model = options.model ?? basename(this.argv[0]);
    this.cacheParams = { command: [...this.argv] };
  }

  async call(req: ChatRequest, signal: AbortSignal): Promise<BackendReply> {
    if (req.role !== 'target') {
      throw new SkillOptError('config', 'The command backend can only serve the target role', {
        key: 'model.optimizer_backend',
        fix: 'use a chat model backend for the optimizer',
      });
    }
    if (!req.task) {
      throw new SkillOptError(
        'internal',
        `A ${req.stage} call reached the command backend without a task context`,
      );
    }
    const task: TaskContext = { ...req.task, skillName: this.options.skillName ?? req.task.skillName };
    if (!SKILL_NAME.test(task.skillName) || task.skillName === '..') {
      throw new SkillOptError('config', `"${task.skillName}" cannot be used as a skill directory name`, {
        key: 'model.target_skill_name',
        fix: 'use letters, digits, ".", "_" and "-" only',
      });
    }
    const root = this.options.workspaceRoot ?? tmpdir();
    const workspace = realpathSync(mkdtempSync(join(root, 'skillopt-task-')));
    const keep = this.options.keepWorkspaces === true;
    try {
      const skillFile = join(workspace, '.agents', 'skills', task.skillName, 'SKILL.md');
      const taskFile = join(workspace, 'task.md');
      writeFileAtomic(skillFile, renderSkillFile(task, this.options.skillDescription ?? DEFAULT_DESCRIPTION));
      writeFileAtomic(taskFile, task.prompt.endsWith('\n') ? task.prompt : `${task.prompt}\n`);
      const values: Record<string, string> = {
        task_file: taskFile,
        skill_file: skillFile,
        workspace,
        prompt: renderPrompt(task),
      };
      const argv = this.argv.map((arg) =>
        arg.replace(/\{(task_file|skill_file|workspace|prompt)\}/g, (_, name: string) => values[name]),
      );
      this.options.logger?.log(
        'debug',
        'command',
        `task ${task.taskId}: ${this.argv.join(' ')} in ${workspace}`,
      );
      const run = await runProcess(argv, {
        cwd: workspace,
        env: {
          ...process.env,
          ...this.options.env,
          SKILLOPT_TASK_ID: task.taskId,
          SKILLOPT_WORKSPACE: workspace,
        },
        timeoutMs: this.options.timeoutMs ?? 600_000,
        killGraceMs: this.options.killGraceMs ?? 5_000,
        maxOutputBytes: this.options.maxOutputBytes ?? 64 * 1024,
        signal,
      });
      if (run.timedOut || run.exitCode !== 0) {
        const how = run.timedOut ? 'timed out' : `exited with ${run.exitCode ?? run.signal}`;
        this.options.logger?.log('warn', 'command', `task ${task.taskId}: ${this.argv[0]} ${how}`);
      }
      return {
        text: run.stdout,
        usage: {
          promptTokens: estimateTokens(task.skill) + estimateTokens(task.prompt),
          completionTokens: estimateTokens(run.stdout),
        },
        model: this.model,
        trace: {
          exitCode: run.exitCode,
          signal: run.signal,
          timedOut: run.timedOut,
          stderr: run.stderr,
          durationMs: run.durationMs,
          truncated: run.truncated,
          stdoutBytes: run.stdoutBytes,
          stderrBytes: run.stderrBytes,
          // CLIs report no token counts; these are length-based estimates.
          usageEstimated: true,
          ...(keep ? { workspace } : {}),
        },
      };
    } finally {
      if (!keep) rmSync(workspace, { recursive: true, force: true });
    }
  }
}
