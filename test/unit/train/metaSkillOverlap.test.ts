import assert from 'node:assert/strict';
import { CallLog, comparableHistory, prepareSim, runSim, tempDir } from './helpers';

// Three epochs so epoch 2 writes a meta skill; the slow update gated, as the paper runs it.
const overrides = ['train.num_epochs=3'];

/** Epoch → settles when that epoch's meta-skill stage has finished. */
function epochSignals(): { wait(epoch: number): Promise<void>; fire(epoch: number): void } {
  const waits = new Map<number, { promise: Promise<void>; resolve: () => void }>();
  const get = (epoch: number): { promise: Promise<void>; resolve: () => void } => {
    let entry = waits.get(epoch);
    if (!entry) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      entry = { promise, resolve };
      waits.set(epoch, entry);
    }
    return entry;
  };
  return { wait: (epoch) => get(epoch).promise, fire: (epoch) => get(epoch).resolve() };
}

describe('epoch end: the meta skill beside the slow update', function () {
  this.timeout(120_000);

  it('asks for the meta skill while the slow update still waits for its guidance, and decides as before', async () => {
    const refDir = tempDir('skillopt-ref-');
    const dir = tempDir('skillopt-overlap-');
    try {
      const ref = prepareSim(refDir.path, overrides);
      assert.equal((await runSim(ref)).outcome.status, 'finished');

      // Every slow-update guidance call is held until the same epoch's meta skill has finished: if
      // the meta skill waited for the whole slow update, the run could never end.
      const metaDone = epochSignals();
      let slowEpoch = 0;
      const p = prepareSim(dir.path, overrides);
      const log = new CallLog(p, {
        hold: (c) => {
          if (c.stage !== 'slow_update') return undefined;
          const timeout = new Promise<void>((_, reject) =>
            setTimeout(
              () => reject(new Error(`the meta skill of epoch ${slowEpoch} waited for the slow update`)),
              20_000,
            ).unref(),
          );
          return Promise.race([metaDone.wait(slowEpoch), timeout]);
        },
      });
      const run = await runSim(
        p,
        (e) => {
          if (e.type === 'stage/started' && e.stage === 'slow_update') slowEpoch = e.epoch;
          if (e.type === 'stage/finished' && e.stage === 'meta_skill') metaDone.fire(e.epoch);
          return false;
        },
        log,
      );
      assert.equal(run.outcome.status, 'finished', JSON.stringify(run.outcome));
      assert.equal(log.paid({ stage: 'meta_skill' }).length, 1, 'epoch 2 writes the one meta skill');
      assert.ok(log.paid({ stage: 'slow_update' }).length >= 1);
      // The meta skill's stage starts and ends inside the slow update's.
      const at = (type: string, stage: string, epoch: number): number =>
        run.events.findIndex(
          (e) => e.type === type && 'stage' in e && e.stage === stage && 'epoch' in e && e.epoch === epoch,
        );
      assert.ok(at('stage/finished', 'meta_skill', 2) < at('stage/finished', 'slow_update', 2));
      // Running side by side changes no decision.
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(refDir.path));
    } finally {
      refDir.cleanup();
      dir.cleanup();
    }
  });
});
