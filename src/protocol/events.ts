/**
 * The training loop's progress as a closed union of events. The CLI prints them (pretty or one
 * JSON object per line), the worker forwards them to the extension, and `eventsFromRunFolder`
 * rebuilds the same sequence from a finished run folder. New fields must be optional.
 */
import type {
  ActivationRecord,
  GatePower,
  GateTestRecord,
  ItemRegressions,
  NoSkillScores,
  LineHunk,
  StepRecord,
  TestCheck,
} from './records';
import type { CandidateOrigin, StageName, VerdictAction, VerdictOrigin } from './vocabulary';

export interface AccountingTotals {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  cacheHits: number;
  /** null when some model's price is unknown. */
  dollars: number | null;
  fallbacks: number;
  /** Prompt tokens the providers read from their prompt caches (part of promptTokens). */
  cachedTokens?: number;
  /** Dollars those caches saved against uncached list prices; null when a cache price is unknown. */
  cacheSavedDollars?: number | null;
  /** Requests cut off before their reply (tokens unknown): when above 0 the totals are a lower bound. */
  cutOff?: number;
}

export interface CandidateEdit {
  id: string;
  op: string;
  target?: string;
  content?: string;
  support_count?: number;
  source_type?: string;
  status?: string;
  /** Why a skipped edit was not applied (the apply report's `error`: a package policy refusal, say). */
  status_reason?: string;
  /** Ids of other edits of this candidate that pull the same rule the opposite way (merged_patch.json). */
  conflicts_with?: string[];
  /** A skill package's file the edit names, when it is not SKILL.md. */
  file?: string;
}

/** Line hunks between the previous skill and the candidate (computed by src/engine/skill/hunks.ts). */
export type CandidateHunk = LineHunk;

/** A skill package's changed file in a candidate (`candidate_files.json` has its texts and diff). */
export interface CandidateFile {
  /** Relative to the skill folder; SKILL.md is listed when it changed. */
  path: string;
  status: 'added' | 'changed';
  hunks: CandidateHunk[];
}

export type EngineEvent =
  | {
      type: 'run/started';
      runId: string;
      outDir: string;
      totalSteps: number;
      epochs: number;
      stepsPerEpoch: number;
      splitSizes: { train: number; val: number; test: number };
      optimizer: string;
      target: string;
      simulated: boolean;
      resumedFromStep?: number;
      /** What the gate can tell from noise on the selection split (the power check). */
      gatePower?: GatePower;
      /** evaluation.use_gate: false: every candidate is accepted (GATE_OFF_TEXT). */
      gateOff?: true;
    }
  | { type: 'stage/started'; step: number; epoch: number; stage: StageName }
  | { type: 'stage/finished'; step: number; epoch: number; stage: StageName; seconds: number }
  | { type: 'rollout/progress'; step: number; stage: StageName; done: number; total: number; hard: number }
  | {
      /** An evaluation waits on a provider's batch API (evaluation.batch_api, `skillopt eval --batch`). */
      type: 'batch/progress';
      /** The evaluation: `test`, `eval` or `selection`. */
      evaluation: string;
      provider: string;
      batchId: string;
      /** `ended`: results are being read; `failed`: the provider refused the batch. */
      state: 'running' | 'ended' | 'failed';
      /** The provider's own status word (validating, in_progress, …). */
      detail: string;
      done: number;
      failed: number;
      total: number;
      /** Picked up from an earlier process of the run rather than submitted now. */
      resumed: boolean;
    }
  | { type: 'baseline/scored'; hard: number; soft: number; score: number }
  | {
      type: 'candidate/ready';
      step: number;
      epoch: number;
      origin: CandidateOrigin;
      previousHash: string;
      candidateHash: string;
      edits: CandidateEdit[];
      /** SKILL.md's line hunks (for a package, the other files are in `files`). */
      hunks: CandidateHunk[];
      candidatePath: string;
      /** A skill package: every changed file, SKILL.md included. */
      files?: CandidateFile[];
    }
  | {
      type: 'gate/verdict';
      step: number;
      epoch: number;
      origin: VerdictOrigin;
      action: VerdictAction;
      candidateScore: number;
      currentScore: number;
      bestScore: number;
      selectionHard?: number;
      selectionSoft?: number;
      cacheHit: boolean;
      /** The paired gate's test: p-value and interval of the per-item delta (gate_test: paired). */
      gateTest?: GateTestRecord;
      /** Items the candidate broke (evaluation.max_item_regressions). */
      itemRegressions?: ItemRegressions;
    }
  | {
      /** The run waits for the person (review.mode gate-then-human or human-first). */
      type: 'review/requested';
      /** This question alone; `review/decide` answers it by this id (a re-asked step gets a new one). */
      questionId: string;
      step: number;
      epoch: number;
      phase: 'before_gate' | 'after_gate';
      candidateHash: string;
      candidatePath: string;
      edits: CandidateEdit[];
      candidateScore?: number;
      currentScore?: number;
      /** after_gate, paired gate: p-value and interval of the delta. */
      gateTest?: GateTestRecord;
      /** after_gate: the items the candidate broke (evaluation.max_item_regressions). */
      itemRegressions?: ItemRegressions;
    }
  | {
      type: 'review/decided';
      step: number;
      phase: 'before_gate' | 'after_gate' | 'overrule';
      decision: string;
      rejectedEdits: string[];
    }
  /** Skill-aware reflection: the step's execution-lapse notes went into the protected appendix. */
  | {
      type: 'appendix/updated';
      step: number;
      epoch: number;
      added: number;
      total: number;
      /** Set when one consolidation call shortened the appendix to this many notes. */
      consolidated?: number;
    }
  | { type: 'step/finished'; record: StepRecord }
  | { type: 'epoch/finished'; epoch: number; slowUpdate?: string; metaSkill?: string }
  /** The activation track's gate on the description at an epoch end (activation.enabled). */
  | { type: 'activation/verdict'; record: ActivationRecord }
  | { type: 'accounting'; totals: AccountingTotals }
  | { type: 'fallback'; stage: string; reason: string }
  | { type: 'warning'; message: string }
  | {
      type: 'run/finished';
      outDir: string;
      bestStep: number;
      bestScore: number;
      baselineScore: number;
      bestSkillPath: string;
      /** report.md: scores, edit acceptance, persistent failures, spend, line provenance. */
      reportPath?: string;
      stoppedEarly?: string;
      test?: { baseline?: number; best?: number; final?: number };
      /** The test scores' intervals and whether the selection gain shows on test. */
      testCheck?: TestCheck;
      /** The target with no skill at all (evaluation.no_skill_baseline). */
      noSkill?: NoSkillScores;
      /** The end was scored without the target alone (evaluation.no_skill_baseline: false). */
      noSkillOff?: true;
    }
  | {
      type: 'run/stopped';
      outDir: string;
      reason: string;
      resumeCommand: string;
      /** Stopped by a spend cap: which (`limits.max_tokens`, …), its value, and what the whole run used. */
      cap?: StopCap;
    }
  | { type: 'run/failed'; message: string; reason: string };

export type EngineEventType = EngineEvent['type'];

/** A spend cap a run stopped on. Caps count the whole run, so a resume under the same cap stops again. */
export interface StopCap {
  key: 'limits.max_tokens' | 'limits.max_dollars' | 'limits.max_wall_time_s';
  limit: number;
  used: number;
}
