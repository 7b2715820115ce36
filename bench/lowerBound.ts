/**
 * The physical limit of a training run: how fast the recorded model calls could possibly have been
 * answered, given each call's service time at the server, each role's concurrency cap, and which
 * groups of calls must wait for which. Pure: the bench runner builds the phases from what it
 * recorded (bench/phases.ts) and compares the wall time with the bound.
 *
 * Every figure here is a valid lower bound, never an estimate: a phase of n calls on c slots cannot
 * finish sooner than its total work spread evenly over the c slots, nor sooner than the calls some
 * slot must serve back to back (see isolatedBound). With a fixed latency that is exactly ⌈n/c⌉
 * waves × latency; with jitter the bound stays valid but no schedule can reach it, which is why the
 * headline runs without jitter. Phases that run at the same time and share a cap are bounded once
 * more by their combined work, so two concurrent phases cannot both claim the full cap.
 */

export type Role = 'optimizer' | 'target';

export interface Phase {
  /** Unique id, e.g. `s3.rollout`. */
  id: string;
  /** The engine stage it belongs to, for reporting (rollout, reflect, aggregate, ...). */
  stage: string;
  /** Step it belongs to (0 = before the first step). */
  step: number;
  role: Role;
  /** Service time of each call the phase made, in ms; cache hits made no call and are not here. */
  durations: readonly number[];
  /** Phases that must finish before this one can start. */
  after: readonly string[];
  /**
   * A phase that feeds this one item by item (reflection on a rollout that is still running): this
   * phase can start once the source has a first result, and its last call can only start after the
   * source's last result.
   */
  streamsFrom?: string;
}

export interface IsolatedBound {
  ms: number;
  /** ⌈calls / cap⌉: how many rounds the cap forces. */
  waves: number;
}

export interface PhaseBound {
  id: string;
  stage: string;
  step: number;
  role: Role;
  calls: number;
  /** The phase alone on its role's cap (isolatedBound). */
  isolated: IsolatedBound;
  earliestStartMs: number;
  earliestFinishMs: number;
  /** What set the earliest finish: a dependency chain, the stream source, or shared-cap work. */
  limitedBy: 'chain' | 'stream' | 'shared-cap';
  /** The phase whose finish this one waits for on its longest chain, if any. */
  predecessor?: string;
}

export interface BoundResult {
  totalMs: number;
  phases: PhaseBound[];
  /** Phase ids on the longest chain, first to last. */
  criticalPath: string[];
}

/**
 * Lower bound for n calls with the given durations on `cap` slots: the larger of the total work
 * spread evenly, and a pigeonhole bound: of the k·cap + 1 longest calls some slot serves at least
 * k + 1, so it is busy for at least the k + 1 shortest of them back to back (k = 0 is the longest
 * call; with equal durations the largest k gives ⌈n/cap⌉ × latency exactly).
 */
export function isolatedBound(durations: readonly number[], cap: number): IsolatedBound {
  const n = durations.length;
  if (n === 0) return { ms: 0, waves: 0 };
  if (!(cap >= 1)) throw new RangeError(`cap must be at least 1, got ${cap}`);
  let sum = 0;
  for (const d of durations) {
    if (!(d >= 0)) throw new RangeError(`durations must be ≥ 0, got ${d}`);
    sum += d;
  }
  const desc = [...durations].sort((a, b) => b - a);
  const waves = Math.ceil(n / cap);
  let best = sum / cap;
  for (let k = 0; k < waves; k++) {
    let chain = 0;
    for (let i = k * cap - k; i <= k * cap; i++) chain += desc[i];
    best = Math.max(best, chain);
  }
  return { ms: best, waves };
}

