/**
 * The run-folder layout (reference §8.1), defined once. The trainer writes through it, and every
 * reader (engine reader, CLI, extension tree and review, eval-only) finds files through it; no other
 * module builds a run-folder path or spells a run-folder file name.
 */
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { parseStepName, stepName, type ReviewPhase, type StageName } from '../../protocol/vocabulary';

/** The folder beside a config that holds its runs and the extension's evaluations by default. */
export const STORE_DIR = '.skillopt';
/** `<config dir>/.skillopt/runs`: where a run goes unless env.out_root or --out says otherwise. */
export const RUNS_SUBDIR = `${STORE_DIR}/runs`;
/** `<config dir>/.skillopt/evals`: where the extension's Evaluate writes unless told otherwise. */
export const EVALS_SUBDIR = `${STORE_DIR}/evals`;

export function defaultRunsRoot(configDir: string): string {
  return join(configDir, STORE_DIR, 'runs');
}

/** The config folder of a run folder in the default place (`<config dir>/.skillopt/runs/<name>`). */
export function configDirOfDefaultRun(runDir: string): string | undefined {
  const runs = dirname(runDir);
  if (basename(runs) !== 'runs' || basename(dirname(runs)) !== STORE_DIR) return undefined;
  return dirname(dirname(runs));
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Files at the run folder's top level. */
export const RUN_FILE = {
  config: 'config.json',
  state: 'runtime_state.json',
  history: 'history.json',
  summary: 'summary.json',
  report: 'report.md',
  bestSkill: 'best_skill.md',
  provenance: 'provenance.json',
  humanDecisions: 'human_decisions.json',
  lrHistory: 'lr_history.jsonl',
  /** Every paid call of every process of the run (src/engine/llm/ledger.ts). */
  ledger: 'ledger.jsonl',
  splitManifest: 'split_manifest.json',
  /** The task data the run started with, by content (data/digest.ts), so a resume never mixes data sets. */
  dataDigest: 'data_digest.json',
  /** The activation track's record per epoch (the description's gate). */
  activationHistory: 'activation_history.json',
  /** Written by a live engine process (its pid inside) and removed when it ends. */
  lock: '.skillopt-run.lock',
} as const;

/** Files inside a step folder (`steps/step_NNNN/`) or an epoch-end stage folder. */
export const STEP_FILE = {
  record: 'step_record.json',
  merged: 'merged_patch.json',
  ranked: 'ranked_edits.json',
  lrDecision: 'lr_decision.json',
  candidate: 'candidate_skill.md',
  /** human-first: the candidate with only the edits the person kept. */
  reviewedCandidate: 'candidate_skill.reviewed.md',
  applyReport: 'edit_apply_report.json',
  digest: 'trajectory_digest.json',
  deepReflect: 'deep_reflect.json',
  rewriteResult: 'rewrite_result.json',
  fullRewriteResult: 'full_rewrite_result.json',
  gateResult: 'gate_result.json',
  slowResult: 'slow_result.json',
  slowGuidance: 'slow_guidance.json',
  preSlowSkill: 'pre_slow_skill.md',
  metaSkillResult: 'meta_skill_result.json',
  /** Each meta-skill reply as it arrived, so a stop before the result is written never pays it again. */
  metaSkillReplies: 'meta_skill_replies.jsonl',
  metaReflectResult: 'meta_reflect_result.json',
  pairs: 'comparison_pairs.json',
  pairsAll: 'comparison_pairs_all.json',
  /** In a speculative rollout folder: the step it is for and the skill it ran under. */
  speculation: 'speculation.json',
  /** Skill-aware reflection: the step's execution-lapse notes and the appendix after them. */
  appendixNotes: 'appendix_notes.json',
  /** Activation track: the trigger runs of the current and candidate descriptions, the optimizer's reply. */
  triggersCurrentTrain: 'trigger_runs_current_train.json',
  triggersCurrentHeldOut: 'trigger_runs_current_held_out.json',
  triggersCandidateTrain: 'trigger_runs_candidate_train.json',
  triggersCandidateHeldOut: 'trigger_runs_candidate_held_out.json',
  describeReply: 'describe_reply.json',
  activationResult: 'activation_result.json',
  /** A skill package's candidate, per file: path, status, text before and after, unified diff. */
  candidateFiles: 'candidate_files.json',
} as const;

/** Folders of one evaluation (rollout, selection or test): results and per-task conversations. */
export const EVAL_FILE = {
  results: 'results.jsonl',
  predictions: 'predictions',
  conversation: 'conversation.json',
  /** Task id → prediction folder name, for the ids whose folder is not named by the id itself. */
  predictionNames: 'prediction_names.json',
  /** Eval-only: the scores of the whole evaluation, beside its `eval_<split>` folder. */
  summary: 'eval_summary.json',
  /** Eval-only: what is evaluated (skill, split, target, tasks), so the folder is never resumed for another. */
  identity: 'eval_identity.json',
  /** Test and eval-only evaluations: scores per task type, the reference's `{<type>: {total, hard_acc}}`. */
  scores: 'summary.json',
  /** An evaluation sent through a provider's batch API: the batch id and its items, so a restart polls it again. */
  batch: 'provider_batch.json',
} as const;

/** Folders inside a step folder (or inside one of its micro-batch folders). */
export const STEP_DIR = {
  rollout: 'rollout',
  patches: 'patches',
  selection: 'selection_eval',
  /** speed.speculate: the next step's rollout under this step's skill, moved there if the gate keeps it. */
  speculativeRollout: 'speculative_rollout',
  /** An epoch's slow update: the same train items under the previous and under the current skill. */
  slowRolloutPrev: 'rollout_prev',
  slowRolloutCurr: 'rollout_curr',
} as const;

/** Top-level folders of a run. */
export const RUN_DIR = {
  steps: 'steps',
  skills: 'skills',
  slowUpdate: 'slow_update',
  metaSkill: 'meta_skill',
  metaReflect: 'meta_reflect',
  activation: 'activation',
  baselineSelection: 'selection_eval_baseline',
  finalSelection: 'final_selection_eval',
  testBest: 'test_eval',
  testBaseline: 'test_eval_baseline',
  testFinal: 'test_eval_final',
  /** evaluation.no_skill_baseline: the target with no skill, on the selection and the test split. */
  noSkillSelection: 'selection_eval_no_skill',
  testNoSkill: 'test_eval_no_skill',
  generatedSplits: '_generated_splits',
  /** `skillopt eval` of a skill inside a run folder: `eval_only/<skill>_<split>/`. */
  evalOnly: 'eval_only',
} as const;

/** The epoch-end stages that keep a folder per epoch (named as the stage, `<run>/<stage>/epoch_EE/`). */
export type EpochStage = Extract<StageName, 'slow_update' | 'meta_skill' | 'meta_reflect' | 'activation'>;

export function stepDirName(step: number): string {
  return stepName(step);
}

/** The person's saved answer for one review phase of a step (`review_before_gate.json`). */
export function reviewFileName(phase: ReviewPhase): string {
  return `review_${phase}.json`;
}

export function epochDirName(epoch: number): string {
  return `epoch_${pad(epoch, 2)}`;
}

/**
 * A skill package's copy of a skill file of the run: `skills/skill_v0003.md` (its SKILL.md, which
 * one-file readers show) has the whole package in `skills/skill_v0003/`; `best_skill.md` in
 * `best_skill/`, a step's `candidate_skill.md` in `candidate_skill/`. A single-file run has none.
 */
export function packageDirOf(skillFile: string): string {
  return skillFile.replace(/\.md$/, '');
}

export function skillVersionName(step: number): string {
  return `skill_v${pad(step, 4)}.md`;
}

/** One analyst's raw reply in a step's `patches/` folder: `minibatch_fail_000.json`, `minibatch_succ_001.json`. */
export function patchFileName(kind: 'failure' | 'success', index: number): string {
  return `minibatch_${kind === 'failure' ? 'fail' : 'succ'}_${pad(index, 3)}.json`;
}

/** The folder eval-only writes its evaluation of one split into (`eval_test`, `eval_all`, …). */
export function evalOnlyDirName(split: string): string {
  return `eval_${split}`;
}

/** `step_0007` back to 7; undefined for any other name. */
export function parseStepDirName(name: string): number | undefined {
  return parseStepName(name);
}

/** `epoch_03` back to 3; undefined for any other name. */
export function parseEpochDirName(name: string): number | undefined {
  const m = /^epoch_(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The folder of one micro-batch inside a step folder (gradient accumulation). */
export function batchDirName(batch: number): string {
  return `batch_${batch}`;
}

/** `batch_2` back to 2; undefined for any other name. */
export function parseBatchDirName(name: string): number | undefined {
  const m = /^batch_(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** An id that names its prediction folder as it is (the reference's layout): safe characters, bounded. */
const PLAIN_ID = /^[A-Za-z0-9._-]{1,120}$/;

/**
 * Names Windows gives to devices whatever their case or extension (`CON`, `nul.txt`, `COM1.json`):
 * a folder of that name cannot be made, or is the device.
 */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/** Whether a file name is one Windows cannot hold as given: a device name, or a trailing dot or space (dropped there). */
export function unsafeOnWindows(name: string): boolean {
  return WINDOWS_DEVICE.test(name) || /[. ]$/.test(name);
}

/**
 * The folder name of one task's prediction: an ordinary id as it is; any other id (unsafe
 * characters, `.`/`..`, over 120 characters, a Windows device name such as `CON` or `nul.txt`, a
 * trailing dot, which Windows drops so that `a.` and `a` would share a folder) as its sanitised
 * prefix, `~` and a hash of the whole id.
 * No plain id contains `~`, so a hashed name never equals a plain one, and two ids never share one.
 * Writers assign names through store/predictionNames.ts, which also settles ids that differ only in
 * case (one folder on a case-insensitive disk) and records the mapping; readers look names up there.
 */
export function predictionSegment(id: string): string {
  return PLAIN_ID.test(id) && !unsafeOnWindows(id) ? id : hashedPredictionSegment(id);
}

/** The hashed folder name of an id (`<sanitised prefix>~<16 hex>`), whatever the id looks like. */
export function hashedPredictionSegment(id: string): string {
  const prefix = id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
  const hash = createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 16);
  // `CON.x~…` is still the device on Windows (the part before the first dot decides).
  return `${WINDOWS_DEVICE.test(`${prefix}~`) ? '_' : ''}${prefix}~${hash}`;
}

/**
 * Where repeat `r` (counted from 0) of a repeated evaluation goes: the first sample in the folder
 * itself (as without repeats), the others in `repeat_02`, `repeat_03`, … inside it.
 */
export function repeatDir(dir: string, r: number): string {
  return r === 0 ? dir : join(dir, `repeat_${pad(r + 1, 2)}`);
}

/**
 * Where the paired gate evaluates the current skill again, inside the candidate's selection folder,
 * when its per-item scores are not known (a run resumed from an older engine) or more repeats are due.
 */
export function currentSkillEvalDir(selectionDir: string): string {
  return join(selectionDir, 'current_skill');
}

/** Paths inside one evaluation folder (a rollout, a selection or test evaluation, eval-only). */
export function evalPaths(dir: string): {
  dir: string;
  results: string;
  scores: string;
  predictionNames: string;
  /** The conversation file in the prediction folder `segment` (names: store/predictionNames.ts). */
  conversationIn(segment: string): string;
  batch: string;
} {
  return {
    dir,
    results: join(dir, EVAL_FILE.results),
    scores: join(dir, EVAL_FILE.scores),
    predictionNames: join(dir, EVAL_FILE.predictionNames),
    conversationIn: (segment) => join(dir, EVAL_FILE.predictions, segment, EVAL_FILE.conversation),
    batch: join(dir, EVAL_FILE.batch),
  };
}

/**
 * The run folder of a file kept directly in a step folder (`<run>/steps/step_N/candidate_skill.md`)
 * or in an epoch-end stage folder (`<run>/slow_update/epoch_EE/…`): both sit two folders deep.
 */
export function runDirOfStageFile(path: string): string {
  return dirname(dirname(dirname(path)));
}

/** Every path of one run folder. */
export class RunLayout {
  constructor(readonly root: string) {}

  /** A top-level file or folder of the run (`RUN_FILE.*`, `RUN_DIR.*`). */
  file(name: string): string {
    return join(this.root, name);
  }

  skillVersion(step: number): string {
    return join(this.root, RUN_DIR.skills, skillVersionName(step));
  }

  stepDir(step: number): string {
    return join(this.root, RUN_DIR.steps, stepDirName(step));
  }

  stepFile(step: number, name: string): string {
    return join(this.stepDir(step), name);
  }

  /**
   * The micro-batch folder of a step: the step folder itself without accumulation (the reference's
   * layout), `batch_<a>` inside it with accumulation.
   */
  batchDir(step: number, batch: number, accumulation: number): string {
    return accumulation === 1 ? this.stepDir(step) : this.microBatchDir(step, batch);
  }

  /** `steps/step_NNNN/batch_<a>`, whatever the accumulation (readers finding micro-batches on disk). */
  microBatchDir(step: number, batch: number): string {
    return join(this.stepDir(step), batchDirName(batch));
  }

  /** Where the step's rollout of one micro-batch is written. */
  rolloutDir(step: number, batch = 0, accumulation = 1): string {
    return join(this.batchDir(step, batch, accumulation), STEP_DIR.rollout);
  }

  patchesDir(step: number, batch = 0, accumulation = 1): string {
    return join(this.batchDir(step, batch, accumulation), STEP_DIR.patches);
  }

  /** Where a step's (or an epoch-end candidate's) selection evaluation is written. */
  selectionDir(base: string): string {
    return join(base, STEP_DIR.selection);
  }

  epochDir(stage: EpochStage, epoch: number): string {
    return join(this.root, stage, epochDirName(epoch));
  }

  /** A file of an epoch-end stage (`STEP_FILE.*`). */
  epochFile(stage: EpochStage, epoch: number, name: string): string {
    return join(this.epochDir(stage, epoch), name);
  }

  /** Eval-only: the evaluation folder of one split inside the eval's output folder. */
  evalOnlyDir(split: string): string {
    return join(this.root, evalOnlyDirName(split));
  }
}
