import { outstandingBatches } from '../llm/batch/cancel';
import { conversationPaths } from './predictionNames';
import { readJsonl } from './jsonl';
import { runLockHeld } from './runLock';
import { RESULT_ROWS } from './runRows';
import {
  artifactSchemas,
  gateTestSchema,
  itemRegressionsSchema,
  readHistory,
  readRuntimeState,
} from './runSchemas';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { EngineEvent } from '../../protocol/events';
import type {
  ActivationRecord,
  GateTestRecord,
  ItemRegressions,
  RuntimeState,
  StepRecord,
} from '../../protocol/records';
import { ENGINE_ID, isSkipped } from '../../protocol/vocabulary';
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
}

export interface EpochView {
  epoch: number;
  steps: StepRecord[];
  slowUpdate?: { action: string; content?: string; selectionHard?: number };
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

/**
 * A run-folder file read only for display (config, summary, epoch-end results): a JSON object whose
 * fields are each checked where they are shown; anything else, or no file, reads as undefined.
 */
export function readObject(path: string): Record<string, unknown> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw)
    ? (raw as Record<string, unknown>)
    : undefined;
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

export function isRunFolder(dir: string): boolean {
  const run = new RunLayout(dir);
  return [RUN_FILE.state, RUN_FILE.history, RUN_FILE.config].some((f) => existsSync(run.file(f)));
}

export function readRunFolder(dir: string): RunFolder {
  const layout = new RunLayout(dir);
  const config = readObject(layout.file(RUN_FILE.config)) ?? {};
  // The engine's own schemas: a damaged or newer file is named, not cast and trusted.
  let history: StepRecord[] = [];
  let state: RuntimeState | undefined;
  let problem: string | undefined;
  try {
    history = readHistory(layout.file(RUN_FILE.history));
    state = readRuntimeState(layout.file(RUN_FILE.state));
  } catch (err) {
    problem = err instanceof Error ? err.message : String(err);
  }
  const summary = readObject(layout.file(RUN_FILE.summary));
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
  for (const sub of [RUN_DIR.slowUpdate, RUN_DIR.metaSkill]) {
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
      const slow = readObject(layout.epochFile('slow_update', epoch, STEP_FILE.slowResult));
      const meta = readObject(layout.epochFile('meta_skill', epoch, STEP_FILE.metaSkillResult));
      const view: EpochView = { epoch, steps: history.filter((r) => r.epoch === epoch) };
      if (slow) {
        view.slowUpdate = { action: str(slow.action) };
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
  for (const e of run.epochs) {
    for (const r of e.steps) {
      const prev = run.history.find((h) => h.step === r.step - 1);
      const verdict = verdictFromRecord(r, prev?.candidate_hash === r.candidate_hash);
      if (verdict) events.push(verdict);
      events.push({ type: 'step/finished', record: r });
    }
    events.push({
      type: 'epoch/finished',
      epoch: e.epoch,
      ...(e.slowUpdate ? { slowUpdate: e.slowUpdate.action } : {}),
      ...(e.metaSkill ? { metaSkill: e.metaSkill.action } : {}),
    });
  }
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

/** The gate's evidence an epoch end's result file keeps (slow_result.json, gate_result.json); a damaged entry reads as none. */
export function epochEndGateEvidence(res: unknown): {
  gateTest?: GateTestRecord;
  itemRegressions?: ItemRegressions;
} {
  if (typeof res !== 'object' || res === null) return {};
  const r = res as Record<string, unknown>;
  const test = gateTestSchema.safeParse(r.gate_test);
  const broken = itemRegressionsSchema.safeParse(r.item_regressions);
  return {
    ...(test.success ? { gateTest: test.data } : {}),
    ...(broken.success ? { itemRegressions: broken.data } : {}),
  };
}

/** The gate verdict a step record implies; none for a skipped step or one that never reached the gate. */
export function verdictFromRecord(
  r: StepRecord,
  cacheHit = false,
): Extract<EngineEvent, { type: 'gate/verdict' }> | undefined {
  if (r.candidate_gate_score === undefined || isSkipped(r.action)) return undefined;
  return {
    type: 'gate/verdict',
    step: r.step,
    epoch: r.epoch,
    origin: 'step',
    action: r.action,
    candidateScore: r.candidate_gate_score,
    currentScore: r.current_score,
    bestScore: r.best_score,
    ...(r.selection_hard !== undefined ? { selectionHard: r.selection_hard } : {}),
    ...(r.selection_soft !== undefined ? { selectionSoft: r.selection_soft } : {}),
    cacheHit,
    ...(r.gate_test ? { gateTest: r.gate_test } : {}),
    ...(r.item_regressions ? { itemRegressions: r.item_regressions } : {}),
  };
}

/** What the epoch's steps did to the execution-notes appendix; the notes as its last flush left them. */
function appendixOfEpoch(layout: RunLayout, steps: readonly StepRecord[]): EpochView['appendix'] {
  const flushed = steps.filter((r) => r.n_appendix_notes_total !== undefined);
  const last = flushed[flushed.length - 1];
  if (!last) return undefined;
  const saved = readObject(layout.stepFile(last.step, STEP_FILE.appendixNotes));
  const notes = Array.isArray(saved?.appendix_after) ? saved.appendix_after.map(str) : [];
  return {
    added: flushed.reduce((n, r) => n + (r.n_appendix_notes_added ?? 0), 0),
    total: last.n_appendix_notes_total ?? notes.length,
    consolidations: flushed.filter((r) => r.n_appendix_notes_consolidated !== undefined).length,
    notes,
  };
}
