/**
 * Schemas of the run-folder files the engine reads back (resume, readers), so a damaged, foreign or
 * newer file is refused with a message naming the file and the field instead of being cast and
 * trusted. Objects are loose: the Python reference and later versions may add keys we ignore.
 * The JSONL files' row schemas, and what a bad line means in each, are in runRows.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  CANDIDATE_DECISIONS,
  GATE_ACTIONS,
  GATE_TEST_VERDICTS,
  SKIP_ACTIONS,
} from '../../protocol/vocabulary';
import type {
  AaRecord,
  ActivationRecord,
  GatePower,
  GateTestRecord,
  ItemRegressions,
  RuntimeState,
  StepBufferEntry,
  StepRecord,
  TriggerRateRecord,
} from '../../protocol/records';
import { SkillOptError, messageOf } from '../errors';
import { checkInsideRun } from './atomic';
import { unsafeOnWindows } from './layout';

/**
 * `runtime_state.json` schema version this engine writes. Files without `schema_version` are
 * version 1 (ours before versioning, and the Python reference's); both read unchanged.
 */
export const RUNTIME_STATE_VERSION = 2;

const num = z.number();
const int = z.number().int();
const score = z.object({ hard: num, soft: num });
const stepAction = z.enum([...GATE_ACTIONS, ...SKIP_ACTIONS]);

const aaRecord: z.ZodType<AaRecord> = z.object({
  runs: int,
  repeats: int.optional(),
  items: int,
  metric: z.enum(['hard', 'soft', 'mixed']),
  alpha: num,
  scores: z.array(num),
  comparisons: int,
  strict_accepts: int,
  paired_accepts: int,
  paired_inconclusive: int,
  changed_items: int,
  cache_hits: int.optional(),
});
const gatePower: z.ZodType<GatePower> = z.object({
  test: z.enum(['strict', 'paired']),
  items: int,
  repeats: int,
  alpha: num,
  graded: z.boolean().optional(),
});

const stepBufferEntry = z.looseObject({
  step: int,
  action: stepAction,
  n_total: int,
  n_fail: int,
  failure_patterns: z.array(z.object({ pattern: z.string(), count: int, task_ids: z.array(z.string()) })),
  score_before: num.optional(),
  score_after: num.optional(),
  rejected_edits: z.array(z.record(z.string(), z.unknown())).optional(),
}) satisfies z.ZodType<StepBufferEntry>;

