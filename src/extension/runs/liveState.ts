/**
 * What the UI knows about a run from the engine's events, between two reads of its folder: step,
 * stage, best score, spend, the last candidate. Pure (no `vscode`), so the folding of events into
 * state is unit-tested.
 */
import type { EngineEvent } from '../../protocol/events';
import type { StageName } from '../../protocol/vocabulary';
import type { RunFolder } from '../../engine/store/runReader';
import type { GatePower, StepRecord } from '../../protocol/records';

export type CandidateReadyEvent = Extract<EngineEvent, { type: 'candidate/ready' }>;
export type ReviewRequestedEvent = Extract<EngineEvent, { type: 'review/requested' }>;

export type LiveStatus = 'running' | 'finished' | 'stopped' | 'failed' | 'interrupted';

export interface LiveSpend {
  calls: number;
  tokens: number;
  cacheHits: number;
  /** null when a model's price is unknown. */
  dollars: number | null;
  /** Prompt tokens, and those read from the providers' prompt caches. */
  promptTokens?: number;
  cachedTokens?: number;
  /** What those caches saved against uncached list prices; null when unknown. */
  cacheSavedDollars?: number | null;
  /** Requests cut off before their reply (tokens unknown): the spend above is then a lower bound. */
  cutOff?: number;
}

export interface LiveState {
  status: LiveStatus;
  /** Sequence number of the last event applied; older ones are dropped. */
  seq: number;
  /** The step in progress, or the last one finished. */
  step: number;
  /** Highest step whose `step/finished` arrived. */
  finishedStep: number;
  totalSteps: number;
  epoch: number;
  epochs: number;
  stage?: StageName;
  /** Stages started and not yet finished, oldest first: some run side by side (the baseline beside step 1, the meta skill beside the slow update). */
  openStages?: Array<{ stage: StageName; step: number }>;
  progress?: { done: number; total: number };
  bestScore?: number;
  baselineScore?: number;
  spend: LiveSpend;
  simulated: boolean;
  lastCandidate?: CandidateReadyEvent;
  /** The engine is paused until the person decides this step's candidate. */
  waiting?: ReviewRequestedEvent;
  /** Why the run stopped or failed. */
  message?: string;
  resumedFromStep?: number;
  /** Steps finished since the run (re)started, shown before the folder is read again. */
  records: StepRecord[];
  /** An evaluation waiting on a provider batch (evaluation.batch_api); absent when none is out. */
  batch?: WaitingBatch;
  /** What the gate can tell from noise (run/started), before summary.json says it. */
  gatePower?: GatePower;
}

export type WaitingBatch = Omit<Extract<EngineEvent, { type: 'batch/progress' }>, 'type' | 'state'>;

/** `test batch batch_abc (openai): in_progress, 3/10 answered`, for the Runs view and the status bar. */
export function describeBatch(b: WaitingBatch): string {
  return `${b.evaluation} batch ${b.batchId} (${b.provider}): ${b.detail}, ${b.done}/${b.total} answered${b.failed ? `, ${b.failed} failed` : ''}`;
}

/** The Runs view's and the status bar's sentence on a batch a live run waits for, and the ways out. */
export function waitingForBatch(b: WaitingBatch): string {
  return (
    `Waiting for ${describeBatch(b)}. Stop leaves the batch running and Resume collects it; ` +
    'to cancel it instead, Stop Run, then Cancel Provider Batch.'
  );
}

/** A stopped run's tooltip on the provider batches its folder records. */
export function recordedBatchText(count: number): string {
  const one = count === 1;
  return (
    `${one ? 'A provider batch is' : `${count} provider batches are`} recorded in this run: Resume collects ` +
    `${one ? 'it' : 'them'}; Cancel Provider Batch cancels ${one ? 'it' : 'them'} if you no longer want the answers.`
  );
}

export function initialLiveState(): LiveState {
  return {
    status: 'running',
    seq: -1,
    step: 0,
    finishedStep: 0,
    totalSteps: 0,
    epoch: 0,
    epochs: 0,
    spend: { calls: 0, tokens: 0, cacheHits: 0, dollars: 0 },
    simulated: false,
    records: [],
  };
}

/**
 * Folds one event into the state and returns the new state (the input is not changed). Events
 * carry a per-run sequence number that restarts when a run is resumed, so `run/started` resets it;
 * anything else at or below the last applied number is stale and ignored.
 */
