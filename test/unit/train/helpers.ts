import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/protocol/events';
import { canonicalJson } from '../../../src/engine/llm/cache';
import type { ChatRequest, ChatResult, ModelClient, ModelRole, Stage } from '../../../src/engine/llm/types';
import { prepareRun, trainPrepared, type PreparedRun } from '../../../src/engine/run';
import type { TrainOutcome } from '../../../src/engine/train/trainer';
import type { StepRecord } from '../../../src/protocol/records';

/** A target that answers at once (`text`, or what `text` makes of the request) and records each request. */
export function fakeTarget(
  text: string | ((req: ChatRequest) => string),
): ModelClient & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    role: 'target',
    backend: 'fake',
    model: 'fake',
    requests,
    chat: (req) => {
      requests.push(req);
      const reply: ChatResult = {
        text: typeof text === 'string' ? text : text(req),
        usage: { promptTokens: 1, completionTokens: 1 },
        backend: 'fake',
        model: 'fake',
        seconds: 0,
        attempts: 1,
        cached: false,
      };
      return Promise.resolve(reply);
    },
  };
}

export const exampleConfig = join(__dirname, '..', '..', '..', 'examples', 'house-style', 'skillopt.yaml');

export function tempDir(prefix: string): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** The bundled example with the sim backend and the response cache on, in its own directory. */
export function prepareSimCached(
  outDir: string,
  cacheDir: string,
  overrides: string[] = [],
  configPath = exampleConfig,
): PreparedRun {
  return prepareRun({
    configPath,
    outDir,
    overrides: ['cache.enabled=true', `cache.dir=${cacheDir}`, ...overrides],
  });
}

/** The bundled example with the sim backend; caching off so every run does its own work. */
export function prepareSim(
  outDir: string,
  overrides: string[] = [],
  configPath = exampleConfig,
): PreparedRun {
  return prepareRun({ configPath, outDir, overrides: ['cache.enabled=false', ...overrides] });
}

export interface RunResult {
  outcome: TrainOutcome;
  events: EngineEvent[];
}

/**
 * Train until done, or abort when `abortWhen` first returns true (a crash at that point). With a
 * call log, the log sees every event (to tag calls with the step and stage) and may stop the run too.
 */
export async function runSim(
  prepared: PreparedRun,
  abortWhen?: (e: EngineEvent, all: EngineEvent[]) => boolean,
  calls?: CallLog,
): Promise<RunResult> {
  const events: EngineEvent[] = [];
  const controller = new AbortController();
  calls?.attach(controller);
  const outcome = await trainPrepared(prepared, {
    emit: (e) => {
      events.push(e);
      calls?.noteEvent(e);
      if (abortWhen && !controller.signal.aborted && abortWhen(e, events)) controller.abort();
    },
    signal: controller.signal,
    resumeCommand: 'resume',
    cancelBatchCommand: 'cancel-batch',
  });
  return { outcome, events };
}

/** History without what legitimately differs between a resumed and an uninterrupted run. */
export function comparableHistory(outDir: string): Array<Partial<StepRecord>> {
  const history = JSON.parse(readFileSync(join(outDir, 'history.json'), 'utf8')) as StepRecord[];
  return history.map((r) => {
    const { timing: _t, tokens: _k, wall_time_s: _w, fallbacks: _f, ...rest } = r;
    return rest;
  });
}

export function read(outDir: string, ...parts: string[]): string {
  return readFileSync(join(outDir, ...parts), 'utf8');
}

/** Rows a rollout directory has on disk (0 when it has none yet). */
export function rowsIn(dir: string): number {
  const file = join(dir, 'results.jsonl');
  return existsSync(file)
    ? read(file)
        .split('\n')
        .filter((l) => l.trim()).length
    : 0;
}

export function readJson<T>(outDir: string, ...parts: string[]): T {
  return JSON.parse(read(outDir, ...parts)) as T;
}

/** Wrap the optimizer client so a test can inspect every request it made (in order). */
export function recordRequests(prepared: PreparedRun): ChatRequest[] {
  const seen: ChatRequest[] = [];
  const inner = prepared.models.optimizer;
  prepared.models.optimizer = {
    role: inner.role,
    backend: inner.backend,
    model: inner.model,
    chat: (req, signal) => {
      seen.push(req);
      return inner.chat(req, signal);
    },
  };
  return seen;
}

/** One model call as the run made it, tagged with where the loop was when it was asked. */
export interface CallRecord {
  role: ModelRole;
  /** The accounting stage of the request (`rollout`, `analyst`, `slow_rollout`, ...). */
  stage: Stage;
  /** Step and loop stage of the latest `stage/started` event when the call was made. */
  step: number;
  phase: string;
  /** Canonical text of everything the reply depends on: equal requests, equal key. */
  key: string;
  request: ChatRequest;
  /** A reply came back from the backend (not from the response cache): this call was paid for. */
  paid: boolean;
  /** Answered from the response cache (free). */
  cached: boolean;
  /** A reply reached the engine (paid or cached). */
  answered: boolean;
}

