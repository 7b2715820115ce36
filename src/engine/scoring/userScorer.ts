import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { cancelledError, SkillOptError } from '../errors';
import type { TaskItem } from '../data/tasks';
import type { Scorer, ScoreResult } from './scorers';

/** Scorers written by the user: a JS module exporting a function, or any program speaking JSON. */

export interface ModuleScorerOptions {
  path: string;
  /** Named export to call; default: the module itself, its default export, or `score`. */
  export?: string;
  name?: string;
}

export interface CommandScorerOptions {
  /** An argv array (no shell) or a shell command line. */
  command: string | string[];
  /** Per-item wall-clock limit; default 60 s. */
  timeout_s?: number;
  name?: string;
}

export interface UserScorerContext {
  /** Relative scorer paths and the command's working folder resolve against this (the config's folder). */
  baseDir: string;
}

type ScoreFunction = (prediction: string, item: TaskItem) => unknown;

const outputCap = 1 << 20;
const scoreShape = 'return {hard: 0 or 1, soft: 0..1, reason: "..."}, a number in 0..1, or a boolean';

/**
 * A scorer from a CommonJS or ES module (`.js`, `.cjs`, `.mjs`). It is loaded once, when the scorer is
 * created, so a missing file or a syntax error stops the run before any model is called.
 */
export function createModuleScorer(opts: ModuleScorerOptions, ctx: UserScorerContext): Scorer {
  const file = resolve(ctx.baseDir, opts.path);
  const name = opts.name ?? `module:${opts.path}`;
  if (!existsSync(file)) {
    throw new SkillOptError('config', `Scorer module ${opts.path} does not exist`, {
      file,
      key: 'scorer.path',
      fix: 'give the path of a .js/.cjs/.mjs file, relative to the config file',
    });
  }
  let loaded: unknown;
  try {
    // Node ≥ 20.19 loads ES modules through require() too (without top-level await).
    loaded = createRequire(file)(file);
  } catch (err) {
    throw new SkillOptError(
      'config',
      `Scorer module ${opts.path} failed to load: ${(err as Error).message}`,
      { file, key: 'scorer.path', fix: 'fix the module so that `node` can load it' },
      { cause: err },
    );
  }
  const fn = pickFunction(loaded, opts.export);
  if (!fn) {
    const what = opts.export ? `an export named "${opts.export}" that is a function` : 'a function';
    throw new SkillOptError('config', `Scorer module ${opts.path} does not export ${what}`, {
      file,
      key: 'scorer.path',
      fix: 'export a function (prediction, item) => {hard, soft, reason} as module.exports, default or `score`',
    });
  }
  return {
    name,
    async score(prediction: string, item: TaskItem, signal?: AbortSignal): Promise<ScoreResult> {
      if (signal?.aborted) throw cancelledError('Scoring');
      let value: unknown;
      try {
        value = await fn(prediction, item);
      } catch (err) {
        throw new SkillOptError(
          'scorer',
          `Scorer "${name}" threw on task "${item.id}": ${(err as Error).message ?? String(err)}`,
          { file, fix: 'make the scorer return a score for every task instead of throwing' },
          { cause: err },
        );
      }
      return toScoreResult(value, name, item.id);
    },
  };
}

/**
 * A scorer run as a child process per item: it reads `{prediction, item: {id, input, answers, fields}}`
 * as JSON on stdin and prints `{hard, soft, reason}` as JSON on stdout. Anything else (a non-zero exit,
 * a timeout, output that is not a score) is an error naming the scorer and the task, because silently
 * scoring 0 would teach the optimizer from a broken grader.
 */
export function createCommandScorer(opts: CommandScorerOptions, ctx: UserScorerContext): Scorer {
  const argv = typeof opts.command === 'string' ? null : opts.command;
  const line = typeof opts.command === 'string' ? opts.command : opts.command.join(' ');
  if ((argv && (argv.length === 0 || argv[0].trim() === '')) || line.trim() === '') {
    throw new SkillOptError('config', 'Scorer command is empty', {
      key: 'scorer.command',
      fix: 'give the program to run, e.g. ["python3", "score.py"]',
    });
  }
  const timeoutS = opts.timeout_s ?? 60;
  if (!(timeoutS > 0) || !Number.isFinite(timeoutS)) {
    throw new SkillOptError('config', `Scorer timeout_s must be a positive number, got ${timeoutS}`, {
      key: 'scorer.timeout_s',
      fix: 'set timeout_s to the seconds one item may take, e.g. 60',
    });
  }
  const name = opts.name ?? `command:${line}`;
  return {
    name,
    async score(prediction: string, item: TaskItem, signal?: AbortSignal): Promise<ScoreResult> {
      if (signal?.aborted) throw cancelledError('Scoring');
      const input = JSON.stringify({
        prediction,
        item: { id: item.id, input: item.input, answers: item.answers, fields: item.fields },
      });
      const run = await runOnce(argv, line, input, ctx.baseDir, timeoutS, signal);
      const fail = (problem: string): SkillOptError =>
        new SkillOptError('scorer', `Scorer "${name}" ${problem} on task "${item.id}"`, {
          fix: 'run the command by hand with the task JSON on stdin and make it print {"hard": 0|1, "soft": 0..1, "reason": "..."}',
        });
      if (run.kind === 'spawn-error') throw fail(`could not start (${run.message})`);
      if (run.kind === 'timeout') throw fail(`timed out after ${timeoutS} s`);
      if (run.code !== 0) {
        const tail = run.stderr.trim().slice(-500);
        throw fail(
          `exited with ${run.code === null ? `signal ${run.signal}` : `code ${run.code}`}${tail ? `: ${tail}` : ''}`,
        );
      }
      const parsed = parseOutput(run.stdout);
      if (parsed === undefined) {
        const shown = run.stdout.trim().slice(0, 200);
        throw fail(
          `printed no JSON score${shown ? ` (got ${JSON.stringify(shown)})` : ' (stdout was empty)'}`,
        );
      }
      return toScoreResult(parsed, name, item.id);
    },
  };
}