export function applyEvent(prev: LiveState | undefined, seq: number, event: EngineEvent): LiveState {
  const base = prev ?? initialLiveState();
  if (event.type !== 'run/started' && seq <= base.seq) return base;
  // The engine that ran it is gone: only a resume (a new run/started) brings the run back.
  if (base.status === 'interrupted' && event.type !== 'run/started') return base;
  const s: LiveState = { ...base, seq, spend: { ...base.spend } };
  switch (event.type) {
    case 'run/started':
      return {
        ...initialLiveState(),
        seq,
        totalSteps: event.totalSteps,
        epochs: event.epochs,
        simulated: event.simulated,
        step: event.resumedFromStep ?? 0,
        finishedStep: event.resumedFromStep !== undefined ? event.resumedFromStep - 1 : 0,
        ...(event.resumedFromStep !== undefined ? { resumedFromStep: event.resumedFromStep } : {}),
        ...(base.bestScore !== undefined ? { bestScore: base.bestScore } : {}),
        ...(base.baselineScore !== undefined ? { baselineScore: base.baselineScore } : {}),
        ...(event.gatePower ? { gatePower: event.gatePower } : {}),
      };
    case 'stage/started':
      s.status = 'running';
      s.stage = event.stage;
      s.openStages = [...(base.openStages ?? []), { stage: event.stage, step: event.step }];
      delete s.progress;
      if (event.step > 0) s.step = event.step;
      if (event.epoch > 0) s.epoch = event.epoch;
      return s;
    case 'stage/finished': {
      const open = (base.openStages ?? []).filter((o) => o.stage !== event.stage || o.step !== event.step);
      s.openStages = open;
      // The stage shown is one still under way, when another runs on beside the one that ended.
      const last = open[open.length - 1];
      if (s.stage === event.stage && last) s.stage = last.stage;
      return s;
    }
    case 'rollout/progress':
      s.progress = { done: event.done, total: event.total };
      return s;
    case 'batch/progress': {
      const { type: _t, state, ...batch } = event;
      if (state === 'running') s.batch = batch;
      else delete s.batch;
      return s;
    }
    case 'baseline/scored':
      s.baselineScore = event.score;
      s.bestScore = Math.max(s.bestScore ?? -Infinity, event.score);
      return s;
    case 'candidate/ready':
      s.lastCandidate = event;
      return s;
    case 'review/requested':
      s.waiting = event;
      return s;
    case 'review/decided':
      if (s.waiting?.step === event.step) delete s.waiting;
      return s;
    case 'gate/verdict':
      s.bestScore = event.bestScore;
      return s;
    case 'step/finished':
      if (s.waiting && s.waiting.step <= event.record.step) delete s.waiting;
      s.records = [...s.records.filter((r) => r.step !== event.record.step), event.record];
      s.finishedStep = Math.max(s.finishedStep, event.record.step);
      s.step = Math.max(s.step, event.record.step);
      s.bestScore = event.record.best_score;
      delete s.progress;
      return s;
    case 'epoch/finished':
      s.epoch = event.epoch;
      return s;
    case 'accounting':
      s.spend = {
        calls: event.totals.calls,
        tokens: event.totals.promptTokens + event.totals.completionTokens,
        cacheHits: event.totals.cacheHits,
        dollars: event.totals.dollars,
        promptTokens: event.totals.promptTokens,
        cachedTokens: event.totals.cachedTokens ?? 0,
        cacheSavedDollars: event.totals.cacheSavedDollars ?? null,
        ...(event.totals.cutOff ? { cutOff: event.totals.cutOff } : {}),
      };
      return s;
    case 'run/finished':
      s.status = 'finished';
      delete s.waiting;
      s.bestScore = event.bestScore;
      s.baselineScore = event.baselineScore;
      delete s.stage;
      delete s.progress;
      delete s.batch;
      return s;
    case 'run/stopped':
      s.status = 'stopped';
      delete s.waiting;
      s.message = event.reason;
      delete s.stage;
      delete s.progress;
      delete s.batch;
      return s;
    case 'run/failed':
      s.status = 'failed';
      delete s.waiting;
      s.message = event.message;
      delete s.stage;
      delete s.progress;
      delete s.batch;
      return s;
    default:
      return s;
  }
}

/** The engine process died under a running run. */
export function markInterrupted(state: LiveState, why: string): LiveState {
  if (state.status !== 'running') return state;
  const next: LiveState = { ...state, status: 'interrupted', message: why };
  delete next.waiting;
  delete next.stage;
  delete next.progress;
  delete next.batch;
  return next;
}

export function isActive(state: LiveState | undefined): boolean {
  return state?.status === 'running';
}

/** A run folder plus what the events of this session say about it. */
export interface RunView extends RunFolder {
  live?: LiveState;
}

/**
 * The folder as last read plus the steps the events reported since, so a finished step shows at
 * once rather than after the next read of history.json.
 */
export function mergeLive(folder: RunFolder, live: LiveState | undefined): RunView {
  if (!live) return { ...folder };
  const known = new Set(folder.history.map((r) => r.step));
  const extra = live.records.filter((r) => !known.has(r.step));
  if (extra.length === 0) return { ...folder, live };
  const history = [...folder.history, ...extra].sort((a, b) => a.step - b.step);
  const epochs = new Map(folder.epochs.map((e) => [e.epoch, { ...e }]));
  for (const r of extra) if (!epochs.has(r.epoch)) epochs.set(r.epoch, { epoch: r.epoch, steps: [] });
  const merged = [...epochs.values()]
    .map((e) => ({ ...e, steps: history.filter((r) => r.epoch === e.epoch) }))
    .sort((a, b) => a.epoch - b.epoch);
  return { ...folder, history, epochs: merged, live };
}

/** Folder status corrected by live knowledge (a folder read mid-step may still say `running`). */
export function effectiveStatus(run: RunView): RunFolder['status'] {
  const live = run.live;
  if (!live) return run.status;
  switch (live.status) {
    case 'running':
      return 'running';
    case 'finished':
      return 'finished';
    default:
      return run.status === 'finished' ? 'finished' : 'interrupted';
  }
}

/** One-line status text: `running`, `finished`, `stopped`, `failed`, `interrupted`, `empty`. */
export function statusText(run: RunView): string {
  const live = run.live;
  if (live && live.status !== 'running' && live.status !== 'finished' && run.status !== 'finished') {
    return live.status;
  }
  return effectiveStatus(run);
}
