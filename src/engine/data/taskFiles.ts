/**
 * Task files as written on disk: JSONL, a JSON array (or `{items|data: [...]}`, or a dict of records),
 * CSV/TSV with a header row. Records are read without interpreting them, each with the line or key it
 * came from so errors can point at it; tasks.ts turns them into tasks.
 */
import { extname } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { parseBool } from '../config/overrides';
import { SkillOptError } from '../errors';
import { readRegularFile } from '../regularFile';
import { evalContainer, readYaml, type EvalContainer } from './evalFiles';
import type { EvalDefaults } from './evalFormats';
import { decodeUtf8 } from './utf8';

export type TaskFileFormat = 'json' | 'jsonl' | 'csv' | 'yaml';

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
  /** A promptfoo config's prompt template and defaultTest, applied to each of its tests. */
  evalDefaults?: EvalDefaults;
  /** One-line notices about how the file's records were read (mapped fields and options). */
  notices?: string[];
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
  choiceLabels: ['choice_labels'],
  images: ['image_path', 'image_paths', 'images', 'image'],
} as const;

/** Read the raw records of a task file without interpreting them (ratio splits write these back out). */
export function readTaskRecords(path: string): TaskFile {
  let read: ReturnType<typeof readRegularFile>;
  try {
    read = readRegularFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a folder' : 'cannot be read';
    throw new SkillOptError(
      'tasks',
      `Task file ${why}`,
      { file: path, fix: 'point the tasks setting at a readable .jsonl, .json, .csv or .yaml file' },
      { cause: err },
    );
  }
  if ('kind' in read) {
    throw new SkillOptError('tasks', `Task file is ${read.kind}, not a regular file`, {
      file: path,
      fix: 'point the tasks setting at a .jsonl, .json, .csv or .yaml file',
    });
  }
  const decoded = decodeUtf8(read.bytes);
  if ('badLine' in decoded) {
    throw new SkillOptError('tasks', 'Task file is not valid UTF-8 text', {
      file: path,
      line: decoded.badLine,
      fix: 'save the file as UTF-8 (e.g. in VS Code: "Save with Encoding" → UTF-8), or fix the bytes on that line',
    });
  }
  let text = decoded.text;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.trim()) {
    throw new SkillOptError('tasks', 'Task file is empty', { file: path, fix: 'add at least one task' });
  }
  const ext = extname(path).toLowerCase();
  if (ext === '.csv' || ext === '.tsv') {
    return { path, format: 'csv', records: readCsv(path, text, ext === '.tsv' ? '\t' : ',') };
  }
  if (ext === '.yaml' || ext === '.yml') return readYamlFile(path, text);
  const first = text.trimStart()[0];
  if (ext !== '.json' && ext !== '.jsonl' && ext !== '.ndjson' && first !== '[' && first !== '{') {
    throw new SkillOptError('tasks', `Unsupported task file type "${ext || '(none)'}"`, {
      file: path,
      fix: 'use .jsonl (one JSON object per line), .json (an array of objects), .csv (with a header row) or .yaml',
    });
  }
  return readJson(path, text, ext === '.jsonl' || ext === '.ndjson');
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
      const evals = evalContainer(whole, path);
      if (evals) return containerFile(path, 'json', evals, jsonLines(path, text, evals.name));
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

function readYamlFile(path: string, text: string): TaskFile {
  const { value, lineOf } = readYaml(path, text);
  const at = (listKey: string | undefined, i: number): { line: number } | { key: string } => {
    const line = lineOf(listKey, i);
    return line !== undefined ? { line } : { key: listKey ? `${listKey}[${i}]` : `[${i}]` };
  };
  if (Array.isArray(value)) {
    return { path, format: 'yaml', records: value.map((v, i) => asRecord(v, path, at(undefined, i))) };
  }
  if (isRecord(value)) {
    const evals = evalContainer(value, path);
    if (evals) return containerFile(path, 'yaml', evals, (i) => lineOf(evals.name, i));
    for (const name of ['items', 'data']) {
      const nested = value[name];
      if (Array.isArray(nested)) {
        return { path, format: 'yaml', records: nested.map((v, i) => asRecord(v, path, at(name, i))) };
      }
    }
  }
  throw new SkillOptError('tasks', 'YAML task file holds no list of tasks', {
    file: path,
    fix: 'write a list of tasks, a mapping with items:, evals: or tests: (a promptfoo config)',
  });
}

/** Lines of the records under `name` in a JSON document, read through the YAML parser (JSON is YAML). */
function jsonLines(path: string, text: string, name: string): (i: number) => number | undefined {
  try {
    const { lineOf } = readYaml(path, text);
    return (i) => lineOf(name, i);
  } catch {
    return () => undefined;
  }
}

function containerFile(
  path: string,
  format: TaskFileFormat,
  evals: EvalContainer,
  lineOf: (i: number) => number | undefined,
): TaskFile {
  return {
    path,
    format,
    records: evals.list.map((v, i) => {
      const line = lineOf(i);
      return asRecord(
        v,
        path,
        line !== undefined ? { line, key: `${evals.name}[${i}]` } : { key: `${evals.name}[${i}]` },
      );
    }),
    ...(evals.defaults ? { evalDefaults: evals.defaults } : {}),
    notices: evals.notices,
  };
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
    // skill-creator's list fields: a JSON array, or one entry; an empty cell is a row without them.
    for (const name of CSV_LIST_FIELDS) {
      const cell = record[name];
      if (typeof cell !== 'string') continue;
      if (cell.trim() === '') delete record[name];
      else record[name] = jsonArrayCell(cell) ?? [cell];
    }
    csvTriggerFlag(record, path, info.lines);
    return { record, line: info.lines };
  });
}

/**
 * A CSV cell is text, so `should_trigger` is read from it as settings read booleans (parseBool:
 * true/yes/1/on, false/no/0/off, any case); an empty cell is absent, so body tasks and trigger queries
 * share one file. Anything else is refused here, where the row is known.
 */
function csvTriggerFlag(record: Record<string, unknown>, path: string, line: number): void {
  const cell = record.should_trigger;
  if (typeof cell !== 'string') return;
  if (cell.trim() === '') {
    delete record.should_trigger;
    return;
  }
  const flag = parseBool(cell);
  if (flag === undefined) {
    throw new SkillOptError('tasks', `should_trigger is ${JSON.stringify(cell)}, not true or false`, {
      file: path,
      line,
      key: 'should_trigger',
      fix: 'write true (the skill should load for this query) or false (also yes/no, 1/0, on/off), or leave the cell empty for a body task',
    });
  }
  record.should_trigger = flag;
}

const CSV_LIST_FIELDS = ['expectations', 'assertions', 'expected_behavior', 'files', 'skills'];

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

export function isRecord(value: unknown): value is Record<string, unknown> {
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
