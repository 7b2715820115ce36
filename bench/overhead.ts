/**
 * §2 of issue 7: engine overhead. The same run with a zero-latency server: CPU of the engine
 * process per step (the server is another process, so its CPU is not in here), where that CPU
 * goes (a sampled V8 profile, categorised by bench/profile.ts), and what one model call costs at
 * each layer of the client stack.
 */
import { request as httpRequest, Agent } from 'node:http';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createSdkBackend } from '../src/engine/llm/backends';
import type { ChatBackend, ChatRequest, ModelClient } from '../src/engine/llm/types';
import { scriptedTargetModel } from '../test/support/loopback/scriptedModels';
import { prepareBenchRun, recordTraining, type ChildServer, type RecordedRun } from './harness';
import {
  categorizeSamples,
  categoryTotals,
  CPU_CATEGORIES,
  emptyCategories,
  type CategoryMs,
  type CpuProfile,
} from './profile';
import { median, spread, type Spread } from './stats';
import { countFsCalls, countIn, COUNTED_FS_CALLS, type FsCallName } from './fsCount';

export interface OverheadRep {
  rep: number;
  status: string;
  steps: number;
  /** Median over the run's steps of this process's CPU per step. */
  cpuPerStepMs: number;
  cpuPerStepAll: number[];
  /** Median wall time per step at zero latency. */
  wallPerStepMs: number;
  /** Whole run: CPU ÷ steps (baseline, epoch ends and the test evaluation included). */
  runCpuPerStepMs: number;
  callsPerStep: number;
}

export interface ClientTier {
  name: string;
  what: string;
  cpuPerCallMs: Spread;
}

export interface OverheadResult {
  reps: OverheadRep[];
  cpuPerStepMs: Spread;
  wallPerStepMs: Spread;
  runCpuPerStepMs: Spread;
  callsPerStep: Spread;
  /**
   * Where a step's CPU goes, from one profiled run. Profiling slows a run down, so its categories
   * are taken as shares and applied to the unprofiled median CPU per step.
   */
  profile?: {
    share: CategoryMs;
    perStepMs: CategoryMs;
    engineOwnPerStepMs: number;
    /** CPU per step the profiled run itself sampled (inflated by the profiler). */
    sampledCpuPerStepMs: number;
  };
  /** File-system calls per step (median over the steps of one run): machine-independent. */
  fsCallsPerStep?: Partial<Record<FsCallName, number>>;
  clientTiers: ClientTier[];
}

/** Categories that are the engine's own work (as opposed to the HTTP client, GC or the runtime). */
export const ENGINE_OWN: ReadonlyArray<(typeof CPU_CATEGORIES)[number]> = [
  'engine',
  'run folder writes',
  'response cache',
];

function summariseRun(rep: number, run: RecordedRun): OverheadRep {
  const steps = run.steps;
  const real = run.calls.filter((c) => !c.cached);
  const inSteps = real.filter((c) => steps.some((s) => c.startMs >= s.startMs && c.startMs <= s.endMs));
  return {
    rep,
    status: run.error ? `failed: ${run.error}` : (run.outcome?.status ?? 'unknown'),
    steps: steps.length,
    cpuPerStepMs: median(steps.map((s) => s.cpuMs)),
    cpuPerStepAll: steps.map((s) => Math.round(s.cpuMs * 10) / 10),
    wallPerStepMs: median(steps.map((s) => s.wallMs)),
    runCpuPerStepMs: run.cpuMs / Math.max(1, steps.length),
    callsPerStep: inSteps.length / Math.max(1, steps.length),
  };
}

async function profiled<T>(fn: () => Promise<T>): Promise<{ value: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    // 1 ms between samples: enough samples over a run, little slowdown.
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await session.post('Profiler.start');
    const value = await fn();
    const { profile } = await session.post('Profiler.stop');
    return { value, profile: profile as unknown as CpuProfile };
  } finally {
    session.disconnect();
  }
}

