/** From a task file's raw records (taskFiles.ts) to checked tasks: ids, inputs, answers, choices. */
import { SkillOptError } from '../errors';
import type { ErrorPlace } from '../errors';
import type { Assertion } from '../scoring/assertions';
import { applyEvalRecord, type TaskInputFile } from './evalTasks';
import { notePlainUnread, noteTriggerUnread } from './evalUnread';
import { taskImages } from './images';
import { isRecord, readTaskRecords, taskFieldNames } from './taskFiles';
import type { RawTaskRecord, TaskFile } from './taskFiles';

/** One task as the engine sees it; `fields` keeps the record exactly as the file had it. */
export interface TaskItem {
  id: string;
  input: string;
  answers: string[];
  taskType?: string;
  context?: string;
  choices?: string[];
  /** The choices' labels when the data names them (LiveMathematicianBench); A, B, C… otherwise. */
  choiceLabels?: string[];
  /** Draw the choices' order per seed, as the reference's LiveMathematicianBench loader does. */
  shuffleChoices?: boolean;
  /** Image files the task shows the target (absolute paths, checked when the tasks are loaded). */
  images?: string[];
  /** OpenAI's image `detail` (`low`/`high`) from env.image_detail; absent = the server's default. */
  imageDetail?: string;
  /** The eval file's own assertions (evalFormats.ts); when present they score the task, not env.scorer. */
  assertions?: Assertion[];
  /** Weighted share of assertions that passes the task (promptfoo `threshold`); absent = all must pass. */
  passThreshold?: number;
  /** Input files the task names (skill-creator `files`): as written, the path found, and their text unless binary. */
  files?: TaskInputFile[];
  /**
   * A trigger query (`should_trigger: true|false`): the activation track's, never a body task, and
   * needs no expected answer. splits.ts keeps these rows out of train/val/test.
   */
  shouldTrigger?: boolean;
  fields: Record<string, unknown>;
}

export interface LoadTasksOptions {
  /** Default true: every task needs an expected answer. Eval of user scorers may not. */
  requireAnswers?: boolean;
  /** Default false. Split loaders allow an empty list and report the empty split by name instead. */
  allowEmpty?: boolean;
  /**
   * A benchmark's reading of its own records (benchmarks.ts): returns the fields named in
   * taskFieldNames, or undefined to drop the record as the benchmark's loader does. `fields` keeps
   * the record as the file had it.
   */
  mapRecord?: (record: Record<string, unknown>, index: number) => Record<string, unknown> | undefined;
  /** Folders a relative image path is also looked up in, after the task file's own folder. */
  imageDirs?: readonly string[];
  /** env.scorer is a module or command scorer, which gets every field of a task (no notice for them). */
  scorerSeesFields?: boolean;
}

/** Read and convert a task file (JSONL, JSON array / `{items|data: [...]}`, or CSV with a header row). */
export function loadTasks(path: string, opts: LoadTasksOptions = {}): TaskItem[] {
  return toTaskItems(readTaskRecords(path), opts);
}

