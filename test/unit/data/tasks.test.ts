import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTaskRecords } from '../../../src/engine/data/taskFiles';
import { loadTasks, toTaskItems } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'data');

function expectTasksError(fn: () => unknown, line: number | undefined, message: RegExp): SkillOptError {
  let caught: SkillOptError | undefined;
  assert.throws(fn, (err: unknown) => {
    assert.ok(SkillOptError.is(err, 'tasks'), `expected a tasks error, got ${String(err)}`);
    assert.equal(err.place.line, line);
    assert.match(err.message, message);
    assert.ok(err.place.fix, 'every tasks error says how to fix it');
    caught = err;
    return true;
  });
  return caught!;
}

describe('loadTasks', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-tasks-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads JSONL with every field alias and keeps the original record', () => {
    const items = loadTasks(join(fixtures, 'tasks.jsonl'));
    assert.deepEqual(
      items.map((i) => ({ ...i, fields: undefined })),
      [
        {
          id: 'q1',
          input: 'Capital of France?',
          answers: ['Paris'],
          taskType: 'geo',
          context: 'France is in Europe.',
          fields: undefined,
        },
        { id: '2', input: '2 + 2?', answers: ['4'], fields: undefined },
        {
          id: 'q3',
          input: 'Pick the prime.',
          answers: ['B'],
          taskType: 'math',
          choices: ['4', '5', '6'],
          fields: undefined,
        },
      ],
    );
    assert.deepEqual(items[1].fields, { id: 2, prompt: '2 + 2?', answer: 4 });
  });

  it('reads a JSON array with several gold answers and numeric answers', () => {
    const items = loadTasks(join(fixtures, 'tasks.json'));
    assert.deepEqual(
      items.map((i) => [i.id, i.input, i.answers, i.taskType]),
      [
        ['a', 'Who wrote Hamlet?', ['Shakespeare', 'William Shakespeare'], undefined],
        ['b', 'Sum the column.', ['12.5'], 'Cell-Level Manipulation'],
      ],
    );
  });

  it('reads an object wrapping an items array', () => {
    const items = loadTasks(join(fixtures, 'wrapped.json'));
    assert.deepEqual(
      items.map((i) => [i.id, i.answers]),
      [['w1', ['A']]],
    );
  });

  it('reads CSV, parsing JSON-array cells and multi-line quoted cells', () => {
    const items = loadTasks(join(fixtures, 'tasks.csv'));
    assert.deepEqual(
      items.map((i) => [i.id, i.input, i.answers, i.taskType, i.choices]),
      [
        ['101', 'Date on the letter?', ['13 March 1976', 'March 13, 1976'], 'handwritten', undefined],
        ['102', 'Multi\nline question', ['Acme Inc.'], 'layout', ['x', 'y']],
      ],
    );
    assert.deepEqual(items[0].fields.answers, ['13 March 1976', 'March 13, 1976']);
    const file = readTaskRecords(join(fixtures, 'tasks.csv'));
    assert.equal(file.format, 'csv');
    assert.deepEqual(
      file.records.map((r) => r.line),
      [2, 4],
    );
  });

  it('keeps structured golds as JSON text', () => {
    const path = write('s.jsonl', '{"id":"j","input":"x","expected":[{"b":1,"a":[2]}]}\n');
    assert.deepEqual(loadTasks(path)[0].answers, ['{"b":1,"a":[2]}']);
  });

  it('reports a broken JSONL line by number', () => {
    const path = write('bad.jsonl', '{"id":"1","question":"q","answer":"a"}\n\n{"id":"2", "question": \n');
    expectTasksError(() => loadTasks(path), 3, /Line is not valid JSON/);
  });

  it('reports a syntax error in a JSON array by line', () => {
    const path = write('bad.json', '[\n  {"id": "1", "question": "q", "answer": "a"},\n  {"id": "2",}\n]\n');
    expectTasksError(() => loadTasks(path), 3, /not valid JSON/);
  });

  it('points at the line of an item without id inside a JSON array', () => {
    const path = write(
      'noid.json',
      '[\n  {"id": "1", "question": "q", "answer": "a"},\n  {\n    "question": "q2", "answer": "b"\n  }\n]',
    );
    expectTasksError(() => loadTasks(path), 3, /Task has no id \(other tasks in this file have one\)/);
  });

  it('names the tasks of a plain CSV, JSONL or YAML file without ids row-N by position, with a notice', () => {
    const files = [
      write('plain.csv', 'prompt,expected\nWhat is 6 x 7?,42\n\nLargest planet?,Jupiter\n'),
      write(
        'plain.jsonl',
        '{"prompt":"What is 6 x 7?","expected":"42"}\n\n{"prompt":"Largest planet?","expected":"Jupiter"}\n',
      ),
      write(
        'plain.yaml',
        '- prompt: What is 6 x 7?\n  expected: "42"\n- prompt: Largest planet?\n  expected: Jupiter\n',
      ),
    ];
    for (const path of files) {
      const file = readTaskRecords(path);
      const items = toTaskItems(file);
      assert.deepEqual(
        items.map((i) => [i.id, i.input, i.answers]),
        [
          ['row-1', 'What is 6 x 7?', ['42']],
          ['row-2', 'Largest planet?', ['Jupiter']],
        ],
        path,
      );
      assert.deepEqual(file.notices, [
        `${path}: no task has an id (id, key, uid, task_id, questionId); tasks are named row-1…row-2 by their position in the file (add ids to keep names stable when rows are added or moved)`,
      ]);
    }
    // A file with ids everywhere has no notice.
    const withIds = readTaskRecords(join(fixtures, 'tasks.jsonl'));
    toTaskItems(withIds);
    assert.equal(withIds.notices, undefined);
  });

  it('rejects duplicate ids, naming both places', () => {
    const path = write(
      'dup.jsonl',
      '{"id":"x","question":"q","answer":"a"}\n{"id":"x","question":"q","answer":"b"}\n',
    );
    expectTasksError(() => loadTasks(path), 2, /Duplicate task id "x" \(first used at line 1\)/);
  });

  it('rejects an item without input', () => {
    const path = write('noinput.jsonl', '{"id":"x","answer":"a"}\n');
    expectTasksError(() => loadTasks(path), 1, /Task "x" has no input/);
  });

  it('refuses a task that declares functions for the target to call, naming the field and the way out', () => {
    const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } };
    const line = (id: string, field: string): string =>
      JSON.stringify({ id, input: 'q', answer: 'a', [field]: [tool] });
    const path = write('tools.jsonl', `{"id":"ok","input":"q","answer":"a"}\n${line('t', 'tools')}\n`);
    const err = expectTasksError(
      () => loadTasks(path),
      2,
      /Task "t" declares functions.*field "tools".*not run for any target/,
    );
    // The refusal does not depend on the target, so its way out must not offer one that keeps the field.
    assert.doesNotMatch(err.message, /or train with an agent target/);
    assert.match(
      err.place.fix ?? '',
      /^remove the "tools" field \(a task file with it is refused for chat and agent targets alike\)/,
    );
    const other = write('functions.jsonl', `${line('f', 'functions')}\n`);
    expectTasksError(() => loadTasks(other), 1, /field "functions"/);
  });

  it('rejects an item without an answer unless answers are optional', () => {
    const path = write(
      'noanswer.jsonl',
      '{"id":"x","question":"q"}\n{"id":"y","question":"q","answer":"  "}\n',
    );
    expectTasksError(() => loadTasks(path), 1, /Task "x" has no expected answer/);
    const items = loadTasks(path, { requireAnswers: false });
    assert.deepEqual(
      items.map((i) => i.answers),
      [[], []],
    );
  });

  it('rejects empty and missing files and non-object items', () => {
    expectTasksError(() => loadTasks(write('empty.jsonl', '\n  \n')), undefined, /Task file is empty/);
    expectTasksError(() => loadTasks(join(dir, 'missing.jsonl')), undefined, /Task file does not exist/);
    expectTasksError(() => loadTasks(write('arr.json', '[]')), undefined, /has no tasks/);
    expectTasksError(
      () => loadTasks(write('str.json', '[\n"just text"\n]')),
      2,
      /must be a JSON object, got a string/,
    );
    mkdirSync(join(dir, 'folder.json'));
    expectTasksError(() => loadTasks(join(dir, 'folder.json')), undefined, /Task file is a folder/);
  });

  it('reports ragged CSV rows with their line', () => {
    const path = write('bad.csv', 'id,question,answer\n1,q,a\n2,q,a,extra\n');
    expectTasksError(() => loadTasks(path), 3, /CSV could not be parsed/);
  });

  it('rejects unknown file types', () => {
    const path = write('tasks.txt', 'id: 1\n');
    expectTasksError(() => loadTasks(path), undefined, /Unsupported task file type ".txt"/);
  });
});
