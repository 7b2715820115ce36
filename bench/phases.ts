/**
 * From what the bench recorded (the engine's stage windows and every model call) to the phases of
 * bench/lowerBound.ts, in two dependency models:
 *
 * - `algorithm`: a phase waits only for what it needs. Step 1's rollouts do not need the baseline
 *   score (only its gate does); the meta skill needs the slow-update rollouts, not the slow-update
 *   verdict. This is the physical limit of the algorithm, and the headline compares against it.
 * - `engine`: every stage waits for the one before it, as the engine runs them today (keeping the
 *   overlaps it already has: reflection streams from the rollout, the two merge trees run side by
 *   side, the meta skill beside the slow update once its rollouts are in). Wall time minus this bound is the engine's own overhead; this bound minus the algorithm's
 *   is overlap the engine leaves unused.
 *
 * Pure: no clock, no I/O.
 */
import type { Phase, Role } from './lowerBound';

/** One engine stage as the events reported it; times in ms from the start of the run. */
export interface StageWindow {
  step: number;
  epoch: number;
  stage: string;
  startMs: number;
  endMs: number;
}

/** One model call as the bench saw it at the client. */
export interface CallRecord {
  role: Role;
  /** The request's stage label (accounting key): rollout, analyst, merge, selection, ... */
  kind: string;
  /** Engine stage open when the call started, and its step. */
  stage: string;
  step: number;
  /** Merge-tree position, from the merge prompt: `failure.1`, `success.2`, `final`. */
  mergeNode?: string;
  /** Service time the server imposes on this request (bench/latency.ts), ms. */
  serviceMs: number;
  /** Answered from the response cache: no server call. */
  cached: boolean;
  startMs: number;
  endMs: number;
  /** Characters of all messages sent (prompt size). */
  promptChars?: number;
  /** FNV-1a of the message texts: equal requests, equal hash. */
  hash?: number;
}

/** `group: failure; level: 2` → `failure.2`; the final merge of both groups → `final`. */
export function mergeNodeOf(userText: string): string | undefined {
  const m = /^group: (failure|success|final)(?:; level: (\d+))?/m.exec(userText);
  if (!m) return undefined;
  return m[1] === 'final' ? 'final' : `${m[1]}.${m[2] ?? '1'}`;
}

export const STEP_STAGES = new Set(['rollout', 'reflect', 'aggregate', 'select', 'update', 'evaluate']);

/** Which phase of a step or stage a call belongs to (the part of the phase id after the prefix). */
export function phaseNameOf(call: Pick<CallRecord, 'kind' | 'stage' | 'mergeNode'>): string {
  const { kind, stage } = call;
  if (STEP_STAGES.has(stage)) {
    switch (kind) {
      case 'rollout':
        return 'rollout';
      case 'analyst':
        return 'reflect';
      case 'deep_reflect':
      case 'meta_reflect':
        return 'reflect.deep';
      case 'merge':
        return `merge.${call.mergeNode ?? 'final'}`;
      case 'lr_autonomous':
        return 'lr';
      case 'ranking':
        return 'rank';
      case 'rewrite':
        return 'rewrite';
      case 'selection':
        return 'evaluate';
      default:
        return `${stage}.${kind}`;
    }
  }
  if (stage === 'slow_update') {
    if (kind === 'slow_rollout') return 'slow_rollout';
    if (kind === 'selection') return 'slow_selection';
    if (kind === 'slow_update') return 'slow_update';
  }
  if (stage === 'meta_skill') {
    if (kind === 'slow_rollout') return 'meta_rollout';
    if (kind === 'meta_skill' || kind === 'meta_reflect') return 'meta_skill';
  }
  if (stage === 'baseline' && kind === 'selection') return 'baseline';
  if (stage === 'final_selection' && kind === 'selection') return 'final_selection';
  if (stage === 'test' && kind === 'test') return 'test';
  return `${stage}.${kind}`;
}

export type DependencyModel = 'algorithm' | 'engine';

interface Node {
  id: string;
  stage: string;
  step: number;
  role: Role;
  durations: number[];
  algo: string[];
  engine: string[];
  streamsFrom?: string;
}

export interface PhasePlan {
  nodes: Array<Omit<Node, 'algo' | 'engine'>>;
  phases: Record<DependencyModel, Phase[]>;
  /** The phase of each call, in the order given (cached calls too); undefined when it fits no window. */
  callPhase: Array<string | undefined>;
  /** Server calls that fit no window or phase; counted, not bounded. */
  unplaced: number;
}

