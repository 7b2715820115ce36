import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { SkillOptError } from '../errors';
import type { ErrorPlace } from '../errors';

/** One task as the engine sees it; `fields` keeps the record exactly as the file had it. */
export interface TaskItem {
  id: string;
  input: string;
  answers: string[];
  taskType?: string;
  context?: string;
  choices?: string[];
  fields: Record<string, unknown>;
}

export type TaskFileFormat = 'json' | 'jsonl' | 'csv';

/** A record read from a task file, with where it came from so errors can point at it. */
export interface RawTaskRecord {
  record: Record<string, unknown>;
  /** 1-based line (JSONL, CSV, top-level JSON arrays). */
  line?: number;
  /** JSON path when no line is known, e.g. `items[3]`. */
  key?: string;
}

export interface TaskFile {
  path: string;
  format: TaskFileFormat;
  records: RawTaskRecord[];
}

export interface LoadTasksOptions {
  /** Default true: every task needs an expected answer. Eval of user scorers may not. */
  requireAnswers?: boolean;
  /** Default false. Split loaders allow an empty list and report the empty split by name instead. */
  allowEmpty?: boolean;
}

/**
 * Accepted field names, first present wins. They cover the reference benchmarks (SearchQA `question`/
 * `answers`, DocVQA `questionId`, OfficeQA `uid`/`category`, SpreadsheetBench `instruction`/
 * `instruction_type`) and the common dataset conventions, so most files load without a mapping step.
 */
export const taskFieldNames = {
  id: ['id', 'key', 'uid', 'task_id', 'questionId'],
  input: ['question', 'input', 'prompt', 'query', 'task_description', 'instruction'],
  answers: [
    'answers',
    'answer',
    'expected',
    'gold',
    'gold_answers',
    'label',
    'target',
    'output',
    'ground_truth',
  ],
  taskType: ['task_type', 'type', 'category', 'instruction_type', 'topic'],
  context: ['context', 'passage', 'document'],
  choices: ['choices', 'options'],
} as const;

/** Read and convert a task file (JSONL, JSON array / `{items|data: [...]}`, or CSV with a header row). */
export function loadTasks(path: string, opts: LoadTasksOptions = {}): TaskItem[] {
  return toTaskItems(readTaskRecords(path), opts);
}

/** Read the raw records of a task file without interpreting them (ratio splits write these back out). */
export function readTaskRecords(path: string): TaskFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a folder' : 'cannot be read';
    throw new SkillOptError(
      'tasks',
      `Task file ${why}`,
      { file: path, fix: 'point the tasks setting at a readable .jsonl, .json or .csv file' },
      { cause: err },
    );
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.trim()) {
    throw new SkillOptError('tasks', 'Task file is empty', { file: path, fix: 'add at least one task' });
  }
  const ext = extname(path).toLowerCase();
  if (ext === '.csv' || ext === '.tsv') {
    return { path, format: 'csv', records: readCsv(path, text, ext === '.tsv' ? '\t' : ',') };
  }
  const first = text.trimStart()[0];
  if (ext !== '.json' && ext !== '.jsonl' && ext !== '.ndjson' && first !== '[' && first !== '{') {
    throw new SkillOptError('tasks', `Unsupported task file type "${ext || '(none)'}"`, {
      file: path,
      fix: 'use .jsonl (one JSON object per line), .json (an array of objects) or .csv (with a header row)',
    });
  }
  return readJson(path, text, ext === '.jsonl' || ext === '.ndjson');
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
  for (const raw of file.records) {
    const item = toTaskItem(raw, file, requireAnswers);
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
  return items;
}

function toTaskItem(raw: RawTaskRecord, file: TaskFile, requireAnswers: boolean): TaskItem {
  const rec = raw.record;
  const where = placeOf(raw, file.path);
  const fail = (problem: string, fix: string): SkillOptError =>
    new SkillOptError('tasks', problem, { ...where, fix });

  const idField = firstPresent(rec, taskFieldNames.id);
  if (!idField) throw fail('Task has no id', `add one of the fields ${taskFieldNames.id.join(', ')}`);
  const id = scalarText(idField.value);
  if (id === undefined)
    throw fail(`Task id field "${idField.name}" must be a string or a number`, 'use a plain id');

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
  if (requireAnswers && answers.length === 0) {
    throw fail(
      `Task "${id}" has no expected answer`,
      `add one of the fields ${taskFieldNames.answers.join(', ')} (a string, a number or a list)`,
    );
  }

  const item: TaskItem = { id, input, answers, fields: rec };
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
  }
  return item;
}