type RunOutcome =
  | { kind: 'exit'; code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }
  | { kind: 'timeout' }
  | { kind: 'spawn-error'; message: string };

function runOnce(
  argv: string[] | null,
  line: string,
  input: string,
  cwd: string,
  timeoutS: number,
  signal: AbortSignal | undefined,
): Promise<RunOutcome> {
  return new Promise<RunOutcome>((resolvePromise, reject) => {
    // Own process group on POSIX so a timeout also stops whatever a shell command started.
    const group = process.platform !== 'win32';
    const child = argv
      ? spawn(argv[0], argv.slice(1), { cwd, stdio: 'pipe', detached: group })
      : spawn(line, { cwd, stdio: 'pipe', shell: true, detached: group });
    let stdout = '';
    let stderr = '';
    let settled = false;
    const kill = (): void => {
      try {
        if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const settle = (outcome: RunOutcome | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (outcome instanceof Error) reject(outcome);
      else resolvePromise(outcome);
    };
    const onAbort = (): void => {
      kill();
      settle(cancelledError('Scoring'));
    };
    const timer = setTimeout(() => {
      kill();
      settle({ kind: 'timeout' });
    }, timeoutS * 1000);
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (stdout.length < outputCap) stdout += chunk;
    });
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < outputCap) stderr += chunk;
    });
    child.on('error', (err) => settle({ kind: 'spawn-error', message: err.message }));
    child.on('close', (code, sig) => settle({ kind: 'exit', code, signal: sig, stdout, stderr }));
    // A scorer that exits without reading stdin makes this write fail with EPIPE; its exit status decides.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** The whole output as JSON, else its last non-empty line (scorers may print progress first). */
function parseOutput(stdout: string): unknown {
  const text = stdout.trim();
  if (text === '') return undefined;
  for (const candidate of [
    text,
    text
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '')
      .pop() ?? '',
  ]) {
    try {
      return JSON.parse(candidate) as unknown;
    } catch {
      // Try the next form.
    }
  }
  return undefined;
}

function pickFunction(loaded: unknown, exportName: string | undefined): ScoreFunction | undefined {
  const get = (obj: unknown, key: string): unknown =>
    (typeof obj === 'object' || typeof obj === 'function') && obj !== null
      ? (obj as Record<string, unknown>)[key]
      : undefined;
  const candidates = exportName
    ? [get(loaded, exportName)]
    : [loaded, get(loaded, 'default'), get(get(loaded, 'default'), 'default'), get(loaded, 'score')];
  const fn = candidates.find((c) => typeof c === 'function');
  return fn as ScoreFunction | undefined;
}

/**
 * Accept what a user scorer returns and check it: `{hard, soft?, reason?}` (hard 0/1 or a boolean, soft
 * 0..1, defaulting to hard), a number in 0..1 (soft; hard when it is 1), or a boolean.
 */
export function toScoreResult(value: unknown, scorer: string, itemId: string): ScoreResult {
  const bad = (problem: string): SkillOptError =>
    new SkillOptError(
      'scorer',
      `Scorer "${scorer}" returned an invalid score for task "${itemId}": ${problem}`,
      {
        fix: scoreShape,
      },
    );
  if (typeof value === 'boolean') {
    const hard = value ? 1 : 0;
    return { hard, soft: hard, reason: defaultReason(hard, hard) };
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > 1)
      throw bad(`a number score must be in 0..1, got ${value}`);
    const hard = value >= 1 ? 1 : 0;
    return { hard, soft: value, reason: defaultReason(hard, value) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(`got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  const rec = value as Record<string, unknown>;
  let hard: 0 | 1;
  if (typeof rec.hard === 'boolean') hard = rec.hard ? 1 : 0;
  else if (rec.hard === 0 || rec.hard === 1) hard = rec.hard;
  else if (rec.hard === undefined && typeof rec.soft === 'number') hard = rec.soft >= 1 ? 1 : 0;
  else throw bad(`hard must be 0 or 1, got ${JSON.stringify(rec.hard) ?? 'nothing'}`);
  let soft: number = hard;
  if (rec.soft !== undefined) {
    if (typeof rec.soft !== 'number' || !Number.isFinite(rec.soft) || rec.soft < 0 || rec.soft > 1) {
      throw bad(`soft must be a number in 0..1, got ${JSON.stringify(rec.soft)}`);
    }
    soft = rec.soft;
  }
  if (rec.reason !== undefined && typeof rec.reason !== 'string') {
    throw bad(`reason must be a string, got ${typeof rec.reason}`);
  }
  const reason =
    typeof rec.reason === 'string' && rec.reason.trim() !== '' ? rec.reason : defaultReason(hard, soft);
  return { hard, soft, reason };
}

function defaultReason(hard: number, soft: number): string {
  return `${hard ? 'pass' : 'fail'} (soft=${soft.toFixed(2)})`;
}
