/**
 * Running the real engine against the latency server and recording what a benchmark needs: the
 * stage windows from the engine's events, every model call (with the service time the server
 * imposes on it), and this process's CPU per step. The server runs as a child process so that its
 * CPU (the scripted models, the HTTP serving) is never counted as the engine's.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { EngineEvent } from '../src/protocol/events';
import type { ChatRequest, ChatResult, ModelClient } from '../src/engine/llm/types';
import { prepareRun, trainPrepared, type PreparedRun } from '../src/engine/run';
import type { TrainOutcome } from '../src/engine/train/trainer';
import type { StepRecord } from '../src/protocol/records';
import { scriptedOptimizerModel, scriptedTargetModel } from '../test/support/loopback/scriptedModels';
import { fnv1a, latencyFor, requestKey, type LatencyProfile } from './latency';
import type { Role } from './lowerBound';
import { mergeNodeOf, type CallRecord, type StageWindow } from './phases';
import type { LiveSettings, ServedRequest, ServerStats } from './server';

export const repoRoot = join(__dirname, '..');
export const benchConfig = join(__dirname, 'fixtures', 'bench.yaml');

export interface ServerSettings extends LatencyProfile {
  concurrency: number;
  busy?: boolean;
  tasks?: string;
}

export interface ChildServer {
  url: string;
  settings: ServerSettings;
  stats(): Promise<ServerStats>;
  log(): Promise<ServedRequest[]>;
  reset(): Promise<void>;
  configure(live: Partial<LiveSettings>): Promise<LiveSettings>;
  close(): Promise<void>;
}

/** Start `bench/server.ts` in its own Node process and wait until it listens. */
export async function spawnServer(settings: ServerSettings): Promise<ChildServer> {
  const args = [
    '--import',
    'tsx',
    join(__dirname, 'server.ts'),
    '--json',
    '--port',
    '0',
    '--latency-ms',
    String(settings.latencyMs),
    '--jitter-ms',
    String(settings.jitterMs),
    '--seed',
    String(settings.seed),
    '--concurrency',
    String(settings.concurrency),
    ...(settings.busy === false ? ['--no-busy'] : []),
    ...(settings.tasks ? ['--tasks', settings.tasks] : []),
  ];
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, args, { cwd: repoRoot });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    const fail = (why: string): void => reject(new Error(`bench server did not start: ${why}\n${stderr}`));
    child.once('exit', (code) => fail(`exited with ${code}`));
    lines.once('line', (line) => {
      try {
        resolve((JSON.parse(line) as { url: string }).url);
      } catch {
        fail(`unexpected output ${line}`);
      }
    });
  });
  const origin = url.replace(/\/v1$/, '');
  const get = async <T>(path: string, method = 'GET', body?: unknown): Promise<T> => {
    const res = await fetch(`${origin}${path}`, {
      method,
      ...(body !== undefined
        ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
        : {}),
    });
    if (!res.ok) throw new Error(`bench server ${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };
  return {
    url,
    settings,
    stats: () => get<ServerStats>('/bench/stats'),
    log: () => get<ServedRequest[]>('/bench/log'),
    reset: async () => {
      await get('/bench/reset', 'POST');
    },
    configure: (live) => get<LiveSettings>('/bench/config', 'POST', live),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin.end();
      }),
  };
}

/** Overrides that point the bench config at a server, with the engine's caps equal to the server's. */
export function serverOverrides(
  server: { url: string; settings: ServerSettings },
  cacheDir: string,
): string[] {
  const c = server.settings.concurrency;
  return [
    `model.optimizer_base_url=${server.url}`,
    `model.target_base_url=${server.url}`,
    `model.optimizer=${scriptedOptimizerModel}`,
    `model.target=${scriptedTargetModel}`,
    `limits.optimizer_concurrency=${c}`,
    `limits.target_concurrency=${c}`,
    `gradient.analyst_workers=${c}`,
    `cache.dir=${cacheDir}`,
  ];
}

export interface CpuSample {
  step: number;
  /** CPU of this process (user + system) spent in the step, in ms. */
  cpuMs: number;
  wallMs: number;
  /** The step's span, ms from the start of the run. */
  startMs: number;
  endMs: number;
}

export interface RecordedRun {
  prepared: PreparedRun;
  outcome: TrainOutcome | undefined;
  /** Error message when the run threw (a stop by `abortWhen` is not an error). */
  error?: string;
  wallMs: number;
  cpuMs: number;
  /** process.hrtime of the run's time origin, in µs (V8 CPU profiles use the same clock). */
  originHrUs: number;
  /** performance.now() of the run's time origin: every `…Ms` time here is relative to it. */
  originMs: number;
  windows: StageWindow[];
  calls: CallRecord[];
  steps: CpuSample[];
  history: StepRecord[];
  events: EngineEvent[];
}

const mono = (): number => performance.now();

/** Engine stages that make calls of each request stage label. */
const STAGES_OF_KIND: Record<string, string[]> = {
  rollout: ['rollout'],
  analyst: ['rollout', 'reflect'],
  deep_reflect: ['rollout', 'reflect'],
  meta_reflect: ['rollout', 'reflect', 'meta_skill'],
  merge: ['aggregate'],
  ranking: ['select'],
  lr_autonomous: ['select'],
  rewrite: ['update'],
  selection: ['evaluate', 'baseline', 'slow_update', 'final_selection'],
  slow_rollout: ['slow_update', 'meta_skill'],
  slow_update: ['slow_update'],
  meta_skill: ['meta_skill'],
  test: ['test'],
  eval: ['test'],
};
const cpuNow = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** Record every call a client makes: stage label, the engine stage open at the time, service time, cache. */
function recording(
  client: ModelClient,
  role: Role,
  profile: LatencyProfile,
  where: (kind: string) => { stage: string; step: number },
  t0: number,
  sink: CallRecord[],
): ModelClient {
  return {
    role: client.role,
    backend: client.backend,
    model: client.model,
    async chat(req: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
      const at = where(req.stage);
      const startMs = mono() - t0;
      const result = await client.chat(req, signal);
      const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
      const merge = req.stage === 'merge' ? mergeNodeOf(user) : undefined;
      const key = requestKey(req.messages.map((m) => m.content));
      sink.push({
        role,
        kind: req.stage,
        stage: at.stage,
        step: at.step,
        ...(merge ? { mergeNode: merge } : {}),
        serviceMs: latencyFor(key, profile),
        hash: fnv1a(key),
        promptChars: req.messages.reduce((n, m) => n + m.content.length, 0),
        cached: result.cached,
        startMs,
        endMs: mono() - t0,
      });
      return result;
    },
  };
}

export interface TrainOptions {
  server: ChildServer;
  outDir: string;
  cacheDir: string;
  overrides?: string[];
  configPath?: string;
  /** Stop the run (as a crash would) when this first returns true. */
  abortWhen?: (e: EngineEvent) => boolean;
  /** Keep every event (memory) — off for timed runs. */
  keepEvents?: boolean;
}

export function prepareBenchRun(opts: Omit<TrainOptions, 'abortWhen' | 'keepEvents'>): PreparedRun {
  return prepareRun({
    configPath: opts.configPath ?? benchConfig,
    outDir: opts.outDir,
    overrides: [...serverOverrides(opts.server, opts.cacheDir), ...(opts.overrides ?? [])],
  });
}

/** One training run through the real `openai` backend, recorded. */
export async function recordTraining(opts: TrainOptions): Promise<RecordedRun> {
  const prepared = prepareBenchRun(opts);
  const windows: StageWindow[] = [];
  const calls: CallRecord[] = [];
  const steps: CpuSample[] = [];
  const events: EngineEvent[] = [];
  let lastOpened: { stage: string; step: number } = { stage: 'start', step: 0 };
  const stepStart = new Map<number, { cpu: number; wall: number }>();
  const pending = new Map<string, { start: number; epoch: number }>();
  const s = opts.server.settings;
  const profile: LatencyProfile = { latencyMs: s.latencyMs, jitterMs: s.jitterMs, seed: s.seed };
  const controller = new AbortController();
  const originHrUs = Number(process.hrtime.bigint() / 1000n);
  const t0 = mono();
  // Which open stage a call belongs to: the latest one that makes calls of its kind, so the
  // attribution stays right if the engine ever runs stages side by side.
  const where = (kind: string): { stage: string; step: number } => {
    const fits = STAGES_OF_KIND[kind];
    let best: { stage: string; step: number; start: number } | undefined;
    let any: typeof best;
    for (const [key, w] of pending) {
      const [step, stage] = [Number(key.slice(0, key.indexOf(':'))), key.slice(key.indexOf(':') + 1)];
      const c = { stage, step, start: w.start };
      if (!any || c.start >= any.start) any = c;
      if (fits?.includes(stage) && (!best || c.start >= best.start)) best = c;
    }
    // The meta skill starts beside the slow update and reuses its pairs: the comparison rollouts
    // are the slow update's while it is open (the meta skill rolls out its own only without it).
    if (kind === 'slow_rollout') {
      for (const [key] of pending) {
        const i = key.indexOf(':');
        if (key.slice(i + 1) === 'slow_update')
          return { stage: 'slow_update', step: Number(key.slice(0, i)) };
      }
    }
    const hit = best ?? any;
    return hit ? { stage: hit.stage, step: hit.step } : lastOpened;
  };
  prepared.models.optimizer = recording(prepared.models.optimizer, 'optimizer', profile, where, t0, calls);
  prepared.models.target = recording(prepared.models.target, 'target', profile, where, t0, calls);

  const emit = (e: EngineEvent): void => {
    if (opts.keepEvents) events.push(e);
    if (e.type === 'stage/started') {
      const t = mono() - t0;
      lastOpened = { stage: e.stage, step: e.step };
      pending.set(`${e.step}:${e.stage}`, { start: t, epoch: e.epoch });
      if (['rollout', 'reflect', 'aggregate', 'select', 'update', 'evaluate'].includes(e.stage)) {
        if (!stepStart.has(e.step)) stepStart.set(e.step, { cpu: cpuNow(), wall: t });
      }
    } else if (e.type === 'stage/finished') {
      const key = `${e.step}:${e.stage}`;
      const p = pending.get(key);
      if (p) {
        windows.push({ step: e.step, epoch: p.epoch, stage: e.stage, startMs: p.start, endMs: mono() - t0 });
        pending.delete(key);
      }
    } else if (e.type === 'step/finished') {
      const begun = stepStart.get(e.record.step);
      if (begun) {
        const end = mono() - t0;
        steps.push({
          step: e.record.step,
          cpuMs: cpuNow() - begun.cpu,
          wallMs: end - begun.wall,
          startMs: begun.wall,
          endMs: end,
        });
      }
    }
    if (opts.abortWhen && !controller.signal.aborted && opts.abortWhen(e)) controller.abort();
  };

  const cpu0 = cpuNow();
  let outcome: TrainOutcome | undefined;
  let error: string | undefined;
  try {
    outcome = await trainPrepared(prepared, { emit, signal: controller.signal, resumeCommand: 'bench' });
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  const wallMs = mono() - t0;
  const cpuMs = cpuNow() - cpu0;
  windows.sort((a, b) => a.startMs - b.startMs);
  return {
    prepared,
    outcome,
    ...(error ? { error } : {}),
    wallMs,
    cpuMs,
    originHrUs,
    originMs: t0,
    windows,
    calls,
    steps,
    history: outcome?.history ?? [],
    events,
  };
}
