import assert from 'node:assert/strict';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { createScorer, scorerTypes } from '../../../src/engine/scoring/scorers';
import type { ScorerSpec, ScoreResult } from '../../../src/engine/scoring/scorers';
import { deepEqual, parseNumber } from '../../../src/engine/scoring/valueScorers';

const ctx = { baseDir: __dirname };
const item = (answers: string[], extra: Partial<TaskItem> = {}): TaskItem => ({
  id: extra.id ?? 't1',
  input: 'question',
  answers,
  fields: {},
  ...extra,
});
const score = (
  spec: ScorerSpec,
  prediction: string,
  answers: string[],
  extra?: Partial<TaskItem>,
): Promise<ScoreResult> => createScorer(spec, ctx).score(prediction, item(answers, extra));
const hs = (r: ScoreResult): [number, number] => [r.hard, r.soft];

describe('built-in scorers', () => {
  it('exact: trimmed, case-sensitive, any gold', async () => {
    assert.deepEqual(hs(await score('exact', '  Paris \n', ['Lyon', 'Paris'])), [1, 1]);
    const miss = await score('exact', 'paris', ['Paris']);
    assert.deepEqual(hs(miss), [0, 0]);
    assert.equal(miss.reason, 'EXACT=0: predicted "paris" but expected "Paris"');
  });

  it('normalized_exact: SQuAD EM for hard, best F1 for soft (SearchQA)', async () => {
    assert.deepEqual(hs(await score('normalized_exact', 'The Eiffel Tower.', ['eiffel tower'])), [1, 1]);
    const partial = await score('normalized_exact', 'the quick brown fox', ['quick fox', 'a dog']);
    assert.deepEqual(hs(partial), [0, 0.8]);
    assert.equal(
      partial.reason,
      'EM=0: predicted "the quick brown fox" but expected one of "quick fox", "a dog" (F1=0.80)',
    );
    assert.deepEqual(hs(await score('normalized_exact', '', ['Paris'])), [0, 0]);
    assert.deepEqual(hs(await score('normalized_exact', 'ÉCOLE', ['école'])), [1, 1]);
  });

  it('f1: soft is the best F1, hard needs the threshold', async () => {
    assert.deepEqual(hs(await score('f1', 'quick fox', ['quick fox'])), [1, 1]);
    assert.deepEqual(hs(await score('f1', 'the quick brown fox', ['quick fox'])), [0, 0.8]);
    assert.deepEqual(
      hs(await score({ type: 'f1', threshold: 0.75 }, 'the quick brown fox', ['quick fox'])),
      [1, 0.8],
    );
    const miss = await score({ type: 'f1', threshold: 0.9 }, 'brown', ['quick fox']);
    assert.equal(miss.reason, 'F1=0.00 < 0.90: predicted "brown" but expected "quick fox"');
  });

  it('contains: normalised gold inside the normalised prediction', async () => {
    assert.deepEqual(
      hs(await score('contains', 'I believe it is The Louvre, in Paris.', ['louvre'])),
      [1, 1],
    );
    assert.deepEqual(hs(await score('contains', 'Lyon', ['Paris'])), [0, 0]);
    assert.deepEqual(
      hs(await score('contains', 'anything', ['The'])),
      [0, 0],
      'an article-only gold does not match everything',
    );
  });

  it('regex: item answers as patterns, or a fixed pattern with flags and full match', async () => {
    assert.deepEqual(hs(await score('regex', 'order #1234 shipped', ['#\\d{4}\\b'])), [1, 1]);
    const miss = await score('regex', 'order pending', ['#\\d{4}']);
    assert.equal(miss.reason, 'REGEX=0: predicted "order pending" matches none of /#\\d{4}/');
    assert.deepEqual(
      hs(await score({ type: 'regex', pattern: '^yes$', flags: 'i' }, ' YES ', ['ignored'])),
      [1, 1],
    );
    assert.deepEqual(
      hs(await score({ type: 'regex', pattern: 'ab+', full_match: true }, 'abbbc', [])),
      [0, 0],
    );
    assert.deepEqual(hs(await score({ type: 'regex', pattern: 'ab+', flags: 'g' }, 'abb', [])), [1, 1]);
    await assert.rejects(score('regex', 'x', ['(unclosed']), (err: unknown) =>
      SkillOptError.is(err, 'tasks'),
    );
    assert.throws(() => createScorer({ type: 'regex', pattern: '(' }, ctx), /scorer.pattern/);
    assert.throws(() => createScorer({ type: 'regex', flags: 'q' }, ctx), /flags "q" are invalid/);
  });

  it('numeric: commas, currency, percent, scientific notation and tolerances', async () => {
    assert.deepEqual(hs(await score('numeric', 'The total is $1,234.50.', ['1234.5'])), [1, 1]);
    assert.deepEqual(hs(await score('numeric', '12.5%', ['0.125'])), [1, 1]);
    assert.deepEqual(hs(await score('numeric', '0.125', ['12.5 %'])), [1, 1]);
    assert.deepEqual(hs(await score('numeric', '1.5e3', ['1500'])), [1, 1]);
    assert.deepEqual(hs(await score('numeric', 'It fell by −3', ['-3'])), [1, 1]);
    assert.deepEqual(hs(await score('numeric', '3.14', ['3.14159'])), [0, 0]);
    assert.deepEqual(hs(await score({ type: 'numeric', abs_tol: 0.01 }, '3.14', ['3.14159'])), [1, 1]);
    assert.deepEqual(hs(await score({ type: 'numeric', rel_tol: 0.01 }, '101', ['100'])), [1, 1]);
    const none = await score('numeric', 'no idea', ['7']);
    assert.equal(none.reason, 'NUM=0: no number in predicted "no idea", expected "7"');
    const wrong = await score('numeric', 'Between 2019-2020 it was 8', ['7']);
    assert.match(wrong.reason, /^NUM=0: predicted 8 but expected "7"/);
    await assert.rejects(
      score('numeric', '1', ['seven']),
      /Task "t1" expects "seven", which is not a number/,
    );
  });

  it('parseNumber reads the last number in the text', () => {
    assert.deepEqual(parseNumber('from 2019-2020'), { value: 2020, percent: false });
    assert.deepEqual(parseNumber('-€ 5'), { value: -5, percent: false });
    assert.deepEqual(parseNumber('.5%'), { value: 0.5, percent: true });
    assert.equal(parseNumber('none'), undefined);
  });

  it('choice: label, choice text or first token against the gold label (as LiveMathematicianBench reads them)', async () => {
    const choices = { choices: ['4', 'Five', 'six'] };
    assert.deepEqual(hs(await score('choice', 'B', ['B'], choices)), [1, 1]);
    assert.deepEqual(hs(await score('choice', 'b.', ['B'], choices)), [1, 1]);
    assert.deepEqual(hs(await score('choice', 'B. Five', ['B'], choices)), [1, 1]);
    assert.deepEqual(
      hs(await score('choice', 'five', ['B'], choices)),
      [1, 1],
      'choice text maps to its label',
    );
    assert.deepEqual(hs(await score('choice', 'C because six is even', ['B'], choices)), [0, 0]);
    assert.deepEqual(
      hs(await score('choice', '(B)', ['B'], choices)),
      [0, 0],
      'the reference reads "(B" here',
    );
    assert.deepEqual(hs(await score('choice', 'B', ['Five'], choices)), [1, 1], 'gold given as choice text');
    const named = { choices: ['x', 'y'], choiceLabels: ['C', 'F'] };
    assert.deepEqual(hs(await score('choice', 'F', ['F'], named)), [1, 1], 'labels as the data names them');
    assert.deepEqual(hs(await score('choice', 'B', ['F'], named)), [0, 0]);
    const wrong = await score('choice', 'A', ['B'], choices);
    assert.equal(wrong.reason, 'CHOICE=0: predicted A but expected B');
    const none = await score('choice', 'I am not sure', ['B'], choices);
    assert.equal(none.reason, 'CHOICE=0: no choice label in predicted "I am not sure", expected B');
    assert.deepEqual(hs(await score('choice', 'G', ['g'])), [1, 1], 'labels A–G without choices');
    await assert.rejects(score('choice', 'A', ['forty'], choices), /has no expected choice label/);
  });

  it('anls: hard at ANLS ≥ 0.999, soft is ANLS', async () => {
    assert.deepEqual(hs(await score('anls', ' dr.  SMITH', ['Dr. Smith'])), [1, 1]);
    const near = await score('anls', 'Dr. Smith', ['dr smith']);
    assert.deepEqual(hs(near), [0, 0.8888888888888888]);
    assert.equal(near.reason, 'ANLS=0.889: predicted "Dr. Smith" but expected "dr smith"');
    assert.deepEqual(hs(await score('anls', '', ['abc'])), [0, 0]);
  });

  it('json: deep equality after parsing, key order irrelevant, code fences allowed', async () => {
    assert.deepEqual(
      hs(
        await score('json', '```json\n{"b": [1, 2], "a": {"y": null, "x": 1.0}}\n```', [
          '{"a":{"x":1,"y":null},"b":[1,2]}',
        ]),
      ),
      [1, 1],
    );
    assert.deepEqual(hs(await score('json', '[2, 1]', ['[1, 2]'])), [0, 0]);
    const bad = await score('json', 'not json', ['{}']);
    assert.match(bad.reason, /^JSON=0: predicted "not json" is not valid JSON/);
    await assert.rejects(score('json', '{}', ['Paris']), /expects "Paris", which is not valid JSON/);
    assert.equal(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), true);
    assert.equal(deepEqual({ a: 1 }, { a: 1, b: undefined }), false);
  });

  it('quotes long predictions briefly in reasons', async () => {
    const r = await score('exact', 'x'.repeat(500), ['y']);
    assert.ok(r.reason.length < 260, `reason length ${r.reason.length}`);
  });

  it('still scores when the run was stopped: a reply already paid for is kept', async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await createScorer('exact', ctx).score('a', item(['a']), ac.signal);
    assert.equal(r.hard, 1);
  });
});

describe('createScorer configuration errors', () => {
  it('lists the valid types for an unknown type', () => {
    assert.throws(
      () => createScorer('fuzzy', ctx),
      (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'config'));
        assert.equal(err.place.key, 'scorer.type');
        assert.equal(err.place.fix, `use one of ${scorerTypes.join(', ')}`);
        return true;
      },
    );
  });

  it('rejects misspelt and ill-typed options, naming the key', () => {
    assert.throws(
      () => createScorer({ type: 'f1', thresold: 0.5 }, ctx),
      (err: unknown) => SkillOptError.is(err, 'config') && err.place.key === 'scorer.thresold',
    );
    assert.throws(
      () => createScorer({ type: 'f1', threshold: 2 }, ctx),
      (err: unknown) => SkillOptError.is(err, 'config') && err.place.key === 'scorer.threshold',
    );
    assert.throws(() => createScorer({ type: 'module' }, ctx), /scorer.path|Scorer "module"/);
  });

  it('names scorers by type or by the name option', () => {
    assert.equal(createScorer('anls', ctx).name, 'anls');
    assert.equal(createScorer({ type: 'exact', name: 'strict' }, ctx).name, 'strict');
  });
});