/** Turn raw records into tasks, checking ids, inputs and answers. */
export function toTaskItems(file: TaskFile, opts: LoadTasksOptions = {}): TaskItem[] {
  const requireAnswers = opts.requireAnswers ?? true;
  if (file.records.length === 0 && !opts.allowEmpty) {
    throw new SkillOptError('tasks', 'Task file has no tasks', {
      file: file.path,
      fix: 'add at least one task',
    });
  }
  const seen = new Map<string, RawTaskRecord>();
  const items: TaskItem[] = [];
  const notices = new Set<string>();
  // A plain file with no id anywhere is numbered by position; one with some ids must have them all.
  const anyId = file.records.some((r) => firstPresent(r.record, taskFieldNames.id) !== null);
  const numbered = !opts.mapRecord && !anyId;
  for (const [index, original] of file.records.entries()) {
    let mapped = opts.mapRecord ? opts.mapRecord(original.record, index) : original.record;
    if (mapped === undefined) continue;
    // The user's own eval formats (skill-creator, promptfoo, OpenAI evals) read without conversion.
    const evalRecord = opts.mapRecord
      ? undefined
      : applyEvalRecord(mapped, index, placeOf(original, file.path), file, notices);
    if (evalRecord) mapped = evalRecord.fields;
    const raw = { ...original, record: mapped };
    const item = toTaskItem(raw, file, requireAnswers && !evalRecord?.assertions.length, {
      fallbackId: numbered ? `row-${index + 1}` : undefined,
      idsElsewhere: anyId,
    });
    if (numbered && firstPresent(mapped, taskFieldNames.id)?.value !== item.id)
      notices.add(
        `no task has an id (${taskFieldNames.id.join(', ')}); tasks are named row-1…row-${file.records.length} by their position in the file (add ids to keep names stable when rows are added or moved)`,
      );
    if (evalRecord) Object.assign(item, evalRecord.extra);
    if (item.shouldTrigger !== undefined && !opts.mapRecord)
      noteTriggerUnread(
        mapped,
        [
          firstPresent(mapped, taskFieldNames.id)?.name,
          firstPresent(mapped, taskFieldNames.input)?.name,
        ].filter((n): n is string => n !== undefined),
        notices,
      );
    if (item.shouldTrigger === undefined && !opts.mapRecord && !evalRecord)
      notePlainUnread(mapped, taskFieldNames, notices, opts.scorerSeesFields ?? false);
    item.fields = original.record;
    const images = firstPresent(mapped, taskFieldNames.images);
    if (images)
      item.images = taskImages(
        images.value,
        item.id,
        file.path,
        opts.imageDirs ?? [],
        placeOf(raw, file.path),
      );
    const earlier = seen.get(item.id);
    if (earlier) {
      throw new SkillOptError(
        'tasks',
        `Duplicate task id "${item.id}" (first used at ${describePlace(earlier)})`,
        {
          ...placeOf(raw, file.path),
          fix: 'give every task a unique id',
        },
      );
    }
    seen.set(item.id, raw);
    items.push(item);
  }
  if (notices.size)
    file.notices = [...(file.notices ?? []), ...[...notices].map((n) => `${file.path}: ${n}`)];
  return items;
}

function toTaskItem(
  raw: RawTaskRecord,
  file: TaskFile,
  requireAnswers: boolean,
  ids: { fallbackId: string | undefined; idsElsewhere: boolean },
): TaskItem {
  const rec = raw.record;
  const where = placeOf(raw, file.path);
  const fail = (problem: string, fix: string): SkillOptError =>
    new SkillOptError('tasks', problem, { ...where, fix });

  const idField = firstPresent(rec, taskFieldNames.id);
  if (!idField && ids.fallbackId === undefined) {
    throw fail(
      ids.idsElsewhere ? 'Task has no id (other tasks in this file have one)' : 'Task has no id',
      `add one of the fields ${taskFieldNames.id.join(', ')}${ids.idsElsewhere ? ', or leave ids out of every task to have them named row-N by position' : ''}`,
    );
  }
  const id = idField ? scalarText(idField.value) : ids.fallbackId;
  if (id === undefined)
    throw fail(`Task id field "${idField?.name}" must be a string or a number`, 'use a plain id');
  const shouldTrigger = triggerFlag(rec, id, fail);

  const inputField = firstPresent(rec, taskFieldNames.input);
  if (!inputField) {
    throw fail(`Task "${id}" has no input`, `add one of the fields ${taskFieldNames.input.join(', ')}`);
  }
  const input = scalarText(inputField.value);
  if (input === undefined) {
    throw fail(`Task "${id}" field "${inputField.name}" must be text`, 'write the task input as a string');
  }

  const answerField = firstPresent(rec, taskFieldNames.answers);
  const answers = answerField ? answerList(answerField.value) : [];
  if (requireAnswers && shouldTrigger === undefined && answers.length === 0) {
    throw fail(
      `Task "${id}" has no expected answer`,
      `add one of the fields ${taskFieldNames.answers.join(', ')} (a string, a number or a list)`,
    );
  }

  // Functions a task declares for the target to call (a multi-turn tool loop) are not run here:
  // refused rather than dropped, so no one trains on tasks the target cannot do as written.
  const tools = ['tools', 'functions'].find((k) => rec[k] !== undefined);
  if (tools) {
    throw fail(
      `Task "${id}" declares functions for the target to call (field "${tools}"), and task-declared tools are not run for any target`,
      `remove the "${tools}" field (a task file with it is refused for chat and agent targets alike); to train tool use, give the task without it to an agent target (claude_code_exec, codex_exec, copilot_exec, command), which calls its own tools, and score the result with a command or module scorer; env.max_turns gives chat targets the reference's refinement turns`,
    );
  }
  const item: TaskItem = { id, input, answers, fields: rec };
  if (shouldTrigger !== undefined) item.shouldTrigger = shouldTrigger;
  const typeField = firstPresent(rec, taskFieldNames.taskType);
  if (typeField) {
    const v = typeField.value;
    const taskType = Array.isArray(v) ? answerList(v).join(', ') : scalarText(v);
    if (taskType) item.taskType = taskType;
  }
  const contextField = firstPresent(rec, taskFieldNames.context);
  if (contextField) {
    const v = contextField.value;
    item.context = Array.isArray(v) ? answerList(v).join('\n\n') : (scalarText(v) ?? JSON.stringify(v));
  }
  const choicesField = firstPresent(rec, taskFieldNames.choices);
  if (choicesField) {
    const choices = choiceList(choicesField.value);
    if (!choices) {
      throw fail(
        `Task "${id}" field "${choicesField.name}" must be a list of options`,
        'write the options as a JSON array such as ["Paris", "Lyon"]',
      );
    }
    item.choices = choices;
    const labelsField = firstPresent(rec, taskFieldNames.choiceLabels);
    const labels = labelsField ? choiceList(labelsField.value) : undefined;
    if (labels && labels.length === choices.length) item.choiceLabels = labels;
  }
  return item;
}