function readJson(path: string, text: string, lineMode: boolean): TaskFile {
  let whole: unknown;
  let wholeError: Error | undefined;
  try {
    whole = JSON.parse(text);
  } catch (err) {
    wholeError = err as Error;
  }
  if (wholeError === undefined) {
    if (Array.isArray(whole)) {
      const lines = arrayElementLines(text);
      const useLines = lines.length === whole.length;
      return {
        path,
        format: 'json',
        records: whole.map((value, i) =>
          asRecord(value, path, useLines ? { line: lines[i] } : { key: `[${i}]` }),
        ),
      };
    }
    if (isRecord(whole) && lineMode) return { path, format: 'jsonl', records: [{ record: whole, line: 1 }] };
    if (isRecord(whole)) {
      for (const name of ['items', 'data']) {
        const nested = whole[name];
        if (Array.isArray(nested)) {
          return {
            path,
            format: 'json',
            records: nested.map((value, i) => asRecord(value, path, { key: `${name}[${i}]` })),
          };
        }
      }
      const values = Object.values(whole);
      // The reference reads a dict of records as its values; a lone task object is just one task.
      if (values.length > 0 && values.every(isRecord)) {
        return {
          path,
          format: 'json',
          records: Object.entries(whole).map(([k, value]) => asRecord(value, path, { key: k })),
        };
      }
      return { path, format: 'json', records: [{ record: whole, line: 1 }] };
    }
  }
  const firstLine = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const looksLikeLines = lineMode || (text.trimStart().startsWith('{') && parses(firstLine));
  if (wholeError !== undefined && !looksLikeLines) {
    const pos = /position (\d+)/.exec(wholeError.message);
    throw new SkillOptError('tasks', `Task file is not valid JSON: ${wholeError.message}`, {
      file: path,
      ...(pos ? { line: lineAt(text, Number(pos[1])) } : {}),
      fix: 'fix the JSON syntax there (a JSON array of objects, or one object per line for .jsonl)',
    });
  }
  const records: RawTaskRecord[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((content, index) => {
    if (content.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(content);
    } catch (err) {
      throw new SkillOptError(
        'tasks',
        `Line is not valid JSON: ${(err as Error).message}`,
        { file: path, line: index + 1, fix: 'write exactly one complete JSON object on each line' },
        { cause: err },
      );
    }
    records.push(asRecord(value, path, { line: index + 1 }));
  });
  return { path, format: 'jsonl', records };
}

function readCsv(path: string, text: string, delimiter: string): RawTaskRecord[] {
  let rows: unknown[];
  try {
    rows = parseCsv<unknown>(text, {
      columns: true,
      delimiter,
      info: true,
      skip_empty_lines: true,
      bom: true,
    });
  } catch (err) {
    const line = (err as { lines?: unknown }).lines;
    throw new SkillOptError(
      'tasks',
      `CSV could not be parsed: ${(err as Error).message}`,
      {
        file: path,
        ...(typeof line === 'number' ? { line } : {}),
        fix: 'give every row as many cells as the header and close every quoted cell',
      },
      { cause: err },
    );
  }
  return rows.map((row) => {
    const { record, info } = row as { record: Record<string, unknown>; info: { lines: number } };
    // A cell holding a JSON array is a list (several gold answers, the options of a multiple-choice task).
    for (const name of [...taskFieldNames.answers, ...taskFieldNames.choices]) {
      const cell = record[name];
      if (typeof cell === 'string') {
        const list = jsonArrayCell(cell);
        if (list) record[name] = list;
      }
    }
    return { record, line: info.lines };
  });
}

function jsonArrayCell(cell: string): unknown[] | undefined {
  const t = cell.trim();
  if (!t.startsWith('[') || !t.endsWith(']')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** 1-based start line of each element of a top-level JSON array, found by a string-aware scan. */
function arrayElementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectElement = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\n') line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (expectElement && ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') {
      if (ch !== ']') lines.push(line);
      expectElement = false;
    }
    if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') {
      depth++;
      if (depth === 1 && ch === '[') expectElement = true;
    } else if (ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 1) expectElement = true;
  }
  return lines;
}

function asRecord(value: unknown, path: string, where: { line?: number; key?: string }): RawTaskRecord {
  if (!isRecord(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new SkillOptError('tasks', `Task must be a JSON object, got ${got}`, {
      file: path,
      ...where,
      fix: 'write each task as an object such as {"id": "1", "question": "...", "answer": "..."}',
    });
  }
  return { record: value, ...where };
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

function placeOf(raw: RawTaskRecord, file: string): ErrorPlace {
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
