import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTaskRecords } from '../../../src/engine/data/taskFiles';
import { loadTasks, toTaskItems, type TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { checkInputFiles } from '../../../src/engine/train/inputFiles';
import { renderTaskMessage } from '../../../src/engine/train/rolloutItem';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'evals');

/** Labels of a task's assertions, the judge's marked with "judge:". */
const labels = (item: TaskItem): string[] =>
  (item.assertions ?? []).map((a) => (a.kind === 'judge' ? `judge: ${a.rubric}` : a.label));

function refused(
  fn: () => unknown,
  where: { file?: RegExp; line?: number; key?: string },
  message: RegExp,
): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(SkillOptError.is(err, 'tasks'), `expected a tasks error, got ${String(err)}`);
    if (where.file) assert.match(err.place.file ?? '', where.file);
    if (where.line !== undefined) assert.equal(err.place.line, where.line);
    if (where.key !== undefined) assert.equal(err.place.key, where.key);
    assert.match(err.message, message);
    assert.ok(err.place.fix, 'every refusal says what to use instead');
    return true;
  });
}

describe("the user's own eval files", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-evalfmt-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  };

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

    it('refuses a binary input file for a chat target before any call, and gives it to an agent target', () => {
      const evals = write(
        's/evals/evals.json',
        JSON.stringify({
          evals: [{ id: 7, prompt: 'Read the stamp', expectations: ['x'], files: ['stamp.png'] }],
        }),
      );
      writeFileSync(join(dir, 's', 'stamp.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
      const items = loadTasks(evals);
      assert.equal(items[0].files?.[0].text, undefined);
      assert.throws(
        () => checkInputFiles(items, false),
        /Task "7" gives the binary input file stamp\.png, which a chat target cannot read.*Fix: use an agent target/,
      );
      checkInputFiles(items, true);
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

    it('refuses what it cannot honour, each with its alternative', () => {
      const cases: Array<[string, RegExp]> = [
        [
          '- vars: {q: a}\n  assert: [{type: python, value: "True"}]',
          /"python" cannot be scored: it runs code/,
        ],
        [
          '- vars: {q: a}\n  assert: [{type: similar, value: x}]',
          /"similar" cannot be scored: it needs a metric/,
        ],
        [
          '- vars: {q: a}\n  assert: [{type: latency, threshold: 100}]',
          /"latency" cannot be scored: it measures the call/,
        ],
        ['- vars: {q: a}\n  assert: [{type: nonsense}]', /Unknown assertion type "nonsense"/],
        [
          '- vars: {q: a}\n  assert: [{type: llm-rubric, value: x, provider: openai:gpt-4o}]',
          /sets "provider".*evaluation\.judge_model/,
        ],
        ['- vars: {q: a}\n  assert: [{type: llm-rubric, value: x, rubricPrompt: y}]', /sets "rubricPrompt"/],
        [
          '- vars: {q: a}\n  assert: [{type: contains, value: x, transform: "output.trim()"}]',
          /sets "transform"/,
        ],
        ['- vars: {q: a}\n  assert: [{type: is-json, value: {type: object}}]', /JSON schema/],
        ['- vars: {q: a}\n  assert: [{type: regex, value: "("}]', /invalid pattern/],
        [
          '- vars: {q: a}\n  assert: [{type: contains, value: "file://x.txt"}]',
          /reads its value from file:\/\/x\.txt/,
        ],
        ['- vars: {q: a}\n  assert: [{type: not-llm-rubric, value: x}]', /"not-llm-rubric" is not supported/],
        ['- vars: {q: a}\n  assert: [{type: contains, value: a, threshold: 0.5}]', /sets a threshold/],
        [
          '- vars: {q: [a, b]}\n  assert: [{type: contains, value: a}]',
          /var "q" is a list.*one test per value/,
        ],
        [
          '- vars: {q: "file://q.txt"}\n  assert: [{type: contains, value: a}]',
          /var "q" reads file:\/\/q\.txt/,
        ],
        [
          '- vars: {a: x, b: y}\n  assert: [{type: contains, value: a}]',
          /cannot tell which var is the task \(a, b\)/,
        ],
        ['- vars: {q: a}\n  options: {provider: x}\n  assert: []', /sets "options"/],
        ['- vars: {q: a}\n  providers: [fast]', /sets "providers".*model\.target/],
      ];
      for (const [yaml, message] of cases) {
        const path = write('t.yaml', yaml);
        refused(() => loadTasks(path), { file: /t\.yaml$/, line: 1 }, message);
      }
    });

    it('refuses config-level shapes it cannot follow', () => {
      const cases: Array<[string, RegExp]> = [
        ['prompts: [a, b]\ntests: []', /the config has 2 prompts/],
        ['prompts: ["file://p.txt"]\ntests: []', /read from file:\/\/p\.txt/],
        ['prompts: ["{% if x %}{{x}}{% endif %}"]\ntests: []', /Nunjucks/],
        ['tests: file://tests.csv', /point env\.data_path at the tests file itself \(tests\.csv\)/],
        ['scenarios: []\ntests: []', /config key "scenarios" is not supported/],
        ['defaultTest: {options: {}}\ntests: []', /defaultTest\.options is not supported/],
      ];
      for (const [yaml, message] of cases) {
        const path = write('c.yaml', yaml);
        refused(() => loadTasks(path, { allowEmpty: true }), { file: /c\.yaml$/ }, message);
      }
      const path = write(
        'u.yaml',
        'prompts: ["Q: {{ question | upper }}"]\ntests:\n  - vars: {question: a}\n',
      );
      refused(() => loadTasks(path), { line: 3 }, /template expression SkillOpt does not evaluate/);
      const missing = write('m.yaml', 'prompts: ["Q: {{ question }}"]\ntests:\n  - vars: {query: a}\n');
      refused(() => loadTasks(missing), { line: 3 }, /no var "question"/);
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
