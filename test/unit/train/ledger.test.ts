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

/** The baseline runs beside step 1's rollouts: its calls stay the baseline's in the ledger. */
describe('ledger attribution of overlapping work', function () {
  this.timeout(60_000);
  it("counts the baseline's selection calls under the baseline, not under step 1", async () => {
    const dir = tempDir('skillopt-overlap-');
    try {
      process.env.SKILLOPT_SIM_LATENCY_MS = '5';
      const run = await runSim(prepareSim(dir.path));
      assert.equal(run.outcome.status, 'finished');
      const rows = read(dir.path, 'ledger.jsonl')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { step: number; phase: string; stage: string; calls?: number });
      const baseline = rows.filter((r) => r.phase === 'baseline');
      assert.ok(baseline.length > 0 && baseline.every((r) => r.step === 0 && r.stage === 'selection'));
      // Step 1 paid its rollouts and its own gate; the baseline's items are not among them.
      const step1Selection = rows
        .filter((r) => r.phase === 'step' && r.step === 1 && r.stage === 'selection')
        .reduce((n, r) => n + (r.calls ?? 0), 0);
      const baselineCalls = baseline.reduce((n, r) => n + (r.calls ?? 0), 0);
      assert.ok(step1Selection <= baselineCalls, `step 1 paid ${step1Selection} selection calls`);
    } finally {
      delete process.env.SKILLOPT_SIM_LATENCY_MS;
      dir.cleanup();
    }
  });
});
