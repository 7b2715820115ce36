import assert from 'node:assert/strict';
import type { TaskItem } from '../../../src/engine/data/tasks';
import {
  compileAssertion,
  parseCsvAssertion,
  runCheck,
  type Assertion,
} from '../../../src/engine/scoring/assertions';
import { withAssertions } from '../../../src/engine/scoring/assertionScorer';
import type { Judge } from '../../../src/engine/scoring/judge';
import { createScorer, type ScoredReply } from '../../../src/engine/scoring/scorers';

const at = { place: { file: 'evals.yaml', line: 3 }, key: 'assert[0]' };

function check(raw: Record<string, unknown>, output: string): boolean {
  const a = compileAssertion(raw, at);
  assert.equal(a.kind, 'check');
  return runCheck(a as Extract<Assertion, { kind: 'check' }>, output);
}

describe('eval-file assertions', () => {
  it('maps every deterministic type onto a check of the final answer', () => {
    const cases: Array<[Record<string, unknown>, string, boolean]> = [
      [{ type: 'equals', value: 'Tokyo' }, ' Tokyo ', true],
      [{ type: 'equals', value: 'Tokyo' }, 'tokyo', false],
      [{ type: 'equals', value: 4 }, '4', true],
      [{ type: 'equals', value: { a: [1, 2] } }, '{"a": [1, 2]}', true],
      [{ type: 'equals', value: { a: [1, 2] } }, '{"a": [2, 1]}', false],
      [{ type: 'contains', value: 'Paris' }, 'It is Paris.', true],
      [{ type: 'contains', value: 'Paris' }, 'it is paris', false],
      [{ type: 'icontains', value: 'PARIS' }, 'it is paris', true],
      [{ type: 'not-contains', value: 'sorry' }, 'Paris', true],
      [{ type: 'not-icontains', value: 'SORRY' }, 'sorry, no', false],
      [{ type: 'contains-any', value: ['2', '3'] }, 'three is 3', true],
      [{ type: 'contains-any', value: '7,9' }, 'three is 3', false],
      [{ type: 'contains-all', value: ['red', 'blue'] }, 'red and blue', true],
      [{ type: 'contains-all', value: ['red', 'blue'] }, 'red only', false],
      [{ type: 'icontains-any', value: ['RED'] }, 'red', true],
      [{ type: 'icontains-all', value: ['RED', 'Blue'] }, 'red, BLUE', true],
      [{ type: 'starts-with', value: '1989' }, '1989, in November', true],
      [{ type: 'starts-with', value: '1989' }, 'In 1989', false],
      [{ type: 'regex', value: '^\\d{4}$' }, '1989', true],
      [{ type: 'regex', value: '^\\d{4}$' }, 'about 1989', false],
      [{ type: 'not-regex', value: '\\d' }, 'none', true],
      [{ type: 'is-json' }, '["red", "blue"]', true],
      [{ type: 'is-json' }, 'red, blue', false],
      [{ type: 'not-is-json' }, 'red, blue', true],
      [{ type: 'contains-json' }, 'Here: {"a": 1} done', true],
      [{ type: 'contains-json' }, 'no json here', false],
    ];
    for (const [raw, output, expected] of cases) {
      assert.equal(check(raw, output), expected, `${JSON.stringify(raw)} on ${JSON.stringify(output)}`);
    }
  });

  it('reads promptfoo CSV cells: prefixes, grade:, plain text as equals', () => {
    const label = (cell: string): string => {
      const a = parseCsvAssertion(cell, at);
      return a.kind === 'judge' ? `judge: ${a.rubric}` : a.label;
    };
    assert.equal(label('42'), 'equals "42"');
    assert.equal(label('contains: Paris'), 'contains "Paris"');
    assert.equal(label('not-icontains: sorry'), 'not-icontains "sorry"');
    assert.equal(label('regex: ^\\d+$'), 'regex "^\\\\d+$"');
    assert.equal(label('is-json'), 'is-json');
    assert.equal(label('grade: Is polite'), 'judge: Is polite');
    assert.equal(label('llm-rubric: Is polite'), 'judge: Is polite');
    assert.equal(label('Note: a colon in plain text'), 'equals "Note: a colon in plain text"');
    assert.throws(
      () => parseCsvAssertion('javascript: output.length < 5', at),
      /"javascript" cannot be scored/,
    );
    assert.throws(() => parseCsvAssertion('fn: output.length < 5', at), /"javascript" cannot be scored/);
    assert.throws(() => parseCsvAssertion('python: len(output) < 5', at), /"python" cannot be scored/);
  });

  it('names the record and the assertion in every refusal', () => {
    assert.throws(
      () =>
        compileAssertion(
          { type: 'javascript', value: 'true' },
          { place: { file: 'evals.yaml', line: 3, key: 'tests[1]' }, key: 'assert[0]' },
        ),
      (err: Error) => {
        assert.match(
          err.message,
          /^evals\.yaml:3 \(tests\[1\]\.assert\[0\]\): Assertion "javascript" cannot be scored/,
        );
        return true;
      },
    );
  });

  describe('the scorer', () => {
    const base = createScorer('exact', { baseDir: '.' });
    const item = (assertions: Assertion[], extra: Partial<TaskItem> = {}): TaskItem => ({
      id: 't1',
      input: 'Capital of Japan?',
      answers: [],
      assertions,
      fields: {},
      ...extra,
    });
    const judged: Array<{ reply: ScoredReply; expectations: readonly string[] }> = [];
    const judge: Judge = {
      model: 'test judge',
      grade(_item, reply, expectations) {
        judged.push({ reply, expectations });
        return Promise.resolve(
          expectations.map((e) => ({ passed: !e.includes('commentary'), evidence: `graded ${e}` })),
        );
      },
    };
    const scorer = withAssertions(base, judge);
    const contains = compileAssertion({ type: 'contains', value: 'Tokyo' }, at);
    const heavy = compileAssertion({ type: 'starts-with', value: 'Tok', weight: 3 }, at);
    const rubricOk = compileAssertion({ type: 'llm-rubric', value: 'Names a city' }, at);
    const rubricBad = compileAssertion({ type: 'llm-rubric', value: 'Has no commentary' }, at);

    it('scores the weighted share passed; hard only when all pass', async () => {
      const all = await scorer.score('Tokyo', item([contains, heavy, rubricOk]), undefined, {
        text: 'I think: <answer>Tokyo</answer>',
        activity: 'exit 0 after 2.0 s; the skill was loaded',
      });
      assert.deepEqual([all.hard, all.soft], [1, 1]);
      assert.match(all.reason, /all 3 assertions passed/);
      assert.deepEqual(judged.at(-1), {
        reply: {
          text: 'I think: <answer>Tokyo</answer>',
          activity: 'exit 0 after 2.0 s; the skill was loaded',
        },
        expectations: ['Names a city'],
      });

      const some = await scorer.score('Kyoto', item([contains, heavy, rubricBad]));
      assert.equal(some.hard, 0);
      assert.equal(some.soft, 0);
      assert.match(
        some.reason,
        /0\/3 assertions passed; failed: contains "Tokyo"; starts-with "Tok"; llm-rubric "Has no commentary" \(graded Has no commentary\)/,
      );

      const weighted = await scorer.score('Tokyo', item([contains, heavy, rubricBad]));
      assert.equal(weighted.hard, 0);
      assert.equal(weighted.soft, 4 / 5);
    });

    it('passes at the task threshold (promptfoo threshold)', async () => {
      const r = await scorer.score('Tokyo', item([contains, heavy, rubricBad], { passThreshold: 0.8 }));
      assert.deepEqual([r.hard, r.soft], [1, 0.8]);
    });

    it('leaves a task without assertions to env.scorer', async () => {
      const before = judged.length;
      const r = await scorer.score('Tokyo', { id: 'p', input: 'x', answers: ['Tokyo'], fields: {} });
      assert.deepEqual([r.hard, r.soft], [1, 1]);
      assert.equal(judged.length, before, 'the judge was not asked');
    });

    it('refuses to score expectations without a judge (a bug, never a silent pass)', async () => {
      await assert.rejects(
        withAssertions(base, undefined).score('x', item([rubricOk])),
        /no judge was set up/,
      );
    });
  });
});
