/**
 * `npm run bench [-- --quick]`: speed against the physical limit, engine overhead, tokens and
 * cache, and bundle footprint (issue 7). Prints tables and writes bench/results/<time>.json.
 * Never part of `npm test`: it measures, it does not assert.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseRunArgs, RUN_USAGE, UsageError, type RunArgs } from './args';
import { runBatchBench } from './batchBench';
import { INTERRUPTIONS, runCache } from './cacheBench';
import { runFootprint } from './footprint';
import { spawnServer, type ChildServer } from './harness';
import { machineInfo } from './machine';
import { neutralVariants, runNeutral } from './neutral/run';
import { runOverhead } from './overhead';
import { renderReport, verdictOf, type BenchResult } from './report';
import { runSpeed } from './speed';
import { runSpend } from './spendBench';
import { runTokens } from './tokens';

/** How much of each section a quick or a full run does. */
export function plan(args: RunArgs): {
  skillSizes: number[];
  replySizes: number[];
  interruptions: typeof INTERRUPTIONS;
  clientCalls: number;
} {
  return args.quick
    ? {
        skillSizes: [0, 4_000, 16_000],
        replySizes: [100, 2_000, 20_000],
        interruptions: INTERRUPTIONS.slice(0, 2),
        clientCalls: 200,
      }
    : {
        skillSizes: [0, 2_000, 8_000, 32_000, 64_000],
        replySizes: [100, 1_000, 10_000, 100_000],
        interruptions: INTERRUPTIONS,
        clientCalls: 400,
      };
}

function stamp(d: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

async function main(): Promise<void> {
  const args = parseRunArgs(process.argv.slice(2));
  const started = new Date();
  const t0 = performance.now();
  const log = (line: string): void => console.log(line);
  const work = mkdtempSync(join(tmpdir(), 'skillopt-bench-'));
  const p = plan(args);
  const wants = new Set(args.only);
  log(`skillopt bench${args.quick ? ' --quick' : ''}: ${args.only.join(', ')} (scratch ${work})`);
  const machine = machineInfo();
  const result: BenchResult = {
    schema: 1,
    startedAt: started.toISOString(),
    durationS: 0,
    command: `npm run bench --${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`,
    quick: args.quick,
    machine,
    server: {
      latencyMs: args.latencyMs,
      jitterMs: args.jitterMs,
      concurrency: args.concurrency,
      reps: args.reps,
    },
    verdict: { notes: [] },
  };
  const servers: ChildServer[] = [];
  try {
    if (wants.has('neutral')) {
      log(
        `neutral: issue 15's SearchQA-shaped run, ${args.neutralLatencyMs} ms per call, no cap, CLI from launch`,
      );
      result.neutral = await runNeutral(
        work,
        {
          reps: args.reps,
          latencyMs: args.neutralLatencyMs,
          variants: neutralVariants(args.variants),
          ...(args.cliRoot ? { cliRoot: args.cliRoot } : {}),
        },
        log,
      );
    }
    if (wants.has('speed')) {
      log(
        `speed: latency ${args.latencyMs} ms + ${args.jitterMs} ms jitter, concurrency ${args.concurrency}`,
      );
      const server = await spawnServer({
        latencyMs: args.latencyMs,
        jitterMs: args.jitterMs,
        seed: 1,
        concurrency: args.concurrency,
      });
      servers.push(server);
      result.speed = await runSpeed(server, work, args.reps, log);
      await server.close();
    }
    if (wants.has('jitter') && args.latencyMs > 0) {
      // Sensitivity: the same run with jitter. The bound stays valid but becomes unattainable.
      const jitterMs = args.jitterMs > 0 ? args.jitterMs : Math.round(args.latencyMs / 10);
      log(`speed with jitter: latency ${args.latencyMs} ms + ${jitterMs} ms jitter, 1 run`);
      const jittery = await spawnServer({
        latencyMs: args.latencyMs,
        jitterMs,
        seed: 1,
        concurrency: args.concurrency,
      });
      servers.push(jittery);
      result.speedWithJitter = await runSpeed(jittery, join(work, 'jitter'), 1, log);
      await jittery.close();
    }
    if (wants.has('overhead') || wants.has('tokens') || wants.has('cache') || wants.has('spend')) {
      const zero = await spawnServer({ latencyMs: 0, jitterMs: 0, seed: 1, concurrency: args.concurrency });
      servers.push(zero);
      if (wants.has('overhead')) {
        log('overhead: zero latency');
        result.overhead = await runOverhead(
          zero,
          work,
          args.reps,
          { profile: true, clientCalls: p.clientCalls },
          log,
        );
      }
      if (wants.has('tokens')) {
        log('tokens: per stage, and analyst prompt growth');
        result.tokens = await runTokens(
          zero,
          work,
          { skillSizes: p.skillSizes, replySizes: p.replySizes },
          log,
        );
      }
      if (wants.has('cache')) {
        log('cache: resumed runs and eval-only');
        result.cache = await runCache(zero, work, p.interruptions, log);
      }
      if (wants.has('spend')) {
        log('spend: dollars per run at list prices, prompt caching off and on');
        result.spend = await runSpend(zero, work, log);
      }
      await zero.close();
    }
    if (wants.has('batch')) {
      log('batch: eval-only dollars one by one and as a provider batch');
      result.batch = await runBatchBench(work, log);
    }
    if (wants.has('footprint')) {
      log('footprint: esbuild development and production builds');
      result.footprint = await runFootprint(join(work, 'build'), { vscodeSessions: args.quick ? 0 : 3 }, log);
    }
  } finally {
    for (const s of servers) await s.close();
    rmSync(work, { recursive: true, force: true });
  }
  result.durationS = Math.round((performance.now() - t0) / 100) / 10;
  result.verdict = verdictOf(result.speed, result.overhead);
  const dir = resolve(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = args.out
    ? resolve(args.out)
    : join(dir, `${stamp(started)}${args.quick ? '-quick' : ''}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  log('');
  log(renderReport(result));
  log('');
  log(`results: ${file}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    if (err instanceof UsageError)
      console.error(err.message === RUN_USAGE ? RUN_USAGE : `${err.message}\n\nusage: ${RUN_USAGE}`);
    else console.error(err);
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}
