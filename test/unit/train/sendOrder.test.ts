import assert from 'node:assert/strict';
import type { Scorer } from '../../../src/engine/scoring/scorers';
import { rollout } from '../../../src/engine/train/rollout';
import { fakeTarget, tempDir } from './helpers';

describe('rollout send order', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('skillopt-send-order-');
  });
  afterEach(() => tmp.cleanup());

  it('sends items in the order asked (unnamed ones last) and returns them in item order', async () => {
    const target = fakeTarget('<answer>yes</answer>');
    const scorer: Scorer = { name: 'yes', score: () => Promise.resolve({ hard: 1, soft: 1, reason: 'ok' }) };
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const results = await rollout({
      items: ids.map((id) => ({ id, input: `task ${id}`, answers: ['yes'], fields: {} })),
      skill: '# skill',
      dir: tmp.path,
      client: target,
      scorer,
      stage: 'rollout',
      answerTag: 'answer',
      signal: new AbortController().signal,
      sendOrder: ['d', 'b', 'e'],
    });
    assert.deepEqual(
      target.requests.map((r) => r.task?.taskId),
      ['d', 'b', 'e', 'a', 'c'],
    );
    assert.deepEqual(
      results.map((r) => r.id),
      ids,
    );
  });
});
