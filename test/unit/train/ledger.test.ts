import assert from 'node:assert/strict';
import { read, prepareSim, runSim, tempDir } from './helpers';

const ledgerCalls = (dir: string): number =>
  read(dir, 'ledger.jsonl')
    .split('\n')
    .filter(Boolean)
    .reduce((n, l) => n + ((JSON.parse(l) as { calls?: number }).calls ?? 0), 0);

/** Caps are per run, not per process: the ledger carries what earlier processes paid. */
describe('spend caps across resume', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-caps-');
  });
  afterEach(() => dir.cleanup());

  it('a run stopped by its token cap stays stopped when resumed, spending nothing, until the cap is raised', async () => {
    const cap = ['limits.max_tokens=20000'];
    const first = await runSim(prepareSim(dir.path, cap));
    assert.equal(first.outcome.status, 'stopped');
    assert.match(first.outcome.reason ?? '', /token budget of 20000 reached/);
    const paid = ledgerCalls(dir.path);
    assert.ok(paid > 0);

    const again = await runSim(prepareSim(dir.path, cap));
    assert.equal(again.outcome.status, 'stopped', 'the resumed run ignored what the first process spent');
    assert.match(again.outcome.reason ?? '', /token budget of 20000 reached \(\d+ used\)/);
    assert.equal(ledgerCalls(dir.path), paid, 'the resumed run paid for calls beyond its cap');

    const raised = await runSim(prepareSim(dir.path, ['limits.max_tokens=0']));
    assert.equal(raised.outcome.status, 'finished');
    assert.ok(ledgerCalls(dir.path) > paid);
  });

  it('the wall-time cap counts the time earlier processes spent', async () => {
    // A slow first process, stopped mid-run; its time counts against the resumed run's cap.
    process.env.SKILLOPT_SIM_LATENCY_MS = '20';
    try {
      const first = await runSim(
        prepareSim(dir.path),
        (e, all) => e.type === 'step/finished' && all.filter((x) => x.type === 'step/finished').length >= 2,
      );
      assert.equal(first.outcome.status, 'stopped');
    } finally {
      delete process.env.SKILLOPT_SIM_LATENCY_MS;
    }
    const paid = ledgerCalls(dir.path);
    const again = await runSim(prepareSim(dir.path, ['limits.max_wall_time_s=0.05']));
    assert.equal(again.outcome.status, 'stopped');
    assert.match(again.outcome.reason ?? '', /time/);
    assert.equal(ledgerCalls(dir.path), paid, 'the resumed run spent before noticing its time was up');
  });
});
