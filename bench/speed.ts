/**
 * §1 of issue 7: loop speed against the critical path. The fixed config runs through the real
 * `openai` backend against the latency server, several times; each run is compared with the lower
 * bound its own recorded calls imply.
 */
import { join } from 'node:path';
import { STAGE_NAMES } from '../src/protocol/vocabulary';
import { recordTraining, type ChildServer } from './harness';
import type { CallRecord } from './phases';
import { boundRun, type StageRow, type StepRow } from './runBounds';
import { spread, type Spread } from './stats';

export interface SpeedRep {
  rep: number;
  status: string;
  wallMs: number;
  /** Bound with the algorithm's own dependencies (the headline's denominator). */
  boundMs: number;
  /** Bound with every stage waiting for the previous one, as the engine runs them. */
  engineOrderBoundMs: number;
  /** wall ÷ bound: the headline. */
  ratio: number;
  steps: StepRow[];
  stages: StageRow[];
  criticalPath: string[];
  calls: { optimizer: number; target: number; cached: number };
  /** Identical requests sent more than once in this run (each extra one is paid again). */
  duplicateCalls: Record<string, number>;
  /** Service time the server reports vs what the runner computed for the same calls (must match). */
  serviceCheck: { serverMs: number; recordedMs: number };
  unplacedCalls: number;
}

export interface StageSummary {
  stage: string;
  /** Summed over the run's steps (or the one epoch-end / end stage), median over repetitions. */
  wallMs: Spread;
  calls: Spread;
  boundMs: Spread;
  overheadMs: Spread;
}

export interface SpeedResult {
  settings: { latencyMs: number; jitterMs: number; concurrency: number; reps: number };
  reps: SpeedRep[];
  ratio: Spread;
  engineOrderRatio: Spread;
  wallMs: Spread;
  boundMs: Spread;
  /** (wall − engine-order bound) ÷ steps: the engine's own time per step at this latency. */
  overheadPerStepMs: Spread;
  /** Engine-order bound − algorithm bound: overlap the algorithm allows and the engine does not use. */
  unusedOverlapMs: Spread;
  byStage: StageSummary[];
}

// The stages the speed table reports, in the engine's order (review waits on a person; deep and meta
// reflect are off in this workload).
const STAGE_ORDER: readonly string[] = STAGE_NAMES.filter(
  (s) => s !== 'deep_reflect' && s !== 'meta_reflect' && s !== 'review',
);

/** Duplicate requests per stage label: same messages, sent again although not from the cache. */
export function duplicateCalls(
  calls: ReadonlyArray<Pick<CallRecord, 'cached' | 'kind' | 'hash'>>,
): Record<string, number> {
  const seen = new Set<number>();
  const out: Record<string, number> = {};
  for (const c of calls) {
    if (c.cached || c.hash === undefined) continue;
    if (seen.has(c.hash)) out[c.kind] = (out[c.kind] ?? 0) + 1;
    else seen.add(c.hash);
  }
  return out;
}

export async function runSpeed(
  server: ChildServer,
  workDir: string,
  reps: number,
  log: (line: string) => void,
): Promise<SpeedResult> {
  const s = server.settings;
  const caps = { optimizer: s.concurrency, target: s.concurrency };
  const out: SpeedRep[] = [];
  for (let rep = 1; rep <= reps; rep++) {
    await server.reset();
    const dir = join(workDir, `speed-${rep}`);
    const run = await recordTraining({ server, outDir: join(dir, 'run'), cacheDir: join(dir, 'cache') });
    const stats = await server.stats();
    const b = boundRun(run.windows, run.calls, caps);
    const real = run.calls.filter((c) => !c.cached);
    const r: SpeedRep = {
      rep,
      status: run.error ? `failed: ${run.error}` : (run.outcome?.status ?? 'unknown'),
      wallMs: run.wallMs,
      boundMs: b.algorithm.totalMs,
      engineOrderBoundMs: b.engine.totalMs,
      ratio: run.wallMs / b.algorithm.totalMs,
      steps: b.steps,
      stages: b.stages,
      criticalPath: b.algorithm.criticalPath,
      calls: {
        optimizer: real.filter((c) => c.role === 'optimizer').length,
        target: real.filter((c) => c.role === 'target').length,
        cached: run.calls.length - real.length,
      },
      duplicateCalls: duplicateCalls(run.calls),
      serviceCheck: {
        serverMs: stats.byRole.optimizer.serviceMs + stats.byRole.target.serviceMs,
        recordedMs: real.reduce((n, c) => n + c.serviceMs, 0),
      },
      unplacedCalls: b.unplaced,
    };
    out.push(r);
    log(
      `  speed rep ${rep}/${reps}: wall ${(r.wallMs / 1000).toFixed(2)} s, bound ${(r.boundMs / 1000).toFixed(2)} s, ratio ${r.ratio.toFixed(3)} (${r.status})`,
    );
  }
  const ok = out.filter((r) => r.status === 'finished');
  const byStage: StageSummary[] = [];
  for (const stage of STAGE_ORDER) {
    const per = ok.map((r) => {
      const rows = r.stages.filter((x) => x.stage === stage);
      const sum = (k: 'wallMs' | 'calls' | 'boundMs' | 'overheadMs'): number =>
        rows.reduce((n, x) => n + x[k], 0);
      return {
        rows: rows.length,
        wall: sum('wallMs'),
        calls: sum('calls'),
        bound: sum('boundMs'),
        over: sum('overheadMs'),
      };
    });
    if (!per.some((p) => p.rows > 0)) continue;
    byStage.push({
      stage,
      wallMs: spread(per.map((p) => p.wall)),
      calls: spread(per.map((p) => p.calls)),
      boundMs: spread(per.map((p) => p.bound)),
      overheadMs: spread(per.map((p) => p.over)),
    });
  }
  return {
    settings: { latencyMs: s.latencyMs, jitterMs: s.jitterMs, concurrency: s.concurrency, reps },
    reps: out,
    ratio: spread(ok.map((r) => r.ratio)),
    engineOrderRatio: spread(ok.map((r) => r.wallMs / r.engineOrderBoundMs)),
    wallMs: spread(ok.map((r) => r.wallMs)),
    boundMs: spread(ok.map((r) => r.boundMs)),
    overheadPerStepMs: spread(ok.map((r) => (r.wallMs - r.engineOrderBoundMs) / Math.max(1, r.steps.length))),
    unusedOverlapMs: spread(ok.map((r) => r.engineOrderBoundMs - r.boundMs)),
    byStage,
  };
}
