import assert from 'node:assert/strict';
import { SkillOptError, splitFix } from '../../../src/engine/errors';
import { checkErrored } from '../../../src/engine/train/rollout';
import type { RolloutResult } from '../../../src/protocol/records';
import type { TargetErrorKind } from '../../../src/protocol/vocabulary';

const row = (id: string, kind?: TargetErrorKind, error?: string): RolloutResult =>
  ({
    id,
    hard: 0,
    soft: 0,
    task_description: 'q',
    predicted_answer: '',
    expected: ['a'],
    n_turns: 1,
    response: '',
    ...(kind ? { outcome: 'errored', error_kind: kind, error } : {}),
  }) as RolloutResult;

const messageOf = (rows: RolloutResult[]): string => {
  try {
    checkErrored(rows, 'a training batch', 0.5);
  } catch (err) {
    assert.ok(SkillOptError.is(err, 'target'));
    return err.message;
  }
  return assert.fail('the run was not stopped');
};

/** The stop for errored items says one "Fix:", and never one cause's fix for another's. */
describe('errored items: the stop message', () => {
  const authError = 'model.target_backend: Invalid API key. Fix: check ANTHROPIC_API_KEY.';

  it('takes the first error’s own fix when every errored item failed the same way', () => {
    const msg = messageOf([row('1', 'auth', authError), row('2', 'auth', authError), row('3')]);
    assert.equal(msg.split('Fix:').length, 2, msg);
    assert.match(
      msg,
      /First error: model\.target_backend: Invalid API key\. Fix: check ANTHROPIC_API_KEY, then resume the run/,
    );
  });

  it('keeps the first error’s fix in brackets when the causes differ, and offers none of its own', () => {
    const msg = messageOf([
      row('1', 'auth', authError),
      row('2', 'timeout', 'timed out after 120 s'),
      row('3', 'timeout', 'timed out'),
    ]);
    assert.equal(msg.split('Fix:').length, 2, msg);
    assert.match(
      msg,
      /Invalid API key \(fix: check ANTHROPIC_API_KEY\)\. Fix: fix the cause above and resume the run/,
    );
  });

  it('says "resume" once when the first error’s own fix already says it (a failing provider)', () => {
    const failing =
      'openai m: 500 boom after 6 attempts. Fix: the provider at http://h/v1 is failing; resume the run later.';
    const msg = messageOf([row('1', 'server', failing), row('2', 'server', failing), row('3')]);
    assert.equal(msg.split('resume').length, 2, msg);
    assert.match(
      msg,
      /Fix: the provider at http:\/\/h\/v1 is failing; resume the run later \(nothing answered so far is paid again; /,
    );
  });

  it('splits a message at its own fix, trimming the full stops', () => {
    assert.deepEqual(splitFix('a. Fix: b.'), { problem: 'a', fix: 'b' });
    assert.deepEqual(splitFix('no fix here.'), { problem: 'no fix here' });
    assert.deepEqual(splitFix('a. Fix: b.', true), { problem: 'a (fix: b)' });
  });
});
