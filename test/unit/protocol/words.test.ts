import assert from 'node:assert/strict';
import { actionLabel, originLabel } from '../../../src/protocol/words';

describe('plain words for engine terms', () => {
  it('names every origin the engine writes, and passes an unknown one through readably', () => {
    const cases: [string, string][] = [
      ['initial_skill', 'the initial skill'],
      ['step_0003', 'step 3'],
      ['human_step_0004', 'your review of step 4'],
      ['human_revert_step_0012', 'your revert of step 12'],
      ['slow_update_epoch_02', 'the epoch 2 slow update'],
      [
        'slow_update_placeholder_epoch_01',
        'the epoch 1 slow update (an empty block, not yet filled by a later slow update)',
      ],
      ['meta_reflect_epoch_03', 'the epoch 3 meta reflection'],
      ['final_check', 'final check'],
    ];
    for (const [origin, label] of cases) assert.equal(originLabel(origin), label, origin);
  });

  it('labels epoch-end and gate actions without underscores', () => {
    assert.equal(actionLabel('skip_no_patches'), 'skipped: no edits proposed');
    assert.equal(actionLabel('skip_first_epoch'), 'not run after the first epoch');
    assert.equal(actionLabel('some_new_action'), 'some new action');
  });
});
