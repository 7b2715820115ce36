import { outstandingBatches } from '../llm/batch/cancel';
import { readLedgerSpend, type LedgerSpend } from '../llm/ledger';
import { conversationPaths } from './predictionNames';
import { readJsonl } from './jsonl';
import { runLockHeld } from './runLock';
import { RESULT_ROWS } from './runRows';
import { readJsonObject } from './jsonObject';
import { epochEndGateEvidence, finalVerdict, VerdictReplay } from './replayVerdicts';
import { artifactSchemas, readHistory, readRuntimeState } from './runSchemas';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { EngineEvent } from '../../protocol/events';
import type { ActivationRecord, RuntimeState, StepRecord } from '../../protocol/records';
import { ENGINE_ID } from '../../protocol/vocabulary';
import {
  STORE_DIR,
  RUN_DIR,
  RUN_FILE,
  RunLayout,
  STEP_DIR,
  STEP_FILE,
  evalPaths,
  parseBatchDirName,
  parseEpochDirName,
} from './layout';
import { messageOf } from '../errors';

/**
 * Reads a run folder written by this engine (CLI or extension) or by the Python reference. Paths
 * stored inside the files may point at another machine, so every file is resolved relative to the
 * folder itself.
 */
export interface RunFolder {
  dir: string;
  name: string;
  status: 'running' | 'finished' | 'interrupted' | 'empty';
  writer: typeof ENGINE_ID | 'skillopt-python' | 'unknown';
  config: Record<string, unknown>;
  history: StepRecord[];
  state?: RuntimeState;
  summary?: Record<string, unknown>;
  epochs: EpochView[];
  baselineScore?: number;
  bestScore?: number;
  bestStep?: number;
  /** Why runtime_state.json or history.json could not be read (damaged, or a newer version's). */
  problem?: string;
  /** The activation track's records (`activation_history.json`), when the run trained the description. */
  activation?: ActivationRecord[];
  /**
   * Provider batches its own evaluations left outstanding (`provider_batch.json` outside `eval_only/`:
   * running, cancelled or lost, not collected yet); absent when none, or while a process holds the run.
   */
  batches?: number;
  /** What the run paid over every process (its ledger); read when no process is writing it. */
  spend?: LedgerSpend;
}

/** The paired gate's test and the per-item rule's finding at an epoch end, when it recorded them. */
type EpochEndEvidence = ReturnType<typeof epochEndGateEvidence>;

export interface EpochView {
  epoch: number;
  steps: StepRecord[];
  slowUpdate?: { action: string; content?: string; selectionHard?: number } & EpochEndEvidence;
  /** Meta reflect's gated candidate (`meta_reflect/epoch_EE/gate_result.json`). */
  metaReflect?: { action: string } & EpochEndEvidence;
  metaSkill?: { action: string; content?: string };
  /** Skill-aware reflection: notes the epoch's steps added to the protected appendix, and the appendix after them. */
  appendix?: { added: number; total: number; consolidations: number; notes: string[] };
}