/** Phases in an order where every dependency (and stream source) comes before its dependants. */
export function topologicalOrder(phases: readonly Phase[]): Phase[] {
  const byId = new Map<string, Phase>();
  for (const p of phases) {
    if (byId.has(p.id)) throw new Error(`duplicate phase id ${p.id}`);
    byId.set(p.id, p);
  }
  const out: Phase[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (p: Phase): void => {
    const s = state.get(p.id);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...path.slice(path.indexOf(p.id)), p.id].join(' → ');
      throw new Error(`phase dependencies form a cycle: ${cycle}`);
    }
    state.set(p.id, 'visiting');
    path.push(p.id);
    for (const dep of [...p.after, ...(p.streamsFrom ? [p.streamsFrom] : [])]) {
      const d = byId.get(dep);
      if (!d) throw new Error(`phase ${p.id} depends on unknown phase ${dep}`);
      visit(d);
    }
    path.pop();
    state.set(p.id, 'done');
    out.push(p);
  };
  for (const p of phases) visit(p);
  return out;
}

/**
 * Earliest finish of every phase and of the whole run (the latest finish), with the chain that
 * sets it. `caps` is the concurrency each role can get from the server.
 */
export function lowerBound(phases: readonly Phase[], caps: Readonly<Record<Role, number>>): BoundResult {
  const order = topologicalOrder(phases);
  const byId = new Map(phases.map((p) => [p.id, p]));
  const done = new Map<string, PhaseBound>();
  const ancestors = new Map<string, Set<string>>();
  const shortest = (d: readonly number[]): number => (d.length ? Math.min(...d) : 0);

  for (const p of order) {
    const cap = caps[p.role];
    const iso = isolatedBound(p.durations, cap);
    const anc = new Set<string>();
    const inherit = (id: string): void => {
      for (const a of ancestors.get(id)!) anc.add(a);
      anc.add(id);
    };
    let start = 0;
    let predecessor: string | undefined;
    for (const dep of p.after) {
      const d = done.get(dep)!;
      inherit(dep);
      if (predecessor === undefined || d.earliestFinishMs > start) {
        start = d.earliestFinishMs;
        predecessor = dep;
      }
    }
    let finish = start + iso.ms;
    let limitedBy: PhaseBound['limitedBy'] = 'chain';
    if (p.streamsFrom) {
      const src = done.get(p.streamsFrom)!;
      const srcDurations = byId.get(p.streamsFrom)!.durations;
      inherit(src.id);
      // The first call can go once the source has one result; without source calls, once it is done.
      const firstResult = srcDurations.length
        ? src.earliestStartMs + shortest(srcDurations)
        : src.earliestFinishMs;
      start = Math.max(start, firstResult);
      const afterLastResult = src.earliestFinishMs + shortest(p.durations);
      finish = Math.max(start + iso.ms, afterLastResult);
      if (afterLastResult >= start + iso.ms) {
        limitedBy = 'stream';
        predecessor = src.id;
      } else if (predecessor === undefined || firstResult >= start) {
        predecessor = src.id;
      }
    }
    // Shared cap: the calls of this phase and of every same-role phase it waits for that can only
    // start at t or later all run inside [t, finish] on the same slots.
    if (p.durations.length) {
      const pool = [...anc].map((id) => done.get(id)!).filter((a) => a.role === p.role && a.calls > 0);
      for (const t of new Set(pool.map((a) => a.earliestStartMs))) {
        const durations: number[] = [...p.durations];
        for (const a of pool) if (a.earliestStartMs >= t) durations.push(...byId.get(a.id)!.durations);
        const shared = Math.min(t, start) + isolatedBound(durations, cap).ms;
        if (shared > finish + 1e-9) {
          finish = shared;
          limitedBy = 'shared-cap';
        }
      }
    }
    ancestors.set(p.id, anc);
    done.set(p.id, {
      id: p.id,
      stage: p.stage,
      step: p.step,
      role: p.role,
      calls: p.durations.length,
      isolated: iso,
      earliestStartMs: start,
      earliestFinishMs: finish,
      limitedBy,
      ...(predecessor ? { predecessor } : {}),
    });
  }

  let last: PhaseBound | undefined;
  for (const p of order) {
    const b = done.get(p.id)!;
    if (!last || b.earliestFinishMs > last.earliestFinishMs) last = b;
  }
  const criticalPath: string[] = [];
  for (let cur = last; cur; cur = cur.predecessor ? done.get(cur.predecessor) : undefined) {
    criticalPath.unshift(cur.id);
  }
  return {
    totalMs: last?.earliestFinishMs ?? 0,
    phases: phases.map((p) => done.get(p.id)!),
    criticalPath,
  };
}
