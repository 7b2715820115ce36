import assert from 'node:assert/strict';
import { checkSameConfig } from '../../../src/engine/train/sameRun';

describe('train/sameRun: resuming under the config a run was started with', () => {
  it('takes a value stored masked by an older run (minimax_max_tokens "***") as unchanged', () => {
    const saved = { minimax_max_tokens: '***', qwen_chat_max_tokens: '4096', learning_rate: 4 };
    const now = { minimax_max_tokens: '8000', qwen_chat_max_tokens: '4096', learning_rate: 4 };
    assert.deepEqual(checkSameConfig('/run', saved, now), []);
  });

  it('still refuses a change of a value stored in clear, naming it', () => {
    assert.throws(
      () => checkSameConfig('/run', { minimax_max_tokens: '8000' }, { minimax_max_tokens: '4000' }),
      /different config \(minimax_max_tokens: "8000" → "4000"\)/,
    );
  });
});
