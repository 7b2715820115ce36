/**
 * What one neutral run's timeline says (pure: no clock, no I/O): whole-run wall against the wave
 * bound, each step against its 6 waves, the time to the first request, and for every engine stage
 * its lead (stage start → its first request reaches the server) and tail (its last reply leaves
 * the server → the stage ends). All times are epoch ms.
 */
import type { NeutralRequest } from './server';

/** An engine stage as the run's `--json` events showed it, stamped when the line arrived. */
export interface TimedWindow {
  step: number;
  stage: string;
  startAt: number;
  endAt: number;
}

/** The request kinds each engine stage sends (the server's labels). */
export const KINDS_OF_STAGE: Record<string, readonly string[]> = {
  baseline: ['target:val'],
  rollout: ['target:train'],
  reflect: ['analyst'],
  deep_reflect: ['deep_reflect'],
  aggregate: ['merge'],
  select: ['ranking', 'lr_autonomous'],
  update: ['rewrite'],
  evaluate: ['target:val'],
  slow_update: ['target:train', 'slow_update', 'target:val'],
  meta_skill: ['target:train', 'meta_skill'],
  meta_reflect: ['meta_reflect', 'target:val'],
  final_selection: ['target:val'],
  test: ['target:test'],
};

const STEP_STAGES = new Set([
  'rollout',
  'reflect',
  'deep_reflect',
  'aggregate',
  'select',
  'update',
  'evaluate',
]);

export interface StageEdge {
  stage: string;
  step: number;
  /** ms from the stage's start to its first request's arrival; undefined when it sent none after starting. */
  leadMs?: number;
  /** ms from its last reply to the stage's end; undefined when it sent none. */
  tailMs?: number;
  requests: number;
}

export interface NeutralRun {
  wallMs: number;
  firstRequestMs: number;
  /** wall ÷ (bound waves × latency). */
  ratio: number;
  /**
   * Each step against the 6 waves, and against the waves it sent (bursts of requests: a
   * step whose merge tree has one level needs 5).
   */
  steps: Array<{ step: number; wallMs: number; ratio: number; waves: number; ownRatio: number }>;
  edges: StageEdge[];
  /** Requests by kind. */
  calls: Record<string, number>;
  requestBytes: number;
}

export function analyzeRun(opts: {
  launchedAt: number;
  exitedAt: number;
  windows: readonly TimedWindow[];
  requests: readonly NeutralRequest[];
  latencyMs: number;
  boundWaves: number;
  stepWaves: number;
}): NeutralRun {
  const { launchedAt, windows, requests, latencyMs } = opts;
  const wallMs = opts.exitedAt - launchedAt;
  const first = Math.min(...requests.map((r) => r.arrivedAt));
  const edges: StageEdge[] = windows.map((w) => {
    const kinds = KINDS_OF_STAGE[w.stage] ?? [];
    const mine = requests.filter(
      (r) => kinds.includes(r.kind) && r.arrivedAt <= w.endAt && r.repliedAt >= w.startAt,
    );
    const started = mine.filter((r) => r.arrivedAt >= w.startAt).map((r) => r.arrivedAt);
    const replies = mine.map((r) => r.repliedAt);
    return {
      stage: w.stage,
      step: w.step,
      ...(started.length ? { leadMs: Math.min(...started) - w.startAt } : {}),
      ...(replies.length ? { tailMs: Math.max(0, w.endAt - Math.max(...replies)) } : {}),
      requests: mine.length,
    };
  });
  const stepNos = [...new Set(windows.filter((w) => STEP_STAGES.has(w.stage)).map((w) => w.step))];
  const steps = stepNos.map((step) => {
    const ws = windows.filter((w) => w.step === step && STEP_STAGES.has(w.stage));
    const start = Math.min(...ws.map((w) => w.startAt));
    const end = Math.max(...ws.map((w) => w.endAt));
    const ms = end - start;
    const waves = wavesIn(requests, start, end, latencyMs);
    return {
      step,
      wallMs: ms,
      ratio: ms / (opts.stepWaves * latencyMs),
      waves,
      ownRatio: waves ? ms / (waves * latencyMs) : NaN,
    };
  });
  const calls: Record<string, number> = {};
  for (const r of requests) calls[r.kind] = (calls[r.kind] ?? 0) + 1;
  return {
    wallMs,
    firstRequestMs: Number.isFinite(first) ? first - launchedAt : NaN,
    ratio: wallMs / (opts.boundWaves * latencyMs),
    steps,
    edges,
    calls,
    requestBytes: requests.reduce((n, r) => n + r.bytesIn, 0),
  };
}

/**
 * Waves of requests sent between `start` and `end`: runs of arrivals with no pause of half the
 * latency or more (a wave's requests leave within milliseconds; the next waits for replies). On an
 * overloaded machine a wave's own requests can leave that far apart and count twice.
 */
export function wavesIn(
  requests: readonly NeutralRequest[],
  start: number,
  end: number,
  latencyMs: number,
): number {
  const at = requests
    .map((r) => r.arrivedAt)
    .filter((t) => t >= start && t <= end)
    .sort((a, b) => a - b);
  return at.filter((t, i) => i === 0 || t - at[i - 1] >= latencyMs / 2).length;
}

/** Windows from `stage/started` / `stage/finished` events stamped on arrival (repeated windows kept apart). */
export function windowsOf(events: ReadonlyArray<{ at: number; e: Record<string, unknown> }>): TimedWindow[] {
  const open = new Map<string, number>();
  const out: TimedWindow[] = [];
  for (const { at, e } of events) {
    const key = `${String(e.step)}:${String(e.stage)}`;
    if (e.type === 'stage/started') open.set(key, at);
    else if (e.type === 'stage/finished' && open.has(key)) {
      out.push({ step: Number(e.step), stage: String(e.stage), startAt: open.get(key)!, endAt: at });
      open.delete(key);
    }
  }
  return out.sort((a, b) => a.startAt - b.startAt);
}