const TARGET_PHASES = new Set([
  'rollout',
  'evaluate',
  'baseline',
  'slow_rollout',
  'slow_selection',
  'meta_rollout',
  'final_selection',
  'test',
]);

function roleOf(name: string): Role {
  return TARGET_PHASES.has(name) ? 'target' : 'optimizer';
}

/**
 * Build the phases of a run from its stage windows (in order) and its calls. Cached calls are left
 * out: they cost no server time.
 */
export function buildPhases(windows: readonly StageWindow[], calls: readonly CallRecord[]): PhasePlan {
  const nodes = new Map<string, Node>();
  const durations = new Map<string, number[]>();
  const roles = new Map<string, Role>();
  let unplaced = 0;
  const prefixOf = (stage: string, step: number): string =>
    STEP_STAGES.has(stage)
      ? `s${step}`
      : stage === 'slow_update' || stage === 'meta_skill'
        ? `e${step}`
        : stage === 'baseline'
          ? ''
          : 'end';
  const seen = new Set(windows.map((w) => `${w.step}:${w.stage}`));
  const callPhase = calls.map((c) => {
    if (!seen.has(`${c.step}:${c.stage}`)) return undefined;
    const prefix = prefixOf(c.stage, c.step);
    return prefix ? `${prefix}.${phaseNameOf(c)}` : phaseNameOf(c);
  });
  for (const [i, c] of calls.entries()) {
    const id = callPhase[i];
    if (c.cached) continue;
    if (id === undefined) {
      unplaced++;
      continue;
    }
    roles.set(id, c.role);
    const list = durations.get(id) ?? [];
    list.push(c.serviceMs);
    durations.set(id, list);
  }

  const add = (
    id: string,
    stage: string,
    step: number,
    algo: string[],
    engine: string[],
    streamsFrom?: string,
  ): string => {
    const name = id.includes('.') && id !== 'baseline' ? id.slice(id.indexOf('.') + 1) : id;
    nodes.set(id, {
      id,
      stage,
      step,
      role: roles.get(id) ?? roleOf(name),
      durations: durations.get(id) ?? [],
      algo,
      engine,
      ...(streamsFrom ? { streamsFrom } : {}),
    });
    return id;
  };
  const dropUnknown = (ids: Array<string | undefined>): string[] =>
    ids.filter((x): x is string => x !== undefined);

  let skillReady: string | undefined; // the current skill is known once this phase is done
  let metaReady: string | undefined; // the meta skill the analysts read
  let baseline: string | undefined;
  let last: string | undefined; // engine order: the previous stage's end
  const stepsDone = new Set<number>();
  const epochEnds = new Set<number>();

  // The baseline first, whenever it started: the engine sends it once step 1's requests are out.
  const ordered = [
    ...windows.filter((w) => w.stage === 'baseline'),
    ...windows.filter((w) => w.stage !== 'baseline'),
  ];
  for (const w of ordered) {
    if (w.stage === 'review') continue;
    if (w.stage === 'baseline') {
      baseline = add('baseline', 'baseline', 0, [], dropUnknown([last]));
      last = baseline;
      continue;
    }
    if (STEP_STAGES.has(w.stage)) {
      if (stepsDone.has(w.step)) continue;
      stepsDone.add(w.step);
      const p = `s${w.step}`;
      const rollout = add(`${p}.rollout`, 'rollout', w.step, dropUnknown([skillReady]), dropUnknown([last]));
      const reflect = add(`${p}.reflect`, 'reflect', w.step, dropUnknown([metaReady]), [], rollout);
      let tail = reflect;
      if (durations.has(`${p}.reflect.deep`))
        tail = add(`${p}.reflect.deep`, 'reflect', w.step, [tail], [tail]);
      // The merge tree: levels of each group in order, both groups side by side, then the final merge.
      const mergeIds = [...durations.keys()].filter((id) => id.startsWith(`${p}.merge.`));
      const groupTails: string[] = [];
      for (const group of ['failure', 'success']) {
        const levels = mergeIds
          .filter((id) => id.startsWith(`${p}.merge.${group}.`))
          .map((id) => Number(id.slice(`${p}.merge.${group}.`.length)))
          .sort((a, b) => a - b);
        let prev = tail;
        for (const level of levels) {
          prev = add(`${p}.merge.${group}.${level}`, 'aggregate', w.step, [prev], [prev]);
        }
        if (prev !== tail) groupTails.push(prev);
      }
      if (mergeIds.includes(`${p}.merge.final`)) {
        const deps = groupTails.length ? groupTails : [tail];
        tail = add(`${p}.merge.final`, 'aggregate', w.step, deps, deps);
      } else if (groupTails.length) {
        tail = add(`${p}.aggregated`, 'aggregate', w.step, groupTails, groupTails);
      }
      for (const [name, stage] of [
        ['lr', 'select'],
        ['rank', 'select'],
        ['rewrite', 'update'],
        ['evaluate', 'evaluate'],
      ] as const) {
        if (durations.has(`${p}.${name}`)) tail = add(`${p}.${name}`, stage, w.step, [tail], [tail]);
      }
      for (const id of durations.keys()) {
        if (id.startsWith(`${p}.`) && !nodes.has(id)) tail = add(id, 'other', w.step, [tail], [tail]);
      }
      // The verdict needs the score to beat: the baseline's, for the first step.
      const gate = add(`${p}.gate`, 'evaluate', w.step, dropUnknown([tail, baseline]), [tail]);
      skillReady = gate;
      last = gate;
      continue;
    }
    if (w.stage === 'slow_update' || w.stage === 'meta_skill') {
      if (epochEnds.has(w.step * 2 + (w.stage === 'meta_skill' ? 1 : 0))) continue;
      epochEnds.add(w.step * 2 + (w.stage === 'meta_skill' ? 1 : 0));
      const p = `e${w.step}`;
      if (w.stage === 'slow_update') {
        const beforeSlow = skillReady;
        const sr = add(
          `${p}.slow_rollout`,
          'slow_update',
          w.step,
          dropUnknown([beforeSlow]),
          dropUnknown([last]),
        );
        const su = add(`${p}.slow_update`, 'slow_update', w.step, [sr], [sr]);
        const ss = add(`${p}.slow_selection`, 'slow_update', w.step, [su], [su]);
        skillReady = ss;
        last = ss;
      } else {
        // The meta skill reads the epoch's skills and the slow-update comparison, not its verdict.
        const sr = nodes.has(`${p}.slow_rollout`) ? `${p}.slow_rollout` : undefined;
        const pre = sr ? nodes.get(sr)!.algo : dropUnknown([skillReady]);
        // The engine starts it beside the slow update, once the slow update's rollouts are in.
        const mr = add(`${p}.meta_rollout`, 'meta_skill', w.step, pre, sr ? [sr] : dropUnknown([last]));
        const ms = add(`${p}.meta_skill`, 'meta_skill', w.step, dropUnknown([mr, sr]), [mr]);
        metaReady = ms;
        // Both end before the engine goes on: a join of no calls.
        last = sr ? add(`${p}.epoch_end`, 'other', w.step, [ms], dropUnknown([ms, last])) : ms;
      }
      continue;
    }
    if (w.stage === 'final_selection') {
      if (nodes.has('end.final_selection')) continue;
      const fs = add(
        'end.final_selection',
        'final_selection',
        w.step,
        dropUnknown([skillReady]),
        dropUnknown([last]),
      );
      skillReady = fs;
      last = fs;
      continue;
    }
    if (w.stage === 'test') {
      // The test split is scored more than once (the best skill, the no-skill baseline): one phase
      // holds every test call.
      if (!nodes.has('end.test')) {
        last = add('end.test', 'test', w.step, dropUnknown([skillReady]), dropUnknown([last]));
      }
      continue;
    }
    // A stage this model does not know: chain it in both models.
    last = add(
      `${prefixOf(w.stage, w.step)}.${w.stage}`,
      w.stage,
      w.step,
      dropUnknown([last]),
      dropUnknown([last]),
    );
  }
  for (const id of durations.keys()) if (!nodes.has(id)) unplaced += durations.get(id)!.length;

  const list = [...nodes.values()];
  const toPhases = (model: DependencyModel): Phase[] =>
    list.map((n) => ({
      id: n.id,
      stage: n.stage,
      step: n.step,
      role: n.role,
      durations: n.durations,
      after: model === 'algorithm' ? n.algo : n.engine,
      ...(n.streamsFrom ? { streamsFrom: n.streamsFrom } : {}),
    }));
  return {
    nodes: list.map(({ algo: _a, engine: _e, ...rest }) => rest),
    phases: { algorithm: toPhases('algorithm'), engine: toPhases('engine') },
    callPhase,
    unplaced,
  };
}
