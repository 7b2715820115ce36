import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { materializeRatioSplit } from '../../../src/engine/data/splits';
import { readTaskRecords } from '../../../src/engine/data/taskFiles';
import { loadTasks, toTaskItems, type TaskItem } from '../../../src/engine/data/tasks';
import { checkInputFiles, MAX_INLINE_CHARS } from '../../../src/engine/train/inputFiles';
import { renderTaskMessage } from '../../../src/engine/train/rolloutItem';
import { evalFixtures, evalTempDir, refused } from './evalHelpers';

const fixtures = evalFixtures;

/** Labels of a task's assertions, the judge's marked with "judge:". */
const labels = (item: TaskItem): string[] =>
  (item.assertions ?? []).map((a) => (a.kind === 'judge' ? `judge: ${a.rubric}` : a.label));

describe("the user's own eval files", () => {
  const tmp = evalTempDir();
  const write = (name: string, text: string): string => tmp.write(name, text);

  describe('skill-creator evals/evals.json', () => {
    const path = join(fixtures, 'invoice-totals', 'evals', 'evals.json');

    it('reads every eval as a task: expectations for the judge, expected_output shown as the answer', () => {
      const file = readTaskRecords(path);
      const items = toTaskItems(file);
      assert.equal(items.length, 9);
      assert.deepEqual(file.records[0].key, 'evals[0]');
      assert.equal(file.records[0].line, 4, 'errors point at the line of the eval');
      const [first] = items;
      assert.equal(first.id, '1');
      assert.equal(first.input, 'What is the total of the attached invoice?');
      assert.deepEqual(first.answers, ['$1250']);
      assert.deepEqual(labels(first), [
        'judge: The final answer is "$1250"',
        'judge: The reply adds the shipping line',
      ]);
      // An eval without expectations is graded on its expected_output.
      assert.deepEqual(labels(items[7]), ['judge: The output achieves what this describes: $750']);
      assert.match(
        file.notices?.join('\n') ?? '',
        /skill-creator evals for skill "invoice-totals", 9 read as tasks/,
      );
    });

    it('resolves files against the skill folder; a chat target gets their text inline, an agent a workspace copy', () => {
      const [first] = loadTasks(path);
      assert.equal(first.files?.length, 1);
      assert.equal(first.files?.[0].name, 'evals/files/invoice-a.csv');
      assert.equal(
        first.files?.[0].path,
        join(fixtures, 'invoice-totals', 'evals', 'files', 'invoice-a.csv'),
      );
      assert.match(
        renderTaskMessage(first),
        /File evals\/files\/invoice-a\.csv:\n```\nitem,quantity,unit_price\n.*Shipping,1,50\n```$/s,
      );
      assert.match(
        renderTaskMessage(first, 'workspace'),
        /Input files \(in your working folder\):\n- evals\/files\/invoice-a\.csv$/,
      );
    });

    it('refuses a missing input file, naming the eval and the file', () => {
      const evals = write(
        's/evals/evals.json',
        JSON.stringify(
          { evals: [{ id: 1, prompt: 'p', expectations: ['x'], files: ['evals/files/none.txt'] }] },
          null,
          2,
        ),
      );
      refused(
        () => loadTasks(evals),
        { line: 3, key: 'evals[0].files[0]' },
        /Input file evals\/files\/none\.txt not found/,
      );
    });

    it('refuses an input file that is a FIFO or a folder as such, not as missing', function () {
      if (process.platform === 'win32') this.skip();
      mkdirSync(join(tmp.path, 's', 'evals', 'files', 'dir.txt'), { recursive: true });
      execFileSync('mkfifo', [join(tmp.path, 's', 'evals', 'files', 'pipe.txt')]);
      for (const [name, kind] of [
        ['pipe.txt', 'a FIFO \\(named pipe\\)'],
        ['dir.txt', 'a folder'],
      ]) {
        const evals = write(
          's/evals/evals.json',
          JSON.stringify({
            evals: [{ id: 1, prompt: 'p', expectations: ['x'], files: [`evals/files/${name}`] }],
          }),
        );
        refused(
          () => loadTasks(evals),
          { key: 'evals[0].files[0]' },
          new RegExp(`Input file evals/files/${name.replace('.', '\\.')} is ${kind}, not a regular file`),
        );
      }
    });

    it('refuses a binary input file for a chat target before any call, and gives it to an agent target', () => {
      const evals = write(
        's/evals/evals.json',
        JSON.stringify({
          evals: [{ id: 7, prompt: 'Read the stamp', expectations: ['x'], files: ['stamp.png'] }],
        }),
      );
      writeFileSync(join(tmp.path, 's', 'stamp.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
      const items = loadTasks(evals);
      assert.equal(items[0].files?.[0].text, undefined);
      assert.throws(
        () => checkInputFiles(items, false),
        /Task "7" gives the binary input file stamp\.png, which a chat target cannot read.*Fix: use an agent target/,
      );
      checkInputFiles(items, true);
      const big = write(
        'b/evals/evals.json',
        JSON.stringify({ evals: [{ id: 8, prompt: 'Sum it', expectations: ['x'], files: ['big.txt'] }] }),
      );
      writeFileSync(join(tmp.path, 'b', 'big.txt'), 'x'.repeat(MAX_INLINE_CHARS + 1));
      assert.throws(
        () => checkInputFiles(loadTasks(big), false),
        /Task "8" gives the input file big\.txt \(200001 characters\), too large to send inline/,
      );
    });

    it('leaves trigger queries (should_trigger) to the activation track', () => {
      const evals = write(
        't.json',
        JSON.stringify([
          { id: 'a', prompt: 'make a pdf', expected_output: 'x', should_trigger: true, answer: 'y' },
        ]),
      );
      const [item] = loadTasks(evals);
      assert.equal(item.assertions, undefined);
      assert.equal(item.fields.should_trigger, true);
    });

    it("reads the evaluation shape of Anthropic's skill authoring guide (query, expected_behavior, files, skills)", () => {
      const path = join(fixtures, 'skill-guide', 'evaluations.json');
      const file = readTaskRecords(path);
      const [first, second] = toTaskItems(file);
      assert.equal(first.id, 'row-1');
      assert.equal(first.input, 'What is the total of the invoice in test-files/order-17.csv?');
      assert.deepEqual(labels(first), [
        'judge: Adds every line of the invoice, shipping included',
        'judge: Gives the total as "$212.50"',
      ]);
      assert.deepEqual(labels(second), ['judge: Gives the due date as "2024-06-24"']);
      assert.equal(
        loadTasks(path)[0].files?.[0].path,
        join(fixtures, 'skill-guide', 'test-files', 'order-17.csv'),
      );
      // The skills an eval names are not silently dropped: the run trains one.
      assert.match(file.notices?.join('\n') ?? '', /"skills" \(invoice-totals\) is not read/);
    });

    it('refuses an empty expectation', () => {
      const evals = write(
        'e.json',
        JSON.stringify({ evals: [{ id: 1, prompt: 'p', expectations: ['ok', ''] }] }),
      );
      refused(
        () => loadTasks(evals),
        { key: 'evals[0].expectations[1]' },
        /An expectation must be a non-empty sentence/,
      );
    });
  });

  describe('promptfoo', () => {
    it('reads a promptfooconfig.yaml: its one prompt, defaultTest and tests, each assertion mapped', () => {
      const file = readTaskRecords(join(fixtures, 'promptfoo', 'promptfooconfig.yaml'));
      const items = toTaskItems(file);
      assert.deepEqual(
        items.map((i) => i.id),
        ['test-1', 'test-2', 'test-3', 'test-4'],
      );
      assert.equal(items[0].input, 'Answer in as few words as possible: What is the capital of France?');
      assert.deepEqual(labels(items[0]), ['not-icontains "as an ai"', 'icontains "paris"']);
      assert.deepEqual(labels(items[1]), [
        'not-icontains "as an ai"',
        'equals "Tokyo"',
        'judge: Names the capital city only, without commentary',
      ]);
      assert.deepEqual(labels(items[2]), [
        'not-icontains "as an ai"',
        'is-json',
        'contains-all ["red","blue","yellow"]',
      ]);
      assert.equal(items[3].passThreshold, 0.5);
      assert.deepEqual(
        items[3].assertions?.map((a) => a.weight),
        [1, 1, 2],
      );
      assert.deepEqual(
        file.records.map((r) => r.line),
        [12, 17, 25, 31],
      );
      const notices = file.notices?.join('\n') ?? '';
      assert.match(notices, /promptfoo "providers" is not used here: the models are model.target/);
      assert.match(notices, /test descriptions are not shown/);
    });

    it('reads its CSV form: vars as columns, __expected cells as assertions', () => {
      const items = loadTasks(join(fixtures, 'promptfoo', 'tests.csv'));
      assert.deepEqual(
        items.map((i) => [i.id, i.input]),
        [
          ['row-1', 'What is 2 + 2?'],
          ['row-2', 'What is the capital of Italy?'],
          ['row-3', 'Name a prime number below 5.'],
        ],
      );
      assert.deepEqual(labels(items[0]), ['equals "4"', 'not-contains "five"']);
      assert.deepEqual(labels(items[1]), ['icontains "rome"', 'judge: Names a city in Italy']);
      assert.deepEqual(labels(items[2]), ['contains-any ["2","3"]']);
    });

    it('refuses a javascript assertion before spending, naming the file, the test and the assertion', () => {
      refused(
        () => loadTasks(join(fixtures, 'promptfoo', 'refused.yaml')),
        { file: /refused\.yaml$/, line: 7, key: 'assert[1]' },
        /Assertion "javascript" cannot be scored: it runs code from the eval file.*Fix: move the check into a scorer module or command/,
      );
    });

    it('reports a YAML syntax error with its line', () => {
      const path = write('bad.yaml', '- vars: {q: a}\n- vars: b: c\n');
      refused(() => loadTasks(path), { line: 2 }, /not valid YAML/);
    });

    it('reads the same tests from JSONL', () => {
      const path = write(
        't.jsonl',
        '{"vars": {"question": "2+2?"}, "assert": [{"type": "equals", "value": 4}]}\n',
      );
      const [item] = loadTasks(path);
      assert.equal(item.input, '2+2?');
      assert.deepEqual(labels(item), ['equals "4"']);
    });
  });

  describe('OpenAI evals samples', () => {
    it('reads input messages and ideal: the system message as context, ids by line', () => {
      const items = loadTasks(join(fixtures, 'openai-evals', 'samples.jsonl'));
      assert.deepEqual(
        items.map((i) => [i.id, i.input, i.answers, i.context]),
        [
          ['sample-1', 'How many legs does a spider have?', ['8'], 'Answer with a number only.'],
          ['sample-2', 'Spell the word cat backwards.', ['tac', 'TAC'], undefined],
          ['sample-3', 'What is the chemical symbol for gold?', ['Au'], undefined],
        ],
      );
      assert.equal(items[0].assertions, undefined, 'scored by env.scorer against ideal');
    });

    it('refuses a few-shot conversation: the target answers one user turn', () => {
      const path = write(
        's.jsonl',
        '{"input": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}], "ideal": "d"}\n',
      );
      refused(() => loadTasks(path), { line: 1, key: 'input' }, /input\[1\] is a "assistant" message/);
    });
  });

  it('reads a plain YAML list of tasks, each error at its line', () => {
    const path = write(
      'tasks.yaml',
      '- id: a\n  question: Capital of France?\n  answer: Paris\n- id: b\n  question: 2+2?\n',
    );
    const file = readTaskRecords(path);
    assert.equal(file.format, 'yaml');
    assert.deepEqual(
      file.records.map((r) => r.line),
      [1, 4],
    );
    refused(() => toTaskItems(file), { line: 4 }, /Task "b" has no expected answer/);
  });

  it("splits a skill's evals folder by ratio, passing on how the file was read", () => {
    const split = materializeRatioSplit({
      dataPath: join(fixtures, 'invoice-totals', 'evals'),
      outputDir: join(tmp.path, 'split'),
      ratio: '1:1:1',
    });
    assert.equal(split.train.length + split.val.length + split.test.size, 9);
    assert.match(split.notices?.join('\n') ?? '', /skill-creator evals for skill "invoice-totals"/);
  });

  it('reads a plain CSV with id, prompt and expected', () => {
    const items = loadTasks(join(fixtures, 'plain', 'tasks.csv'));
    assert.deepEqual(
      items.map((i) => [i.id, i.input, i.answers]),
      [
        ['q1', 'What is 6 x 7?', ['42']],
        ['q2', 'Which planet is the largest?', ['Jupiter', 'jupiter']],
      ],
    );
  });
});
