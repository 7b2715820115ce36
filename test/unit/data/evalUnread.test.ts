import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readTriggerFile } from '../../../src/engine/activation/queries';
import { readTaskRecords } from '../../../src/engine/data/taskFiles';
import { toTaskItems, type TaskItem } from '../../../src/engine/data/tasks';
import { evalFixtures, evalTempDir, refused } from './evalHelpers';

/** Tasks and notices of an eval file; every notice is prefixed with the file. */
function read(path: string): { items: TaskItem[]; notices: string[] } {
  const file = readTaskRecords(path);
  const items = toTaskItems(file);
  const notices = file.notices ?? [];
  assert.ok(notices.every((n) => n.startsWith(`${path}: `)));
  return { items, notices };
}

const count = (notices: string[], re: RegExp): number => notices.filter((n) => re.test(n)).length;

/** No field of a foreign eval record disappears: each is read, or named once per file as not used. */
describe('eval fields that are not read are named, once per file', () => {
  const tmp = evalTempDir();

  it('skill-creator: eval_id / eval_name name a task without id; other fields and keys get one notice each', () => {
    const path = tmp.write(
      's/evals/evals.json',
      JSON.stringify({
        skill_name: 'totals',
        version: 2,
        evals: [
          { id: 1, eval_name: 'sum', prompt: 'p1', expectations: ['a'], checks: [{ type: 'x' }] },
          { id: 2, eval_name: 'due', prompt: 'p2', expectations: ['b'], checks: [] },
          { eval_name: 'by-name', prompt: 'p3', expectations: ['c'] },
          { eval_id: 7, eval_name: 'by-eval-id', prompt: 'p4', query: 'q4', expectations: ['d'] },
          { id: 8, prompt: 'p5', expectations: [{ text: 'e', passed: true, evidence: 'seen' }] },
        ],
      }),
    );
    const { items, notices } = read(path);
    assert.deepEqual(
      items.map((i) => [i.id, i.input]),
      [
        ['1', 'p1'],
        ['2', 'p2'],
        ['by-name', 'p3'],
        ['7', 'p4'],
        ['8', 'p5'],
      ],
    );
    assert.equal(items[4].assertions?.[0].kind === 'judge' && items[4].assertions[0].rubric, 'e');
    assert.equal(count(notices, /expectation field "(passed|evidence)" is not used: the judge grades/), 2);
    assert.equal(count(notices, /eval field "checks" is not used: an eval is read from id, eval_id/), 1);
    assert.equal(count(notices, /eval field "eval_name" is not used: an eval with an id or eval_id/), 1);
    assert.equal(count(notices, /eval field "eval_id"/), 0, 'eval_id named the one eval it is in');
    assert.equal(count(notices, /eval field "query" is not used: the task is the first of prompt/), 1);
    assert.equal(count(notices, /evals\.json key "version" is not used/), 1);
    assert.equal(count(notices, /"(skill_name|evals)" is not used/), 0, 'skill_name and evals are read');
  });

  it("the skill authoring guide's shape: a field beyond query, expected_behavior, files, skills is named", () => {
    const path = tmp.write(
      'guide.json',
      JSON.stringify([
        { query: 'q1', expected_behavior: ['x'], difficulty: 'easy' },
        { query: 'q2', expected_behavior: ['y'], difficulty: 'hard' },
      ]),
    );
    const { notices } = read(path);
    assert.equal(count(notices, /eval field "difficulty" is not used/), 1);
  });

  it('promptfoo: metadata, a description column and vars the task text does not take are named', () => {
    const yaml = tmp.write(
      'tests.yaml',
      [
        '- vars: {question: "2+2?", context: "arithmetic"}',
        '  metadata: {suite: math}',
        '  assert: [{type: equals, value: "4"}]',
        '- vars: {question: "3+3?", context: "arithmetic"}',
        '  assert: [{type: equals, value: "6"}]',
      ].join('\n'),
    );
    const { items, notices } = read(yaml);
    assert.equal(items[0].input, '2+2?');
    assert.equal(count(notices, /test "metadata" is not used/), 1);
    assert.equal(
      count(
        notices,
        /var "context" is not used: with no prompt template the task is the var "question" alone/,
      ),
      1,
    );
    const config = tmp.write(
      'promptfooconfig.yaml',
      [
        'prompts: ["Q: {{question}}"]',
        'tests:',
        '  - vars: {question: "2+2?", expected: "4", note: "easy"}',
        '    assert: [{type: equals, value: "4"}]',
      ].join('\n'),
    );
    const noted = read(config).notices;
    assert.equal(count(noted, /var "note" is not used: neither the prompt template nor an assertion/), 1);
    assert.equal(count(noted, /var "expected"/), 1);
    const csv = read(join(evalFixtures, 'promptfoo', 'tests.csv')).notices;
    assert.equal(count(csv, /test descriptions are not shown/), 1);
  });

  it('promptfoo: vars are filled into assertion values, as promptfoo does, in YAML and in CSV cells', () => {
    const yaml = tmp.write(
      'promptfooconfig.yaml',
      [
        'prompts: ["Q: {{question}}"]',
        'defaultTest: {assert: [{type: not-icontains, value: "{{ banned }}"}]}',
        'tests:',
        '  - vars: {question: "2+2?", expected: "4", banned: "five"}',
        '    assert: [{type: equals, value: "{{expected}}"}, {type: contains-any, value: ["{{expected}}", four]}]',
      ].join('\n'),
    );
    const { items, notices } = read(yaml);
    assert.deepEqual(
      items[0].assertions?.map((a) => a.label),
      ['not-icontains "five"', 'equals "4"', 'contains-any ["4","four"]'],
    );
    assert.equal(count(notices, /var "/), 0, 'every var is used');
    const csv = tmp.write('t.csv', 'question,answer,__expected\n2+2?,4,contains: {{answer}}\n');
    const [row] = read(csv).items;
    assert.deepEqual(
      row.assertions?.map((a) => a.label),
      ['contains "4"'],
    );
    const missing = tmp.write(
      'm.yaml',
      '- vars: {question: q}\n  assert: [{type: equals, value: "{{ gold }}"}]\n',
    );
    refused(
      () => read(missing),
      { line: 1, key: 'assert[0]' },
      /assert\[0\] uses \{\{ gold \}\} but the test has no var "gold"/,
    );
  });

  it('OpenAI evals: a sample field beyond input, ideal and id is named', () => {
    const path = tmp.write(
      's.jsonl',
      [
        JSON.stringify({ input: 'Symbol for gold?', ideal: 'Au', criteria: 'exact' }),
        JSON.stringify({ input: 'Symbol for iron?', ideal: 'Fe', criteria: 'exact' }),
      ].join('\n'),
    );
    const { items, notices } = read(path);
    assert.deepEqual(items[1].answers, ['Fe']);
    assert.equal(count(notices, /OpenAI evals sample field "criteria" is not used/), 1);
  });

  it('trigger queries: a field beyond id, text and should_trigger is named, in task rows and trigger files', () => {
    const rows = tmp.write(
      'mixed.csv',
      [
        'id,question,answer,note,should_trigger',
        'b1,2+2?,4,,',
        't1,format the date,,core case,true',
        't2,write a poem,,,false',
      ].join('\n'),
    );
    const { items, notices } = read(rows);
    assert.equal(items.filter((i) => i.shouldTrigger !== undefined).length, 2);
    assert.equal(count(notices, /trigger query field "note" is not used/), 1);
    assert.equal(
      count(notices, /trigger query field "(answer|id|question)"/),
      0,
      'empty cells and read fields',
    );
    const file = tmp.write(
      'triggers.json',
      JSON.stringify([
        { query: 'format the date', should_trigger: true, note: 'core case' },
        { query: 'write a poem', prompt: 'write a poem', should_trigger: false, note: 'negative' },
      ]),
    );
    const fileNotices: string[] = [];
    assert.equal(readTriggerFile(file, fileNotices).length, 2);
    assert.deepEqual(
      fileNotices.map((n) => /field "(\w+)"/.exec(n)?.[1]),
      ['note', 'prompt'],
    );
    assert.ok(fileNotices.every((n) => n.startsWith(`${file}: `)));
  });

  it('plain tasks: an unread field and a second name of one field get one notice each, as the eval shapes do', () => {
    const path = tmp.write(
      'tasks.jsonl',
      [
        { id: 'a', question: 'q1', answer: 'x', label: 'y', difficulty: 'hard', source: '' },
        { id: 'b', question: 'q2', answer: 'z', difficulty: 'easy', notes: ['n'] },
        { id: 'c', question: 'q3', answer: 'w', task_type: 'date', context: 'c' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const { notices } = read(path);
    assert.deepEqual(
      notices.map((n) => /field "(\w+)"/.exec(n)?.[1]),
      ['label', 'difficulty', 'notes'],
      'once per field name; blank fields and read ones are not named',
    );
    assert.match(notices[0], /"answer" is, the first present of answers, answer, expected/);
    assert.match(notices[1], /only a module or command env\.scorer gets its other fields/);
    // A module or command scorer gets the whole record: only the shadowed name is said.
    const withScorer = readTaskRecords(path);
    toTaskItems(withScorer, { scorerSeesFields: true });
    assert.deepEqual(
      (withScorer.notices ?? []).map((n) => /field "(\w+)"/.exec(n)?.[1]),
      ['label'],
    );
  });

  it('leaves the fixtures that use only read fields without such notices', () => {
    for (const file of [
      join(evalFixtures, 'invoice-totals', 'evals', 'evals.json'),
      join(evalFixtures, 'promptfoo', 'promptfooconfig.yaml'),
      join(evalFixtures, 'openai-evals', 'samples.jsonl'),
    ])
      assert.equal(count(read(file).notices, /is not used: (an eval|a sample|the prompt|with no)/), 0, file);
  });
});
