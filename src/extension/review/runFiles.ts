/**
 * A step's candidate read back from a run folder (ours, the CLI's or the Python reference's): the
 * texts on both sides, the edits with stable ids and apply statuses, and the gate's verdict. Used
 * when the person opens a candidate from a finished run and by the diff view. No `vscode` import.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { CandidateEdit, EngineEvent } from '../../protocol/events';
import { assignEditIds, type Edit } from '../../engine/skill/applyEdits';
import { skillHash } from '../../engine/skill/document';
import { lineHunks } from '../../engine/skill/hunks';
import { readCandidateFiles, type PackageChange } from '../../engine/skill/package/changes';
import { SKILL_FILE } from '../../engine/skill/package/text';
import type { GateTestRecord, ItemRegressions, StepRecord } from '../../protocol/records';
import { epochEndGateEvidence, epochEndVerdicts, verdictFromRecord } from '../../engine/store/replayVerdicts';
import { RUN_FILE, RunLayout, STEP_FILE, runDirOfStageFile } from '../../engine/store/layout';
import { readHistory } from '../../engine/store/runSchemas';
import { conflictsWithin } from '../../engine/train/conflicts';
import type { CandidateOrigin } from '../../protocol/webview';
import { OVERRULE_DECISIONS, type OverruleDecision } from '../../protocol/vocabulary';

export type CandidateReady = Extract<EngineEvent, { type: 'candidate/ready' }>;
export type GateVerdictEvent = Extract<EngineEvent, { type: 'gate/verdict' }>;
export type Origin = CandidateOrigin;

export interface StepCandidate {
  event: CandidateReady;
  previousText: string;
  candidateText: string;
  /** The gate's verdict when the folder records one. */
  verdict?: GateVerdictEvent;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function readJson(path: string): unknown {
  const text = readText(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** history.json through the engine's schema, as the runs tree reads it: a damaged file shows no steps. */
function history(runDir: string): StepRecord[] {
  try {
    return readHistory(new RunLayout(runDir).file(RUN_FILE.history));
  } catch {
    return [];
  }
}

/** The run folder a candidate file belongs to (`<run>/steps/step_N/…` or `<run>/<stage>/epoch_E/…`). */
export function runDirOfCandidate(candidatePath: string): string {
  return runDirOfStageFile(candidatePath);
}

export function candidatePathOf(runDir: string, step: number, origin: Origin, epoch?: number): string {
  const run = new RunLayout(runDir);
  return origin === 'step'
    ? run.stepFile(step, STEP_FILE.candidate)
    : run.epochFile(origin, epoch ?? 0, STEP_FILE.candidate);
}

/**
 * The files other than SKILL.md that a skill folder's candidate changes or adds, as the engine
 * recorded them beside the candidate (`candidate_files.json`); none for a single-file skill.
 */
export function otherFilesOfCandidate(candidatePath: string): PackageChange[] {
  return (readCandidateFiles(candidatePath) ?? []).filter((f) => f.path !== SKILL_FILE);
}

/** otherFilesOfCandidate for a step (or an epoch-end stage) of a run folder. */
export function otherCandidateFiles(runDir: string, step: number, origin: Origin): PackageChange[] {
  const epoch = history(runDir).find((r) => r.step === step)?.epoch ?? 0;
  return otherFilesOfCandidate(candidatePathOf(runDir, step, origin, epoch));
}

/** One changed file's texts before and after a candidate (empty before when the candidate adds it). */
export function candidateFileTexts(
  runDir: string,
  step: number,
  origin: Origin,
  file: string,
): { previous: string; candidate: string } | undefined {
  const f = otherCandidateFiles(runDir, step, origin).find((x) => x.path === file);
  return f ? { previous: f.before, candidate: f.after } : undefined;
}

/** Last step of an epoch: the step number the engine gives that epoch's end-of-epoch stages. */
export function lastStepOfEpoch(runDir: string, epoch: number): number | undefined {
  const steps = history(runDir)
    .filter((r) => r.epoch === epoch)
    .map((r) => r.step);
  return steps.length ? Math.max(...steps) : undefined;
}

export function epochOfStep(runDir: string, step: number): number | undefined {
  return history(runDir).find((r) => r.step === step)?.epoch;
}

/**
 * The skill a candidate was made from. Skill snapshots are re-saved after an accepted epoch-end
 * stage, so a hash decides when one is known; the snapshot after the step before otherwise
 * (`RunLayout.skillVersion`).
 */
export function previousTextOf(
  runDir: string,
  step: number,
  origin: Origin,
  wantHash?: string,
): string | undefined {
  const tries = origin === 'step' ? [step - 1, step - 2] : [step, step - 1];
  const texts = tries
    .filter((n) => n >= 0)
    .map((n) => readText(new RunLayout(runDir).skillVersion(n)))
    .filter((t): t is string => t !== undefined);
  if (wantHash) {
    const hit = texts.find((t) => skillHash(t) === wantHash);
    if (hit !== undefined) return hit;
  }
  return texts[0];
}

/** Ranked edits with the ids and statuses of the apply report (ids computed when the report has none). */
export function stepEdits(runDir: string, step: number): CandidateEdit[] {
  const run = new RunLayout(runDir);
  const ranked = readJson(run.stepFile(step, STEP_FILE.ranked));
  const report = readJson(run.stepFile(step, STEP_FILE.applyReport));
  const rows = Array.isArray(report) ? report.filter(isRecord) : [];
  const rawEdits = isRecord(ranked) && Array.isArray(ranked.edits) ? ranked.edits.filter(isRecord) : [];
  // Rewrite modes have no ranked edit list; the report (when any) is then the only source.
  const source: Edit[] = (rawEdits.length ? rawEdits : rows).map((e, i) => {
    const row = rows[i];
    const id = typeof row?.id === 'string' && row.id ? row.id : typeof e.id === 'string' ? e.id : undefined;
    const content =
      typeof e.content === 'string'
        ? e.content
        : typeof e.content_preview === 'string'
          ? e.content_preview
          : undefined;
    return {
      ...e,
      op: typeof e.op === 'string' ? e.op : '',
      ...(content !== undefined ? { content } : {}),
      ...(id ? { id } : {}),
    };
  });
  return candidateEdits(assignEditIds(source), rows);
}

/** Edits of an epoch's meta reflection (`meta_reflect_result.json`), with their apply statuses. */
export function metaReflectEdits(runDir: string, epoch: number): CandidateEdit[] {
  const res = readJson(new RunLayout(runDir).epochFile('meta_reflect', epoch, STEP_FILE.metaReflectResult));
  if (!isRecord(res) || !Array.isArray(res.edits)) return [];
  const rows = Array.isArray(res.report) ? res.report.filter(isRecord) : [];
  return candidateEdits(
    assignEditIds(
      res.edits.filter(isRecord).map((e) => ({ ...e, op: typeof e.op === 'string' ? e.op : '' })),
    ),
    rows,
  );
}

/** Edits with ids as the review shows them: the apply report's status, conflicts among themselves. */
function candidateEdits(
  edits: readonly Edit[],
  rows: ReadonlyArray<Record<string, unknown>>,
): CandidateEdit[] {
  return edits.map((e, i) => {
    const status = rows[i]?.status;
    const reason = rows[i]?.error;
    return {
      id: String(e.id),
      op: String(e.op ?? ''),
      ...(typeof e.target === 'string' && e.target ? { target: e.target } : {}),
      ...(typeof e.content === 'string' ? { content: e.content } : {}),
      ...(typeof e.support_count === 'number' ? { support_count: e.support_count } : {}),
      ...(typeof e.source_type === 'string' ? { source_type: e.source_type } : {}),
      ...(typeof status === 'string' ? { status } : {}),
      ...(typeof reason === 'string' && reason ? { status_reason: reason } : {}),
      ...(typeof e.file === 'string' && e.file && e.file !== 'SKILL.md' ? { file: e.file } : {}),
      ...conflictsWithin(e.conflicts_with, edits),
    };
  });
}

/** An epoch-end stage as the folder records it: what it decided and its gate score. */
export interface EpochEndResult {
  origin: Exclude<Origin, 'step'>;
  epoch: number;
  step: number;
  action: string;
  score?: number;
  hasCandidate: boolean;
  /** The paired gate's test and the per-item rule's finding, when the gate ran them. */
  gateTest?: GateTestRecord;
  itemRegressions?: ItemRegressions;
  /** Hash of the skill the stage started from, when recorded. */
  skillHash?: string;
  candidateHash?: string;
}

function epochEndResult(
  runDir: string,
  origin: Exclude<Origin, 'step'>,
  epoch: number,
): EpochEndResult | undefined {
  const step = lastStepOfEpoch(runDir, epoch);
  if (step === undefined) return undefined;
  const file = (name: string): string => new RunLayout(runDir).epochFile(origin, epoch, name);
  const hasCandidate = existsSync(file(STEP_FILE.candidate));
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  if (origin === 'slow_update') {
    const res = readJson(file(STEP_FILE.slowResult));
    if (!isRecord(res) || typeof res.action !== 'string') return undefined;
    const score = num(res.selection_score);
    const cand = str(res.candidate_hash);
    return {
      origin,
      epoch,
      step,
      action: res.action,
      hasCandidate,
      ...(score !== undefined ? { score } : {}),
      ...(cand ? { candidateHash: cand } : {}),
      ...epochEndGateEvidence(res),
    };
  }
  const gate = readJson(file(STEP_FILE.gateResult));
  const res = readJson(file(STEP_FILE.metaReflectResult));
  if (!isRecord(gate) && !isRecord(res)) return undefined;
  const action =
    isRecord(gate) && typeof gate.action === 'string' ? gate.action : isRecord(res) ? String(res.action) : '';
  const score = isRecord(gate) ? num(gate.score) : undefined;
  const from = isRecord(res) ? str(res.skill_hash) : undefined;
  const cand = isRecord(res) ? str(res.candidate_hash) : undefined;
  return {
    origin,
    epoch,
    step,
    action,
    hasCandidate,
    ...(score !== undefined ? { score } : {}),
    ...(from ? { skillHash: from } : {}),
    ...(cand ? { candidateHash: cand } : {}),
    ...epochEndGateEvidence(gate),
  };
}

/** The stage's verdict as the live run announced it (none when it reached no gate). */
function epochEndVerdict(runDir: string, r: EpochEndResult): GateVerdictEvent | undefined {
  return epochEndVerdicts(runDir, history(runDir)).find((v) => v.origin === r.origin && v.epoch === r.epoch);
}

/** A step's (or an epoch-end stage's) candidate as a `candidate/ready` event plus both texts. */
export function stepCandidateFromFolder(
  runDir: string,
  step: number,
  origin: Origin = 'step',
): StepCandidate | undefined {
  const record = history(runDir).find((r) => r.step === step);
  const epoch = record?.epoch ?? 0;
  const candidatePath = candidatePathOf(runDir, step, origin, epoch);
  const candidateText = readText(candidatePath);
  if (candidateText === undefined) return undefined;
  const stage = origin === 'step' ? undefined : epochEndResult(runDir, origin, epoch);
  const previousText = previousTextOf(runDir, step, origin, stage?.skillHash);
  if (previousText === undefined) return undefined;
  const hash = origin === 'step' ? record?.candidate_hash : stage?.candidateHash;
  const edits =
    origin === 'step'
      ? stepEdits(runDir, step)
      : origin === 'meta_reflect'
        ? metaReflectEdits(runDir, epoch)
        : [];
  const event: CandidateReady = {
    type: 'candidate/ready',
    step,
    epoch,
    origin,
    previousHash: skillHash(previousText),
    candidateHash: hash ?? skillHash(candidateText),
    edits,
    hunks: lineHunks(previousText, candidateText),
    candidatePath,
  };
  const verdict =
    origin === 'step'
      ? record
        ? verdictFromRecord(record)
        : undefined
      : stage
        ? epochEndVerdict(runDir, stage)
        : undefined;
  return { event, previousText, candidateText, ...(verdict ? { verdict } : {}) };
}

export interface CandidateEntry {
  step: number;
  epoch: number;
  origin: Origin;
  action: string;
}

/** Epoch-end stages recorded in a run folder, in the order the engine runs them. */
export function epochEndsOf(runDir: string): EpochEndResult[] {
  const epochs = [...new Set(history(runDir).map((r) => r.epoch))].sort((a, b) => a - b);
  return epochs.flatMap((epoch) =>
    (['meta_reflect', 'slow_update'] as const)
      .map((origin) => epochEndResult(runDir, origin, epoch))
      .filter((r): r is EpochEndResult => r !== undefined),
  );
}

/** Every candidate a run folder holds, in step order (epoch-end stages after their epoch's last step). */
export function listCandidates(runDir: string): CandidateEntry[] {
  const out: CandidateEntry[] = [];
  for (const r of history(runDir).sort((a, b) => a.step - b.step)) {
    if (existsSync(candidatePathOf(runDir, r.step, 'step'))) {
      out.push({ step: r.step, epoch: r.epoch, origin: 'step', action: r.action });
    }
  }
  for (const e of epochEndsOf(runDir)) {
    if (!e.hasCandidate) continue;
    const at = out.findIndex((c) => c.step > e.step);
    const entry: CandidateEntry = { step: e.step, epoch: e.epoch, origin: e.origin, action: e.action };
    if (at === -1) out.push(entry);
    else out.splice(at, 0, entry);
  }
  return out;
}

/** The person's overrules of finished steps the engine applied (`human_decisions.json`, auto mode). */
export function overrulesOf(
  runDir: string,
): Array<{ step: number; decision: OverruleDecision; reason?: string }> {
  const rows = readJson(new RunLayout(runDir).file(RUN_FILE.humanDecisions));
  if (!Array.isArray(rows)) return [];
  return rows.filter(isRecord).flatMap((o) => {
    const decision = OVERRULE_DECISIONS.find((d) => d === o.decision);
    if (typeof o.step !== 'number' || !decision) return [];
    return [{ step: o.step, decision, ...(typeof o.reason === 'string' ? { reason: o.reason } : {}) }];
  });
}
