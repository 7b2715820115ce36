import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { createScorer } from '../../../src/engine/scoring/scorers';
import { toScoreResult } from '../../../src/engine/scoring/userScorer';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'scorers');
const ctx = { baseDir: fixtures };
const item = (id: string, answers: string[], fields: Record<string, unknown> = {}): TaskItem => ({
  id,
  input: `input of ${id}`,
  answers,
  fields,
});

function scorerError(pattern: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(SkillOptError.is(err, 'scorer'), `expected a scorer error, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  };
}

describe('module scorers', () => {
  it('loads a CommonJS module once and accepts objects, numbers and booleans', async () => {
    const g = globalThis as { __lengthScorerLoads?: number };
    const before = g.__lengthScorerLoads ?? 0;
    const scorer = createScorer({ type: 'module', path: 'lengthScorer.cjs' }, ctx);
    assert.equal(scorer.name, 'module:lengthScorer.cjs');
    assert.deepEqual(await scorer.score('abcd', item('a', ['4'])), {
      hard: 1,
      soft: 1,
      reason: 'length 4 vs 4',
    });
    assert.deepEqual(await scorer.score('ab', item('b', ['4'])), {
      hard: 0,
      soft: 0.5,
      reason: 'length 2 vs 4',
    });
    assert.deepEqual(await scorer.score('', item('number', ['4'])), {
      hard: 0,
      soft: 0.25,
      reason: 'fail (soft=0.25)',
    });
    assert.deepEqual(await scorer.score('', item('bool', ['4'])), {
      hard: 1,
      soft: 1,
      reason: 'pass (soft=1.00)',
    });
    assert.equal((g.__lengthScorerLoads ?? 0) - before <= 1, true, 'the module is loaded at most once');
  });

  it('rejects invalid scores and thrown errors, naming scorer and task', async () => {
    const scorer = createScorer({ type: 'module', path: 'lengthScorer.cjs', name: 'len' }, ctx);
    await assert.rejects(
      scorer.score('x', item('bad', ['4'])),
      scorerError(/Scorer "len" returned an invalid score for task "bad": hard must be 0 or 1, got 0.5/),
    );
    await assert.rejects(
      scorer.score('x', item('throw', ['4'])),
      scorerError(/Scorer "len" threw on task "throw": cannot score/),
    );
  });

  it('loads an ES module and calls its async named export', async () => {
    const scorer = createScorer(
      { type: 'module', path: join(fixtures, 'asyncScorer.mjs') },
      { baseDir: '/' },
    );
    assert.deepEqual(await scorer.score('yes', item('e', ['yes'])), { hard: 1, soft: 1, reason: 'esm' });
    assert.deepEqual(await scorer.score('no', item('e', ['yes'])), { hard: 0, soft: 0, reason: 'esm' });
  });

  it('fails at creation for a missing file or a module without a function', () => {
    assert.throws(
      () => createScorer({ type: 'module', path: 'missing.js' }, ctx),
      (err: unknown) => SkillOptError.is(err, 'config') && err.place.file === join(fixtures, 'missing.js'),
    );
    assert.throws(
      () => createScorer({ type: 'module', path: 'notAFunction.cjs' }, ctx),
      /does not export a function/,
    );
    assert.throws(
      () => createScorer({ type: 'module', path: 'asyncScorer.mjs', export: 'nope' }, ctx),
      /export named "nope"/,
    );
  });
});

describe('command scorers', () => {
  const spec = { type: 'command', command: [process.execPath, 'commandScorer.cjs'], timeout_s: 20 };

  it('sends the task as JSON on stdin and reads the score from the last stdout line', async () => {
    const scorer = createScorer(spec, ctx);
    assert.deepEqual(await scorer.score(' paris ', item('ok', ['Paris'], { tag: 'geo' })), {
      hard: 1,
      soft: 1,
      reason: 'geo:input of ok:match',
    });
    assert.deepEqual(await scorer.score('Lyon', item('ok2', ['Paris'], { tag: 'geo' })), {
      hard: 0,
      soft: 0,
      reason: 'geo:input of ok2:differs',
    });
  });

  it('runs a shell command line from the base folder', async () => {
    const scorer = createScorer({ type: 'command', command: `"${process.execPath}" commandScorer.cjs` }, ctx);
    assert.equal((await scorer.score('a', item('s', ['a'], { tag: 't' }))).hard, 1);
  });

  it('reports a non-zero exit with the stderr tail', async () => {
    const scorer = createScorer({ ...spec, name: 'grader' }, ctx);
    await assert.rejects(
      scorer.score('x', item('exit', ['x'])),
      scorerError(/Scorer "grader" exited with code 3: grader crashed: missing column on task "exit"/),
    );
  });

  it('reports output that is not JSON, and out-of-range scores', async () => {
    const scorer = createScorer({ ...spec, name: 'grader' }, ctx);
    await assert.rejects(
      scorer.score('x', item('garbage', ['x'])),
      scorerError(/Scorer "grader" printed no JSON score \(got "this is not json"\) on task "garbage"/),
    );
    await assert.rejects(
      scorer.score('x', item('range', ['x'])),
      scorerError(/invalid score for task "range": soft must be a number in 0..1, got 1.5/),
    );
  });

  it('kills a scorer that runs past timeout_s', async () => {
    const scorer = createScorer({ ...spec, timeout_s: 0.5, name: 'slow' }, ctx);
    await assert.rejects(
      scorer.score('x', item('hang', ['x'])),
      scorerError(/Scorer "slow" timed out after 0.5 s on task "hang"/),
    );
  });

  it('stops on abort', async () => {
    const scorer = createScorer(spec, ctx);
    const ac = new AbortController();
    const pending = scorer.score('x', item('hang', ['x']), ac.signal);
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(pending, (err: unknown) => SkillOptError.is(err, 'cancelled'));
  });

  it('reports a program that cannot start', async () => {
    const scorer = createScorer({ type: 'command', command: ['/nonexistent/grader'] }, ctx);
    await assert.rejects(
      scorer.score('x', item('n', ['x'])),
      scorerError(/could not start \(spawn \/nonexistent\/grader ENOENT\)/),
    );
  });

  it('validates its options', () => {
    assert.throws(() => createScorer({ type: 'command', command: [] }, ctx), {
      name: 'SkillOptError',
      reason: 'config',
    });
    assert.throws(
      () => createScorer({ type: 'command', command: ['x'], timeout_s: 0 }, ctx),
      /scorer.timeout_s/,
    );
  });
});

describe('toScoreResult', () => {
  it('fills soft from hard and hard from soft', () => {
    assert.deepEqual(toScoreResult({ hard: true }, 's', 'i'), {
      hard: 1,
      soft: 1,
      reason: 'pass (soft=1.00)',
    });
    assert.deepEqual(toScoreResult({ soft: 0.4, reason: 'close' }, 's', 'i'), {
      hard: 0,
      soft: 0.4,
      reason: 'close',
    });
  });

  it('rejects values that are not scores', () => {
    for (const bad of [
      null,
      'yes',
      [1],
      1.5,
      -0.1,
      Number.NaN,
      { hard: 2 },
      { hard: 1, soft: '1' },
      { hard: 1, reason: 3 },
    ]) {
      assert.throws(
        () => toScoreResult(bad, 's', 'i'),
        { name: 'SkillOptError', reason: 'scorer' },
        JSON.stringify(bad),
      );
    }
  });
});
