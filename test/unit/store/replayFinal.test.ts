import assert from 'node:assert/strict';
import { eventsFromRunFolder } from '../../../src/engine/store/runReader';
import type { EngineEvent } from '../../../src/protocol/events';
import { prepareSim, runSim, tempDir } from '../train/helpers';

const finals = (events: EngineEvent[]): EngineEvent[] =>
  events.filter((e) => e.type === 'gate/verdict' && e.origin === 'final');

describe('the final check read back from a run folder', function () {
  this.timeout(120_000);

  it('gives the same final verdict as the live run', async () => {
    const dir = tempDir('skillopt-final-');
    try {
      // Without the gate every candidate is kept, so the last skill is rarely the best: the final check runs.
      const run = await runSim(prepareSim(dir.path, ['evaluation.use_gate=false', 'train.num_epochs=2']));
      const live = finals(run.events);
      assert.equal(live.length, 1, 'the run made no final check');
      assert.deepEqual(finals(eventsFromRunFolder(dir.path)), live);
      // Announced where the live run announces it: after the last epoch, before the run finishes.
      const types = eventsFromRunFolder(dir.path).map((e) => e.type);
      const at = types.findIndex((t, i) => t === 'gate/verdict' && i > types.lastIndexOf('epoch/finished'));
      assert.ok(at > types.lastIndexOf('epoch/finished') && at < types.indexOf('run/finished'));
    } finally {
      dir.cleanup();
    }
  });
});
