/** Where a reviewed run lives and how it reviews, and the event shapes the reviews share. */
import { isAbsolute, join, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import { lineHunks } from '../../engine/skill/hunks';
import { isSkillFolder } from '../../engine/skill/package/folder';
import { SKILL_FILE } from '../../engine/skill/package/text';
import { RUN_FILE, RunLayout } from '../../engine/store/layout';
import { readObject } from '../../engine/store/runReader';
import { isAccepted, isReviewMode, type ReviewMode } from '../../protocol/vocabulary';
import type { Ctx } from '../ctx';
import { previousTextOf, runDirOfCandidate, type CandidateReady, type GateVerdictEvent } from './runFiles';
import type { ReviewSession } from './session';

/** Overrides for one run, given by whoever fed its events in (tests, the runs tree). */
export interface RunHints {
  runDir?: string;
  mode?: ReviewMode;
  live?: boolean;
  skillPath?: string;
}

/** A run's review settings with the mode and liveness always known. */
export type ReviewContext = Required<Pick<RunHints, 'mode' | 'live'>> & RunHints;

export function reviewModeSetting(): ReviewMode | undefined {
  const v = vscode.workspace.getConfiguration('skillopt').get<string>('reviewMode');
  return isReviewMode(v) ? v : undefined;
}

/** Where a run lives, how it reviews, and which skill file it trains. */
export function reviewContextOf(
  ctx: Ctx,
  runId: string,
  hints: RunHints,
  sentEvents: boolean,
  candidatePath?: string,
): ReviewContext {
  const run = ctx.runs.get(runId);
  const runDir = hints.runDir ?? run?.dir ?? (candidatePath ? runDirOfCandidate(candidatePath) : undefined);
  // A run seen before its config.json was written reads as an empty config until its folder is
  // read again: then the file itself says which skill it trains.
  const known = run?.config && Object.keys(run.config).length > 0 ? run.config : undefined;
  const config =
    known ?? (runDir ? readObject(new RunLayout(runDir).file(RUN_FILE.config)) : undefined) ?? {};
  const configMode = config.review_mode;
  const mode = hints.mode ?? (isReviewMode(configMode) ? configMode : (reviewModeSetting() ?? 'auto'));
  const live = hints.live ?? (sentEvents || run?.status === 'running');
  let skillPath = hints.skillPath;
  const init = config.skill_init;
  if (!skillPath && typeof init === 'string' && init) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    skillPath = isAbsolute(init) ? init : folder ? resolve(folder, init) : undefined;
  }
  // A skill folder is reviewed in its SKILL.md (the review shows SKILL.md's changes only).
  if (skillPath && isSkillFolder(skillPath)) skillPath = join(skillPath, SKILL_FILE);
  return { mode, live, ...(runDir ? { runDir } : {}), ...(skillPath ? { skillPath } : {}) };
}

/** The candidate event a session was made from, to park it again when its document closes. */
export function readyEventOf(s: ReviewSession): CandidateReady {
  const { init } = s;
  return {
    type: 'candidate/ready',
    step: init.step,
    epoch: init.epoch,
    origin: init.origin,
    previousHash: '',
    candidateHash: '',
    edits: init.edits,
    hunks: init.hunks,
    candidatePath: init.candidatePath ?? '',
  };
}

export function verdictOf(v: GateVerdictEvent): {
  accepted: boolean;
  action: string;
  candidateScore: number;
  currentScore: number;
  bestScore: number;
} {
  return {
    accepted: isAccepted(v.action),
    action: v.action,
    candidateScore: v.candidateScore,
    currentScore: v.currentScore,
    bestScore: v.bestScore,
  };
}

type ReviewRequested = Extract<EngineEvent, { type: 'review/requested' }>;

/**
 * The candidate event of a review the engine waits for, rebuilt from the run folder (the extension
 * was reloaded while the engine waited). Undefined when the step's previous skill is missing.
 */
export function readyFromRequest(
  runDir: string,
  event: ReviewRequested,
  candidate: string,
): { event: CandidateReady; texts: { previous: string; candidate: string } } | undefined {
  const previous = previousTextOf(runDir, event.step, 'step');
  if (previous === undefined) return undefined;
  return {
    event: {
      type: 'candidate/ready',
      step: event.step,
      epoch: event.epoch,
      origin: 'step',
      previousHash: '',
      candidateHash: event.candidateHash,
      edits: event.edits,
      hunks: lineHunks(previous, candidate),
      candidatePath: event.candidatePath,
    },
    texts: { previous, candidate },
  };
}
