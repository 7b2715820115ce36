import assert from 'node:assert/strict';
import { extractAnswer } from '../../../src/engine/scoring/extract';
import {
  anls,
  exactMatch,
  levenshtein,
  maxTokenF1,
  normalizeAnswer,
  tokenF1,
} from '../../../src/engine/scoring/normalize';

// Golden values from the SQuAD v1.1 normaliser / F1 and the DocVQA ANLS formula run under CPython.
describe('normalisation and metrics', () => {
  it('normalises like the SQuAD script, Unicode word boundaries included', () => {
    const cases: Record<string, string> = {
      'The Eiffel Tower!': 'eiffel tower',
      '  an Apple a day,  keeps the doctor away ': 'apple day keeps doctor away',
      'Théâtre   the-end': 'théâtre theend',
      'A.B.C.': 'abc',
      'naïve café—the best': 'naïve café— best',
      'theory of an anthem': 'theory of anthem',
      'Ünïcödé THE ÉCOLE': 'ünïcödé école',
    };
    for (const [input, expected] of Object.entries(cases))
      assert.equal(normalizeAnswer(input), expected, input);
  });

  it('computes token F1 as the SQuAD script does', () => {
    assert.equal(tokenF1('the quick brown fox', 'quick fox'), 0.8);
    assert.equal(tokenF1('Barack Obama', 'President Barack Hussein Obama'), 0.6666666666666666);
    assert.equal(tokenF1('paris paris', 'paris'), 0.6666666666666666);
    assert.equal(tokenF1('1,000 dollars', '1000 dollars'), 1);
    assert.equal(tokenF1('nothing', 'something'), 0);
    assert.equal(tokenF1('', 'the'), 1, 'both sides normalise to nothing');
    assert.equal(tokenF1('', 'Paris'), 0);
    assert.equal(maxTokenF1('quick fox', ['slow dog', 'the quick brown fox']), 0.8);
    assert.equal(maxTokenF1('x', []), 0);
    assert.ok(exactMatch('The Paris.', 'paris'));
  });

  it('computes Levenshtein distance over code points', () => {
    assert.equal(levenshtein('kitten', 'sitting'), 3);
    assert.equal(levenshtein('flaw', 'lawn'), 2);
    assert.equal(levenshtein('😀ab', 'ab'), 1);
    assert.equal(levenshtein('', 'abc'), 3);
  });

  it('computes ANLS with the 0.5 cut-off and the best gold', () => {
    const cases: Array<[string, string[], number]> = [
      ['Dr. Smith', ['dr smith'], 0.8888888888888888],
      ['Dr. Smith', ['Dr.  Smith'], 1],
      ['13 March 1976', ['13 March, 1976'], 0.9285714285714286],
      ['abc', ['xyz'], 0],
      ['kitten', ['sitting'], 0.5714285714285714],
      ['naïve', ['naive'], 0.8],
      ['', [''], 1],
      ['12', ['1234'], 0],
      ['12', ['1234', '12 '], 1],
    ];
    for (const [pred, golds, expected] of cases)
      assert.equal(anls(pred, golds), expected, `${pred} vs ${golds.join('|')}`);
  });
});

describe('extractAnswer', () => {
  it('takes the last <answer> pair, trimmed, across lines and case', () => {
    assert.deepEqual(
      extractAnswer('Thinking <answer>draft</answer>\nFinal: <ANSWER>\n Paris \n</ANSWER> done'),
      {
        answer: 'Paris',
        via: 'tag',
      },
    );
  });

  it('falls back to the last non-empty line', () => {
    assert.deepEqual(extractAnswer('Let me think.\nThe answer is 42.\n\n   \n'), {
      answer: 'The answer is 42.',
      via: 'last-line',
    });
    assert.deepEqual(extractAnswer('unfinished <answer>Paris'), {
      answer: 'unfinished <answer>Paris',
      via: 'last-line',
    });
  });

  it('reports an empty reply and supports other tags', () => {
    assert.deepEqual(extractAnswer('  \n '), { answer: '', via: 'empty' });
    assert.deepEqual(extractAnswer('<final>B</final> <answer>A</answer>', 'final'), {
      answer: 'B',
      via: 'tag',
    });
    assert.deepEqual(extractAnswer('<answer></answer>'), { answer: '', via: 'tag' });
  });
});
