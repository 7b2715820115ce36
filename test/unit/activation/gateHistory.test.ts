import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunFolder } from '../../../src/engine/store/runReader';
import { buildGateHistory, LiveRun, type HistoryInput } from '../../../src/extension/webview/historyData';
import type { EngineEvent } from '../../../src/protocol/events';
import type { ActivationRecord } from '../../../src/protocol/records';
import { prepareSim, runSim, tempDir } from '../train/helpers';

/** Gate History shows the activation track from the run folder and from a live run's events alike. */
describe('activation: Gate History data (simulated run)', function () {
  this.timeout(120_000);
  const tmp = tempDir('skillopt-act-history-');
  const out = join(tmp.path, 'run');
  let events: EngineEvent[] = [];

  before(async () => {
    const file = join(__dirname, '..', '..', '..', 'examples', 'house-style', 'triggers.json');
    events = (await runSim(prepareSim(out, ['activation.enabled=true', `activation.trigger_file=${file}`])))
      .events;
  });
  after(() => tmp.cleanup());

  const input = (live: LiveRun | undefined, run = readRunFolder(out)): HistoryInput => ({
    runId: out,
    run,
    live,
    decisions: {},
    stepEdits: () => [],
    stepHasCandidate: () => false,
    epochEnds: () => [],
    overrules: () => [],
  });

  it('reads activation_history.json, one row per epoch, and the same rows from the live events', () => {
    const saved = JSON.parse(
      readFileSync(join(out, 'activation_history.json'), 'utf8'),
    ) as ActivationRecord[];
    assert.equal(saved.length, 2);
    assert.deepEqual(buildGateHistory(input(undefined)).activation, saved);
    const live = new LiveRun();
    for (const e of events) live.apply(e);
    const { activation: _a, ...withoutActivation } = readRunFolder(out);
    assert.deepEqual(buildGateHistory(input(live, withoutActivation)).activation, saved);
  });

  it('leaves the field out for a run without the track', () => {
    const { activation: _a, ...run } = readRunFolder(out);
    assert.equal(buildGateHistory(input(undefined, run)).activation, undefined);
  });
});
