/** Stages that run side by side: the stage a live run shows is one still under way. */
import assert from 'node:assert/strict';
import type { EngineEvent } from '../../../src/protocol/events';
import type { StageName } from '../../../src/protocol/vocabulary';
import { started } from './events';
import { applyEvent, type LiveState } from '../../../src/extension/runs/liveState';

function fold(events: EngineEvent[]): LiveState {
  let s: LiveState | undefined;
  events.forEach((e, i) => (s = applyEvent(s, i, e)));
  return s!;
}

const begin = (stage: StageName, step: number, epoch = 1): EngineEvent => ({
  type: 'stage/started',
  step,
  epoch,
  stage,
});
const end = (stage: StageName, step: number, epoch = 1): EngineEvent => ({
  type: 'stage/finished',
  step,
  epoch,
  stage,
  seconds: 1,
});

describe('live run: stages side by side', () => {
  it('shows the slow update again once the meta skill beside it has finished', () => {
    const s = fold([started, begin('slow_update', 4, 2), begin('meta_skill', 4, 2), end('meta_skill', 4, 2)]);
    assert.equal(s.stage, 'slow_update');
    assert.deepEqual(s.openStages, [{ stage: 'slow_update', step: 4 }]);
  });

  it('shows the baseline while it runs on after step 1 rollout, and the newest stage otherwise', () => {
    const s = fold([started, begin('baseline', 1), begin('rollout', 1), end('rollout', 1)]);
    assert.equal(s.stage, 'baseline');
    const later = fold([started, begin('baseline', 1), begin('rollout', 1), end('baseline', 1)]);
    assert.equal(later.stage, 'rollout');
    // The last stage to finish stays shown until the next one starts.
    const after = fold([started, begin('rollout', 1), end('rollout', 1)]);
    assert.equal(after.stage, 'rollout');
    assert.deepEqual(after.openStages, []);
  });
});
