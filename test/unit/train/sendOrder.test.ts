import assert from 'node:assert/strict';
import type { ModelClient } from '../../../src/engine/llm/types';
import type { Scorer } from '../../../src/engine/scoring/scorers';
import { rollout } from '../../../src/engine/train/rollout';
import { tempDir } from './helpers';

describe('rollout send order', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('skillopt-send-order-');
  });
  afterEach(() => tmp.cleanup());

  it('sends items in the order asked (unnamed ones last) and returns them in item order', async () => {
    const sent: string[] = [];
    const target: ModelClient = {
      role: 'target',
      backend: 'fake',
      model: 'fake',
      chat: (req) => {
        sent.push(String(req.task?.taskId));
        return Promise.resolve({
          text: '<answer>yes</answer>',
          usage: { promptTokens: 1, completionTokens: 1 },
          backend: 'fake',
          model: 'fake',
          seconds: 0,
          attempts: 1,
          cached: false,
        });
      },
    };
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
    assert.deepEqual(sent, ['d', 'b', 'e', 'a', 'c']);
    assert.deepEqual(
      results.map((r) => r.id),
      ids,
    );
  });
});