export interface StepArtifacts {
  dir: string;
  candidate?: string;
  previous?: string;
  applyReport?: string;
  /** Skill-aware reflection's `appendix_notes.json`. */
  appendixNotes?: string;
  mergedPatch?: string;
  rankedEdits?: string;
  failedTrajectories: Array<{ id: string; path: string; reason?: string }>;
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

export function isRunFolder(dir: string): boolean {
  const run = new RunLayout(dir);
  return [RUN_FILE.state, RUN_FILE.history, RUN_FILE.config].some((f) => existsSync(run.file(f)));
}

export function readRunFolder(dir: string): RunFolder {
  const layout = new RunLayout(dir);
  const config = readJsonObject(layout.file(RUN_FILE.config)) ?? {};
  // The engine's own schemas: a damaged or newer file is named, not cast and trusted.
  let history: StepRecord[] = [];
  let state: RuntimeState | undefined;
  let problem: string | undefined;
  try {
    history = readHistory(layout.file(RUN_FILE.history));
    state = readRuntimeState(layout.file(RUN_FILE.state));
  } catch (err) {
    problem = messageOf(err);
  }
  const summary = readJsonObject(layout.file(RUN_FILE.summary));
  const engine = state?.engine;
  const writer = engine === ENGINE_ID ? ENGINE_ID : state || history.length ? 'skillopt-python' : 'unknown';
  const status: RunFolder['status'] = runLockHeld(dir)
    ? 'running'
    : summary
      ? 'finished'
      : // A run killed before its first save has its config and a ledger of what it paid: resumable.
        state ||
          history.length ||
          (existsSync(layout.file(RUN_FILE.config)) && existsSync(layout.file(RUN_FILE.ledger)))
        ? 'interrupted'
        : 'empty';
  const epochNums = new Set(history.map((r) => r.epoch));
  for (const sub of [RUN_DIR.slowUpdate, RUN_DIR.metaSkill, RUN_DIR.metaReflect]) {
    const p = layout.file(sub);
    if (!existsSync(p)) continue;
    for (const e of readdirSync(p)) {
      const n = parseEpochDirName(e);
      if (n !== undefined) epochNums.add(n);
    }
  }
  const epochs: EpochView[] = [...epochNums]
    .sort((a, b) => a - b)
    .map((epoch) => {
      const slow = readJsonObject(layout.epochFile('slow_update', epoch, STEP_FILE.slowResult));
      const meta = readJsonObject(layout.epochFile('meta_skill', epoch, STEP_FILE.metaSkillResult));
      const reflect = readJsonObject(layout.epochFile('meta_reflect', epoch, STEP_FILE.gateResult));
      const view: EpochView = { epoch, steps: history.filter((r) => r.epoch === epoch) };
      if (reflect) view.metaReflect = { action: str(reflect.action), ...epochEndGateEvidence(reflect) };
      if (slow) {
        view.slowUpdate = { action: str(slow.action), ...epochEndGateEvidence(slow) };
        if (typeof slow.slow_update_content === 'string') view.slowUpdate.content = slow.slow_update_content;
        if (typeof slow.selection_hard === 'number') view.slowUpdate.selectionHard = slow.selection_hard;
      }
      if (meta) {
        view.metaSkill = { action: str(meta.action) };
        if (typeof meta.meta_skill_content === 'string') view.metaSkill.content = meta.meta_skill_content;
      }
      const appendix = appendixOfEpoch(layout, view.steps);
      if (appendix) view.appendix = appendix;
      return view;
    });
  const fromSummary = summary?.baseline_selection_hard;
  const baseline = typeof fromSummary === 'number' ? fromSummary : state?.baseline_score;
  const run: RunFolder = { dir, name: basename(dir), status, writer, config, history, epochs };
  if (problem) run.problem = problem;
  const activation = readActivation(layout.file(RUN_FILE.activationHistory));
  if (activation) run.activation = activation;
  if (state) run.state = state;
  if (summary) run.summary = summary;
  if (baseline !== undefined && baseline !== null) run.baselineScore = baseline;
  const bestScore = state?.best_score ?? history.at(-1)?.best_score;
  if (bestScore !== undefined) run.bestScore = bestScore;
  const bestStep = state?.best_step ?? history.at(-1)?.best_step;
  if (bestStep !== undefined) run.bestStep = bestStep;
  const batches = status === 'running' ? 0 : outstandingBatches(dir, RUN_DIR.evalOnly).length;
  if (batches) run.batches = batches;
  const spend = status === 'running' ? undefined : readLedgerSpend(layout.file(RUN_FILE.ledger));
  if (spend) run.spend = spend;
  return run;
}

/** The activation records, or undefined when there are none or the file does not read as them. */
function readActivation(path: string): ActivationRecord[] | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = artifactSchemas.activationHistory.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** Files of one step, for the tree's artifact nodes and the diff view. */
export function stepArtifacts(dir: string, step: number): StepArtifacts {
  const layout = new RunLayout(dir);
  const stepDir = layout.stepDir(step);
  const opt = (p: string): string | undefined => (existsSync(p) ? p : undefined);
  const failed: StepArtifacts['failedTrajectories'] = [];
  // With gradient accumulation (train.accumulation > 1) each micro-batch has its own rollout folder.
  const rollouts = [layout.rolloutDir(step)];
  if (existsSync(stepDir)) {
    for (const name of readdirSync(stepDir).sort()) {
      const batch = parseBatchDirName(name);
      if (batch !== undefined) rollouts.push(join(layout.microBatchDir(step, batch), STEP_DIR.rollout));
    }
  }
  for (const rollout of rollouts) {
    const results = evalPaths(rollout).results;
    if (!existsSync(results)) continue;
    const conversationOf = conversationPaths(rollout);
    // A torn last line from an interrupted run is passed over (readJsonl).
    for (const r of readJsonl(results, RESULT_ROWS)) {
      if (r.hard) continue;
      failed.push({
        id: r.id,
        path: conversationOf(r.id),
        ...(r.fail_reason ? { reason: r.fail_reason } : {}),
      });
    }
  }
  const out: StepArtifacts = { dir: stepDir, failedTrajectories: failed };
  const set = (
    k: 'candidate' | 'previous' | 'applyReport' | 'appendixNotes' | 'mergedPatch' | 'rankedEdits',
    p: string,
  ): void => {
    const v = opt(p);
    if (v) out[k] = v;
  };
  set('candidate', layout.stepFile(step, STEP_FILE.candidate));
  set('previous', layout.skillVersion(step - 1));
  set('applyReport', layout.stepFile(step, STEP_FILE.applyReport));
  set('appendixNotes', layout.stepFile(step, STEP_FILE.appendixNotes));
  set('mergedPatch', layout.stepFile(step, STEP_FILE.merged));
  set('rankedEdits', layout.stepFile(step, STEP_FILE.ranked));
  return out;
}

/** Run folders directly under `root` and one level below (e.g. `.skillopt/runs/*`). */
export function listRunFolders(root: string): string[] {
  if (!existsSync(root)) return [];
  const found: string[] = [];
  const visit = (dir: string, depth: number): void => {
    if (isRunFolder(dir)) {
      found.push(dir);
      return;
    }
    if (depth === 0) return;
    for (const e of readdirSync(dir)) {
      if (e.startsWith('.') && e !== STORE_DIR) continue;
      if (e === 'node_modules') continue;
      const p = join(dir, e);
      try {
        if (statSync(p).isDirectory()) visit(p, depth - 1);
      } catch {
        // Unreadable entries are not runs.
      }
    }
  };
  visit(root, 3);
  return found.sort();
}

/**
 * The event sequence a live run would have produced, rebuilt from its folder (what a UI needs to
 * show a finished or foreign run the same way as a live one). Timings and progress ticks are not
 * recoverable and are omitted.
 */
export function eventsFromRunFolder(dir: string): EngineEvent[] {
  const run = readRunFolder(dir);
  const events: EngineEvent[] = [];
  const cfg = run.config;
  const epochs = Number(cfg.num_epochs ?? run.epochs.length ?? 0);
  const spe = Number(cfg.steps_per_epoch ?? 0);
  events.push({
    type: 'run/started',
    runId: dir,
    outDir: dir,
    totalSteps: spe * epochs || run.history.length,
    epochs,
    stepsPerEpoch: spe,
    splitSizes: { train: Number(cfg.train_size ?? 0), val: 0, test: 0 },
    optimizer: `${str(cfg.optimizer_backend)}/${str(cfg.optimizer_model)}`,
    target: `${str(cfg.target_backend)}/${str(cfg.target_model)}`,
    simulated: cfg.optimizer_backend === 'sim' || cfg.target_backend === 'sim',
  });
  if (run.baselineScore !== undefined) {
    events.push({
      type: 'baseline/scored',
      hard: run.baselineScore,
      soft: run.baselineScore,
      score: run.baselineScore,
    });
  }
  const verdicts = new VerdictReplay(new RunLayout(dir), run.baselineScore);
  for (const e of run.epochs) {
    for (const r of e.steps) {
      const verdict = verdicts.step(r);
      if (verdict) events.push(verdict);
      events.push({ type: 'step/finished', record: r });
    }
    // The epoch end's gated stages, announced under its last step as the live loop does.
    const last = e.steps.at(-1)?.step;
    if (last !== undefined) events.push(...verdicts.epochEnds(e.epoch, last));
    events.push({
      type: 'epoch/finished',
      epoch: e.epoch,
      ...(e.slowUpdate ? { slowUpdate: e.slowUpdate.action } : {}),
      ...(e.metaSkill ? { metaSkill: e.metaSkill.action } : {}),
    });
  }
  const final = finalVerdict(run.summary);
  if (final) events.push(final);
  if (run.status === 'finished') {
    events.push({
      type: 'run/finished',
      outDir: dir,
      bestStep: run.bestStep ?? 0,
      bestScore: run.bestScore ?? 0,
      baselineScore: run.baselineScore ?? 0,
      bestSkillPath: new RunLayout(dir).file(RUN_FILE.bestSkill),
    });
  }
  return events;
}

/** What the epoch's steps did to the execution-notes appendix; the notes as its last flush left them. */
function appendixOfEpoch(layout: RunLayout, steps: readonly StepRecord[]): EpochView['appendix'] {
  const flushed = steps.filter((r) => r.n_appendix_notes_total !== undefined);
  const last = flushed[flushed.length - 1];
  if (!last) return undefined;
  const saved = readJsonObject(layout.stepFile(last.step, STEP_FILE.appendixNotes));
  const notes = Array.isArray(saved?.appendix_after) ? saved.appendix_after.map(str) : [];
  return {
    added: flushed.reduce((n, r) => n + (r.n_appendix_notes_added ?? 0), 0),
    total: last.n_appendix_notes_total ?? notes.length,
    consolidations: flushed.filter((r) => r.n_appendix_notes_consolidated !== undefined).length,
    notes,
  };
}
