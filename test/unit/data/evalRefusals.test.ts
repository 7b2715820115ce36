import { loadTasks } from '../../../src/engine/data/tasks';
import { evalTempDir, refused } from './evalHelpers';

/** Everything in the user's eval files that SkillOpt cannot honour is refused at load time, with what to write instead. */
describe('eval files: refusals', () => {
  const tmp = evalTempDir();
  const write = (name: string, text: string): string => tmp.write(name, text);

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

  it('refuses every malformed assertion and test, naming what to write instead', () => {
    const cases: Array<[string, RegExp]> = [
      ['- vars: {q: a}\n  assert: [contains]', /An assertion must be an object with a "type"/],
      [
        '- vars: {q: a}\n  assert: [{type: contains, value: a, contextTransform: x}]',
        /sets "contextTransform"/,
      ],
      ['- vars: {q: a}\n  assert: [{type: contains, value: a, config: {}}]', /sets "config"/],
      ['- vars: {q: a}\n  assert: [{type: contains, value: a, colour: red}]', /unknown key "colour"/],
      ['- vars: {q: a}\n  assert: [{type: contains, value: a, weight: -1}]', /has weight -1/],
      ['- vars: {q: a}\n  assert: [{type: llm-rubric}]', /needs its rubric as a string value/],
      [
        '- vars: {q: a}\n  assert: [{type: is-xml}]',
        /"is-xml" cannot be scored: SkillOpt has no scorer for it/,
      ],
      ['- vars: {q: a}\n  assert: [{type: equals}]', /"equals" needs a value/],
      ['- vars: {q: a}\n  assert: [{type: contains-any, value: [a, {b: 1}]}]', /needs a list of strings/],
      ['- vars: {q: a}\n  assert: [{type: regex}]', /needs a pattern/],
      ['- vars: {q: a}\n  assert: [{type: contains}]', /"contains" needs a string value/],
      ['- vars: {q: a}\n  assert: {type: contains, value: a}', /"assert" must be a list/],
      ['- vars: {q: a}\n  threshold: 2\n  assert: []', /"threshold" is 2/],
      ['- vars: {q: a}\n  colour: red', /sets "colour"/],
      ['- vars: {q: {a: 1}}\n  assert: []', /var "q" is an object/],
      ['- expectations: ok\n  prompt: p\n  id: 1', /"expectations" must be a list/],
      ['- expectations: [ok]\n  prompt: p\n  id: 1\n  files: a.txt', /"files" must be a list of paths/],
      ['- input: [{role: user}]\n  ideal: x', /input\[0\] is not a chat message/],
      ['- input: [{role: system, content: s}]\n  ideal: x', /input has 0 user messages/],
    ];
    for (const [yaml, message] of cases) {
      const path = write('t.yaml', yaml);
      refused(() => loadTasks(path), { file: /t\.yaml$/, line: 1 }, message);
    }
    const csv = (text: string): string => write('t.csv', text);
    refused(() => loadTasks(csv('q,__expected,__threshold\na,b,3\n')), { line: 2 }, /__threshold is "3"/);
    refused(
      () => loadTasks(csv('q,__expected,__metric\na,b,m\n')),
      { line: 2 },
      /column "__metric" is not supported/,
    );
  });

  it('refuses config-level shapes it cannot follow', () => {
    const cases: Array<[string, RegExp]> = [
      ['prompts: [a, b]\ntests: []', /the config has 2 prompts/],
      ['prompts: ["file://p.txt"]\ntests: []', /read from file:\/\/p\.txt/],
      ['prompts: ["{% if x %}{{x}}{% endif %}"]\ntests: []', /Nunjucks/],
      ['tests: file://tests.csv', /point env\.data_path at the tests file itself \(tests\.csv\)/],
      ['scenarios: []\ntests: []', /config key "scenarios" is not supported/],
      ['defaultTest: {options: {}}\ntests: []', /defaultTest\.options is not supported/],
      ['defaultTest: [a]\ntests: []', /defaultTest is not a mapping/],
      ['defaultTest: {vars: [a]}\ntests: []', /defaultTest\.vars is not a mapping/],
      ['defaultTest: {assert: {type: x}}\ntests: []', /defaultTest\.assert is not a list/],
      ['prompts: [{label: x}]\ntests: []', /the prompt is not text/],
      ['description: nothing here', /holds no list of tasks/],
    ];
    for (const [yaml, message] of cases) {
      const path = write('c.yaml', yaml);
      refused(() => loadTasks(path, { allowEmpty: true }), { file: /c\.yaml$/ }, message);
    }
    const path = write('u.yaml', 'prompts: ["Q: {{ question | upper }}"]\ntests:\n  - vars: {question: a}\n');
    refused(() => loadTasks(path), { line: 3 }, /template expression SkillOpt does not evaluate/);
    const missing = write('m.yaml', 'prompts: ["Q: {{ question }}"]\ntests:\n  - vars: {query: a}\n');
    refused(() => loadTasks(missing), { line: 3 }, /no var "question"/);
  });
});