/** Per-step CPU by category: samples inside each step's span, median over steps. */
export function perStepCategories(
  profile: CpuProfile,
  originHrUs: number,
  steps: ReadonlyArray<{ startMs: number; endMs: number }>,
): CategoryMs {
  const samples = categorizeSamples(profile);
  const offsetUs = profile.startTime - originHrUs;
  const per = steps.map((s) =>
    categoryTotals(samples, s.startMs * 1000 - offsetUs, s.endMs * 1000 - offsetUs),
  );
  const out = emptyCategories();
  for (const c of CPU_CATEGORIES) out[c] = median(per.map((p) => p[c]));
  return out;
}

/** Run `n` calls with at most `concurrency` at once; CPU of this process per call, in ms. */
async function cpuPerCall(
  n: number,
  concurrency: number,
  call: (i: number) => Promise<unknown>,
): Promise<number> {
  for (let i = 0; i < 20; i++) await call(1_000_000 + i);
  const c0 = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await call(next++);
    }),
  );
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / n;
}

function targetRequest(i: number, skill: string): ChatRequest {
  return {
    role: 'target',
    stage: 'rollout',
    temperature: 0,
    maxTokens: 1024,
    messages: [
      { role: 'system', content: skill },
      { role: 'user', content: `Convert ${i / 10} miles to kilometres. (request ${i})` },
    ],
  };
}

/**
 * What one target call costs this process at each layer: a bare keep-alive `node:http` POST (the
 * floor for any Node client), the engine's OpenAI backend (the SDK as the engine configures it),
 * and the engine's full model client (limits, response cache, accounting, redaction) on top.
 */
export async function clientTiers(
  server: ChildServer,
  workDir: string,
  reps: number,
  calls: number,
): Promise<ClientTier[]> {
  const skill = 'You answer questions in house style.\n'.repeat(30);
  const concurrency = server.settings.concurrency;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const url = new URL(`${server.url}/chat/completions`);
  const bare = (i: number): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const req = targetRequest(i, skill);
      const body = JSON.stringify({
        model: scriptedTargetModel,
        messages: req.messages,
        max_tokens: req.maxTokens,
        temperature: 0,
      });
      const r = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
          res.on('error', reject);
        },
      );
      r.on('error', reject);
      r.end(body);
    });
  const backend: ChatBackend = createSdkBackend({
    kind: 'openai',
    model: scriptedTargetModel,
    baseUrl: server.url,
  });
  // One signal per call, as the engine's client gives each attempt its own.
  const sdk = (i: number): Promise<unknown> =>
    backend.call(targetRequest(i, skill), new AbortController().signal);
  const results: Record<string, number[]> = { bare: [], sdk: [], client: [] };
  for (let rep = 1; rep <= reps; rep++) {
    results.bare.push(await cpuPerCall(calls, concurrency, bare));
    results.sdk.push(await cpuPerCall(calls, concurrency, sdk));
    // A fresh run setup each time, so the response cache is empty and every call is a miss.
    const prepared = prepareBenchRun({
      server,
      outDir: join(workDir, `client-${rep}`),
      cacheDir: join(workDir, `client-${rep}`, 'cache'),
    });
    const client: ModelClient = prepared.models.target;
    results.client.push(await cpuPerCall(calls, concurrency, (i) => client.chat(targetRequest(i, skill))));
  }
  agent.destroy();
  return [
    { name: 'node:http', what: 'bare keep-alive POST + JSON.parse', cpuPerCallMs: spread(results.bare) },
    {
      name: 'engine backend',
      what: 'OpenAiBackend.call (openai SDK, global fetch)',
      cpuPerCallMs: spread(results.sdk),
    },
    {
      name: 'engine client',
      what: 'ModelClient.chat (limits, cache miss + write, accounting)',
      cpuPerCallMs: spread(results.client),
    },
  ];
}