export interface CallLogOptions {
  /** Stop the run right after this reply reached the engine (the crash point). */
  stopAfterReply?: (call: CallRecord, log: CallLog) => boolean;
  /**
   * Calls to make one at a time, in the order asked: the simulated models answer at once, so without
   * this every call of a stage is already answered when the first reply arrives and no stop can land
   * between two of them.
   */
  serialize?: (call: CallRecord) => boolean;
  /** Holds a call back until the promise settles; one still held when the run stops is not sent. */
  hold?: (call: CallRecord) => Promise<void> | undefined;
}

/**
 * Records every optimizer and target call of a run (wrapping both clients, outside the response
 * cache), so a test can count what each stage asked for and what was paid for.
 */
export class CallLog {
  readonly calls: CallRecord[] = [];
  private step = 0;
  private phase = 'start';
  private controller?: AbortController;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    prepared: PreparedRun,
    private readonly opts: CallLogOptions = {},
  ) {
    prepared.models.optimizer = this.wrap(prepared.models.optimizer);
    prepared.models.target = this.wrap(prepared.models.target);
  }

  attach(controller: AbortController): void {
    this.controller = controller;
  }

  noteEvent(e: EngineEvent): void {
    // The meta skill runs beside the slow update; its calls carry their own stage, so the phase
    // stays the slow update's for the slow update's own calls.
    if (e.type === 'stage/started' && e.stage !== 'meta_skill') {
      this.step = e.step;
      this.phase = e.stage;
    }
  }

  /** Paid calls only. */
  paid(filter: Partial<Pick<CallRecord, 'stage' | 'step' | 'phase' | 'role'>> = {}): CallRecord[] {
    return this.calls.filter(
      (c) =>
        c.paid &&
        (filter.stage === undefined || c.stage === filter.stage) &&
        (filter.step === undefined || c.step === filter.step) &&
        (filter.phase === undefined || c.phase === filter.phase) &&
        (filter.role === undefined || c.role === filter.role),
    );
  }

  /** Paid calls per accounting stage. */
  paidByStage(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const c of this.paid()) out[c.stage] = (out[c.stage] ?? 0) + 1;
    return out;
  }

  private wrap(inner: ModelClient): ModelClient {
    return {
      role: inner.role,
      backend: inner.backend,
      model: inner.model,
      chat: async (req, signal) => {
        const call: CallRecord = {
          role: req.role,
          stage: req.stage,
          step: this.step,
          phase: this.phase,
          key: requestKey(req),
          request: req,
          paid: false,
          cached: false,
          answered: false,
        };
        this.calls.push(call);
        let release = (): void => undefined;
        if (this.opts.serialize?.(call)) {
          const previous = this.queue;
          this.queue = new Promise((resolve) => (release = resolve));
          await previous;
        }
        try {
          const held = this.opts.hold?.(call);
          if (held) {
            await held;
            signal?.throwIfAborted();
          }
          const reply = await inner.chat(req, signal);
          call.cached = reply.cached;
          call.paid = !reply.cached;
          call.answered = true;
          const stop = this.opts.stopAfterReply;
          if (stop && this.controller && !this.controller.signal.aborted && stop(call, this))
            this.controller.abort();
          return reply;
        } finally {
          release();
        }
      },
    };
  }
}

/** What a reply depends on (the response cache's key material, plus role and stage). */
export function requestKey(req: ChatRequest): string {
  return canonicalJson({
    role: req.role,
    stage: req.stage,
    messages: req.messages,
    task: req.task,
    maxTokens: req.maxTokens,
    temperature: req.temperature,
    reasoningEffort: req.reasoningEffort,
    thinkingBudget: req.thinkingBudget,
  });
}

/** Multiset of request keys: how many times each distinct request was paid for. */
export function paidKeys(...logs: CallLog[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const log of logs) for (const c of log.paid()) out.set(c.key, (out.get(c.key) ?? 0) + 1);
  return out;
}

export interface Spend {
  total: unknown;
  steps: unknown[];
  ledgerCalls: number;
}

/** What a run paid, from summary.json, history.json and the ledger. */
export function spend(dir: string): Spend {
  const summary = readJson<{ token_summary: { _total: unknown } }>(dir, 'summary.json');
  const history = readJson<Array<{ step: number; tokens: unknown }>>(dir, 'history.json');
  const ledger = read(dir, 'ledger.jsonl')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { calls?: number });
  return {
    total: summary.token_summary._total,
    steps: history.map((r) => [r.step, r.tokens]),
    ledgerCalls: ledger.reduce((n, r) => n + (r.calls ?? 0), 0),
  };
}

/**
 * `skillopt train <config> --out <outDir> --json --cfg-options ...overrides` in a child process,
 * killed with SIGKILL at the first event `killAt` matches; rejects when it ends any other way.
 */
export function trainUntilKilled(
  config: string,
  outDir: string,
  overrides: readonly string[],
  killAt: (e: EngineEvent) => boolean,
): Promise<void> {
  const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts');
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [
      '--import',
      'tsx',
      cli,
      'train',
      config,
      '--out',
      outDir,
      '--json',
      '--cfg-options',
      ...overrides,
    ]);
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) if (killAt(JSON.parse(line) as EngineEvent)) child.kill('SIGKILL');
    });
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`exited without the kill (${String(signal)})`)),
    );
  });
}
