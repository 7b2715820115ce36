/**
 * The bounds of one recorded run (bench/phases.ts builds its phases): the algorithm's and the
 * engine's, and per stage and per step the wall time, calls and bound increment in engine order.
 * Pure: no clock, no I/O.
 */
import { lowerBound, type BoundResult, type Role } from './lowerBound';
import { buildPhases, STEP_STAGES, type CallRecord, type StageWindow } from './phases';

export interface StageRow {
  step: number;
  stage: string;
  wallMs: number;
  /** Calls that reached the server. */
  calls: number;
  cached: number;
  /** What this stage adds to the engine-order bound (its own waves × latency, streaming included). */
  boundMs: number;
  overheadMs: number;
}

export interface StepRow {
  step: number;
  wallMs: number;
  calls: number;
  cached: number;
  boundMs: number;
  overheadMs: number;
}

export interface RunBounds {
  algorithm: BoundResult;
  engine: BoundResult;
  stages: StageRow[];
  steps: StepRow[];
  unplaced: number;
}

/**
 * Both bounds, and per stage and per step: wall time, calls and the bound increment in engine
 * order (so the stage rows add up to the engine-order bound and wall − bound is overhead).
 */
export function boundRun(
  windows: readonly StageWindow[],
  calls: readonly CallRecord[],
  caps: Readonly<Record<Role, number>>,
): RunBounds {
  const plan = buildPhases(windows, calls);
  const algorithm = lowerBound(plan.phases.algorithm, caps);
  const engine = lowerBound(plan.phases.engine, caps);
  const finish = new Map(engine.phases.map((p) => [p.id, p.earliestFinishMs]));
  const nodeStage = new Map(plan.nodes.map((n) => [n.id, `${n.step}:${n.stage}`]));

  // Merge repeated windows of one stage (accumulation batches) into one row.
  const rows = new Map<string, StageRow>();
  for (const w of windows) {
    if (w.stage === 'review') continue;
    const key = `${w.step}:${w.stage}`;
    const row = rows.get(key) ?? {
      step: w.step,
      stage: w.stage,
      wallMs: 0,
      calls: 0,
      cached: 0,
      boundMs: 0,
      overheadMs: 0,
    };
    row.wallMs += w.endMs - w.startMs;
    rows.set(key, row);
  }
  // Calls count towards the stage of their phase (an analyst call started during the rollout is reflection).
  const nodeById = new Map(plan.nodes.map((n) => [n.id, n]));
  for (const [i, c] of calls.entries()) {
    const id = plan.callPhase[i];
    const node = id === undefined ? undefined : nodeById.get(id);
    const row = rows.get(node ? `${node.step}:${node.stage}` : `${c.step}:${c.stage}`);
    if (!row) continue;
    if (c.cached) row.cached++;
    else row.calls++;
  }
  // Engine-order bound increments: each stage's latest phase finish minus the previous stage's.
  let prevEnd = 0;
  for (const [key, row] of rows) {
    let end = prevEnd;
    for (const [id, k] of nodeStage) if (k === key) end = Math.max(end, finish.get(id) ?? 0);
    row.boundMs = end - prevEnd;
    row.overheadMs = row.wallMs - row.boundMs;
    prevEnd = end;
  }
  const stages = [...rows.values()];
  const steps: StepRow[] = [];
  for (const r of stages) {
    if (!STEP_STAGES.has(r.stage)) continue;
    let s = steps.find((x) => x.step === r.step);
    if (!s) {
      s = { step: r.step, wallMs: 0, calls: 0, cached: 0, boundMs: 0, overheadMs: 0 };
      steps.push(s);
    }
    s.wallMs += r.wallMs;
    s.calls += r.calls;
    s.cached += r.cached;
    s.boundMs += r.boundMs;
    s.overheadMs += r.overheadMs;
  }
  return { algorithm, engine, stages, steps, unplaced: plan.unplaced };
}