/** `should_trigger` of a row: a trigger query when true or false, a body task when absent. */
function triggerFlag(
  rec: Record<string, unknown>,
  id: string,
  fail: (problem: string, fix: string) => SkillOptError,
): boolean | undefined {
  const v = rec.should_trigger;
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  throw fail(
    `Task "${id}" has should_trigger ${JSON.stringify(v)}`,
    'write should_trigger: true (the skill should load for this query) or false, or leave it out for a body task',
  );
}

function firstPresent(
  rec: Record<string, unknown>,
  names: readonly string[],
): { name: string; value: unknown } | null {
  for (const name of names) {
    const value = rec[name];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' && value.trim() === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    return { name, value };
  }
  return null;
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * Golds as strings. A list holds several acceptable answers; a nested object or list inside it is
 * kept as its JSON text (so a JSON scorer can compare structured golds).
 */
function answerList(value: unknown): string[] {
  const one = (v: unknown): string | undefined => {
    if (v === undefined || v === null) return undefined;
    const s = scalarText(v);
    if (s !== undefined) return s.trim() === '' ? undefined : s;
    return JSON.stringify(v);
  };
  if (Array.isArray(value)) return value.map(one).filter((s): s is string => s !== undefined);
  const s = one(value);
  return s === undefined ? [] : [s];
}

function choiceList(value: unknown): string[] | undefined {
  const entries: unknown[] | undefined = Array.isArray(value)
    ? value
    : isRecord(value)
      ? Object.keys(value)
          .sort()
          .map((k) => value[k])
      : undefined;
  if (!entries) return undefined;
  const out: string[] = [];
  for (const e of entries) {
    const s = scalarText(e) ?? (isRecord(e) ? scalarText(e.text) : undefined);
    if (s === undefined) return undefined;
    out.push(s);
  }
  return out;
}

export function placeOf(raw: RawTaskRecord, file: string): ErrorPlace {
  return {
    file,
    ...(raw.line !== undefined ? { line: raw.line } : {}),
    ...(raw.key !== undefined ? { key: raw.key } : {}),
  };
}

function describePlace(raw: RawTaskRecord): string {
  if (raw.line !== undefined) return `line ${raw.line}`;
  return raw.key ?? 'an earlier task';
}