export const runtimeStateSchema = z.looseObject({
  schema_version: int.min(1).optional(),
  last_completed_step: int.min(0),
  current_skill_path: z.string(),
  current_score: num,
  current_origin: z.string(),
  best_skill_path: z.string(),
  best_score: num,
  best_step: int.min(0),
  best_origin: z.string(),
  scheduler_position: num.optional(),
  step_buffer_epoch: int.optional(),
  step_buffer: z.array(stepBufferEntry).optional(),
  active_meta_skill: z.string().optional(),
  last_completed_epoch: int.optional(),
  slow_done_epoch: int.optional(),
  meta_reflect_done_epoch: int.optional(),
  activation_done_epoch: int.optional(),
  budget_decay: num.optional(),
  steps_without_improvement: int.optional(),
  baseline_score: num.optional(),
  selection_cache: z
    .record(
      z.string(),
      score.extend({
        items: z.record(z.string(), score).optional(),
        repeats: int.min(1).optional(),
        dirs: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  engine: z.string().optional(),
}) satisfies z.ZodType<RuntimeState>;

/** `prediction_names.json` of an evaluation folder: task id → its prediction folder name. */
export const predictionNamesSchema = z.record(
  z.string(),
  z
    .string()
    .regex(/^[A-Za-z0-9._~-]+$/)
    .refine((n) => !unsafeOnWindows(n), 'a name Windows cannot hold (a device name, or a trailing dot)'),
);

/** The paired gate's test in a step record (history.json `gate_test`). */
export const gateTestSchema = z.looseObject({
  test: z.enum(['sign', 'permutation']),
  n: int.min(0),
  repeats: int.min(1),
  improved: int.min(0),
  regressed: int.min(0),
  mean_delta: num,
  p_value: num.min(0).max(1),
  exact: z.boolean(),
  alpha: num,
  ci_low: num,
  ci_high: num,
  ci_level: num.min(0).max(1).optional(),
  verdict: z.enum(GATE_TEST_VERDICTS),
}) satisfies z.ZodType<GateTestRecord>;

/** The per-item rule's finding (history.json and epoch-end results `item_regressions`). */
export const itemRegressionsSchema = z.looseObject({
  max: int.min(0),
  items: z.array(z.string()),
  rejected: z.boolean(),
}) satisfies z.ZodType<ItemRegressions>;

/** The fields of a history record the engine relies on; the rest is kept as written. */
export const historySchema = z.array(
  z.looseObject({
    step: int.min(1),
    epoch: int.min(1),
    action: stepAction,
    current_score: num,
    best_score: num,
    best_step: int.min(0),
    candidate_hash: z.string().optional(),
    candidate_gate_score: num.optional(),
    selection_hard: num.optional(),
    selection_soft: num.optional(),
    gate_test: gateTestSchema.optional(),
    item_regressions: itemRegressionsSchema.optional(),
  }),
);

const triggerRate = z.looseObject({
  rate: num.nullable(),
  recall: num.optional(),
  false_trigger_rate: num.optional(),
  queries: int.min(0),
  runs: int.min(0),
  errored: int.min(0),
}) satisfies z.ZodType<TriggerRateRecord>;

/** One epoch's record of the activation track (`activation_history.json` and its `activation/verdict` event). */
export const activationRecordSchema = z.looseObject({
  epoch: int.min(1),
  step: int.min(0),
  action: z.string(),
  reason: z.string().optional(),
  description_before: z.string(),
  candidate_description: z.string().optional(),
  description_after: z.string(),
  train_before: triggerRate,
  held_out_before: triggerRate,
  train_candidate: triggerRate.optional(),
  held_out_candidate: triggerRate.optional(),
  reasoning: z.string().optional(),
  mode: z.enum(['agent', 'chat']),
  simulated: z.boolean().optional(),
}) satisfies z.ZodType<ActivationRecord>;

/** The trigger runs of one description on one query set (`activation/epoch_EE/*.json`). */
export const triggerRunsSchema = z.array(
  z.looseObject({
    id: z.string(),
    repeat: int.min(0),
    shouldTrigger: z.boolean(),
    loaded: z.boolean().optional(),
    error: z.string().optional(),
    errorKind: z.string().optional(),
  }),
);

/** Step and epoch-end artifacts that a resumed run reuses instead of paying for them again. */
export const artifactSchemas = {
  patch: z.looseObject({ reasoning: z.string() }),
  speculation: z.object({ step: z.number().int(), skill_hash: z.string() }),
  lrDecision: z.looseObject({ learning_rate: num }),
  reviewDecision: z.object({
    edits: z
      .array(z.object({ editId: z.string(), accept: z.boolean(), reason: z.string().optional() }))
      .optional(),
    candidate: z.enum(CANDIDATE_DECISIONS).optional(),
    reason: z.string().optional(),
  }),
  slowResult: z.looseObject({ action: z.string(), selection_score: num.optional() }),
  slowGuidance: z.object({
    guidance: z.object({ reasoning: z.string(), content: z.string() }).nullable(),
  }),
  metaSkillResult: z.looseObject({ action: z.string(), meta_skill_content: z.string().optional() }),
  gateResult: z.looseObject({ action: z.string(), score: num }),
  appendixNotes: z.looseObject({
    step_notes: z.array(z.string()),
    appendix_after: z.array(z.string()),
    n_added: int,
    consolidated_from: int.optional(),
  }),
  records: z.array(z.record(z.string(), z.unknown())),
  activationHistory: z.array(activationRecordSchema),
  triggerRuns: triggerRunsSchema,
  describeReply: z.looseObject({ ok: z.boolean(), description: z.string().optional() }),
  /** `eval_summary.json` of an eval-only run (evalRun.ts EvalSummary), as the extension lists it. */
  evalSummary: z.looseObject({
    skill: z.string().optional(),
    split: z.string(),
    n_items: int,
    hard: num,
    soft: num,
    by_type: z.record(z.string(), z.object({ hard: num, soft: num, total: int })),
    failing: z.array(z.string()),
    errored: z.array(z.string()).optional(),
    out_dir: z.string(),
    model_calls: int.optional(),
    cache_hits: int.optional(),
    prompt_tokens: int.optional(),
    completion_tokens: int.optional(),
    dollars: num.nullable().optional(),
    simulated: z.literal(true).optional(),
    aa: aaRecord.optional(),
  }),
  /** The gate facts of `summary.json` readers show (gateFacts.ts). */
  gateFacts: z.looseObject({
    gate_power: gatePower.optional(),
    no_skill_selection_hard: num.optional(),
    no_skill_test_hard: num.nullable().optional(),
    report: z.looseObject({ no_skill_off: z.literal(true).optional() }).optional(),
  }),
  config: z.record(z.string(), z.unknown()),
  applyReport: z.array(z.looseObject({ index: int, status: z.string() })),
  /** A skill folder's candidate, per changed file (skill/package/changes.ts), for readers such as the review. */
  candidateFiles: z.array(
    z.object({
      path: z.string(),
      status: z.enum(['added', 'changed']),
      before: z.string(),
      after: z.string(),
      diff: z.string(),
    }),
  ),
  rawPatch: z.looseObject({ source_type: z.enum(['failure', 'success']), patch: z.looseObject({}) }),
  pairs: z.array(
    z.looseObject({
      id: z.string(),
      category: z.string(),
      prev: z.looseObject({ hard: num }),
      curr: z.looseObject({ hard: num }),
    }),
  ),
  deepReflect: z.looseObject({
    outcome: z.looseObject({ status: z.string(), patch: z.unknown() }).optional(),
  }),
  metaReflect: z.looseObject({
    epoch: int,
    action: z.string(),
    edits: z.array(z.record(z.string(), z.unknown())),
    report: z.array(z.looseObject({ index: int, status: z.string() })),
    candidate_hash: z.string().nullable(),
  }),
};

/**
 * An artifact as the type its writer declares, after the schema has checked the fields a resumed
 * run relies on (the writer's own type is richer than any schema we would keep in step with it).
 */
export function readArtifact<T>(path: string, schema: z.ZodType): T | undefined {
  return readRunJson(path, schema) as T | undefined;
}

/** The first problem zod found, as `field: message`, for a message naming where to look. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'it does not have the expected shape';
  const where = issue.path.length ? issue.path.join('.') : 'the top level';
  return `${where}: ${issue.message}`;
}

/**
 * Reads and validates one run-folder JSON file; undefined when it does not exist. A file that is
 * not JSON or not of the expected shape is an error naming the file and the first bad field.
 */
export function readRunJson<S extends z.ZodType>(path: string, schema: S): z.infer<S> | undefined {
  checkInsideRun(path);
  if (!existsSync(path)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SkillOptError(
      'io',
      `is not valid JSON (${messageOf(err)})`,
      { file: path, fix: 'restore the file, or delete it and resume to recompute it' },
      { cause: err },
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new SkillOptError(
      'io',
      `is not a SkillOpt run file this version can read (${describeIssue(parsed.error)})`,
      {
        file: path,
        fix: 'restore the file, or start the run afresh with --fresh',
      },
    );
  }
  return parsed.data;
}

/**
 * `batch.json` in an evaluation folder: the provider batch that answers the folder's items, so a
 * restarted run polls the same batch instead of paying for a new one.
 */
/** `eval_identity.json`: an eval-only folder's skill, split and target, and a digest of all that decides its answers. */
export const evalIdentitySchema = z.looseObject({
  skill: z.string(),
  split: z.string(),
  target: z.string(),
  digest: z.string().min(1),
  images: z.string().optional(),
});

/** `run.lock`: the process holding the run folder (runLock.ts); host and start time are for the message. */
export const lockSchema = z.looseObject({
  pid: z.number().int(),
  host: z.string().catch(''),
  started: z.string().catch(''),
});

export const batchStateSchema = z.looseObject({
  provider: z.string(),
  model: z.string(),
  stage: z.string(),
  /** Absent only while it is being sent (a process that died then left the batch to be found by `submission`). */
  batch_id: z.string().min(1).optional(),
  /** Tag sent with the batch (OpenAI metadata), to find it when a crash kept its id from being written. */
  submission: z.string().optional(),
  input_file_id: z.string().optional(),
  submitted_at: z.string(),
  /** custom_id → task id. */
  items: z.record(z.string(), z.string()),
  /** Task id → hash of its request, so a changed request (another skill, other settings) never reuses the batch. */
  item_sha256: z.record(z.string(), z.string()),
});
export type BatchState = z.infer<typeof batchStateSchema>;

/** `data_digest.json` schema version this engine writes. */
export const DATA_DIGEST_VERSION = 1;

const splitDigest = z.object({
  items: int.min(0),
  sha256: z.string(),
  ids: z.array(z.tuple([z.string(), z.string()])),
  images: z.array(z.tuple([z.string(), z.string()])).optional(),
});

/** `data_digest.json`: the task data a run started with (data/digest.ts TaskDataDigest). */
export const dataDigestSchema = z.looseObject({
  schema_version: int.min(1),
  splits: z.looseObject({ train: splitDigest, selection: splitDigest, test: splitDigest }),
  source: z.object({ file: z.string(), sha256: z.string() }).optional(),
});

/** `data_digest.json`, refused when a newer engine wrote it; undefined when the folder has none. */
export function readDataDigest(path: string): z.infer<typeof dataDigestSchema> | undefined {
  const digest = readRunJson(path, dataDigestSchema);
  if (digest && digest.schema_version > DATA_DIGEST_VERSION) {
    throw new SkillOptError(
      'io',
      `was written by a newer SkillOpt (data digest schema ${digest.schema_version}; this version reads up to ${DATA_DIGEST_VERSION})`,
      { file: path, fix: 'update SkillOpt (the extension or the skillopt CLI) to resume this run' },
    );
  }
  return digest;
}

/** `runtime_state.json`, refused when a newer engine wrote it. */
export function readRuntimeState(path: string): RuntimeState | undefined {
  const state = readRunJson(path, runtimeStateSchema);
  if (state && (state.schema_version ?? 1) > RUNTIME_STATE_VERSION) {
    throw new SkillOptError(
      'io',
      `was written by a newer SkillOpt (state schema ${state.schema_version}; this version reads up to ${RUNTIME_STATE_VERSION})`,
      { file: path, fix: 'update SkillOpt (the extension or the skillopt CLI) to resume this run' },
    );
  }
  return state;
}

/** `history.json`: the records as written, with the fields the engine uses checked. */
export function readHistory(path: string): StepRecord[] {
  // The checked fields are StepRecord's required ones; the loose rest is kept as it was written.
  return (readRunJson(path, historySchema) ?? []) as unknown as StepRecord[];
}