export async function runOverhead(
  server: ChildServer,
  workDir: string,
  reps: number,
  opts: { profile: boolean; clientCalls: number },
  log: (line: string) => void,
): Promise<OverheadResult> {
  // The first run in a process pays for JIT warm-up and module loading; it is not counted.
  await recordTraining({
    server,
    outDir: join(workDir, 'warm', 'run'),
    cacheDir: join(workDir, 'warm', 'cache'),
  });
  const out: OverheadRep[] = [];
  for (let rep = 1; rep <= reps; rep++) {
    const dir = join(workDir, `overhead-${rep}`);
    const run = await recordTraining({ server, outDir: join(dir, 'run'), cacheDir: join(dir, 'cache') });
    const r = summariseRun(rep, run);
    out.push(r);
    log(
      `  overhead rep ${rep}/${reps}: ${r.cpuPerStepMs.toFixed(0)} ms CPU per step (median of ${r.steps}), ${r.wallPerStepMs.toFixed(0)} ms wall per step`,
    );
  }
  const ok = out.filter((r) => r.status === 'finished');
  const cpuPerStepMs = spread(ok.map((r) => r.cpuPerStepMs));
  let profile: OverheadResult['profile'];
  let fsCallsPerStep: OverheadResult['fsCallsPerStep'];
  if (opts.profile) {
    const dir = join(workDir, 'overhead-profiled');
    const {
      value: { value: run, calls: fsCalls },
      profile: p,
    } = await profiled(() =>
      countFsCalls(() => recordTraining({ server, outDir: join(dir, 'run'), cacheDir: join(dir, 'cache') })),
    );
    const perStep = run.steps.map((st) =>
      countIn(fsCalls, run.originMs + st.startMs, run.originMs + st.endMs),
    );
    fsCallsPerStep = {};
    for (const name of [...COUNTED_FS_CALLS, 'promises.readFile', 'promises.writeFile'] as FsCallName[]) {
      const m = median(perStep.map((c) => c[name] ?? 0));
      if (m > 0) fsCallsPerStep[name] = m;
    }
    const sampledMs = perStepCategories(p, run.originHrUs, run.steps);
    const sampled = CPU_CATEGORIES.filter((c) => c !== 'idle').reduce((n, c) => n + sampledMs[c], 0);
    const share = emptyCategories();
    const perStepMs = emptyCategories();
    const base = Number.isFinite(cpuPerStepMs.median) ? cpuPerStepMs.median : sampled;
    for (const c of CPU_CATEGORIES) {
      if (c === 'idle') continue;
      share[c] = sampled > 0 ? sampledMs[c] / sampled : 0;
      perStepMs[c] = share[c] * base;
    }
    const engineOwn = ENGINE_OWN.reduce((n, c) => n + perStepMs[c], 0);
    profile = { share, perStepMs, engineOwnPerStepMs: engineOwn, sampledCpuPerStepMs: sampled };
    log(
      `  profiled run: the engine's own work is ${((engineOwn / base) * 100).toFixed(0)}% of a step's CPU, ${engineOwn.toFixed(0)} ms`,
    );
  }
  const tiers = await clientTiers(server, workDir, Math.max(1, Math.min(reps, 3)), opts.clientCalls);
  for (const t of tiers) log(`  client tier ${t.name}: ${t.cpuPerCallMs.median.toFixed(2)} ms CPU per call`);
  return {
    reps: out,
    cpuPerStepMs,
    wallPerStepMs: spread(ok.map((r) => r.wallPerStepMs)),
    runCpuPerStepMs: spread(ok.map((r) => r.runCpuPerStepMs)),
    callsPerStep: spread(ok.map((r) => r.callsPerStep)),
    ...(profile ? { profile } : {}),
    ...(fsCallsPerStep ? { fsCallsPerStep } : {}),
    clientTiers: tiers,
  };
}
