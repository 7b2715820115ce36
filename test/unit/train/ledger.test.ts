import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Accounting } from '../../../src/engine/llm/accounting';
import { RunLedger } from '../../../src/engine/llm/ledger';
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
        .map(
          (l) =>
            JSON.parse(l) as { kind: string; step: number; phase: string; stage: string; calls?: number },
        )
        .filter((r) => r.kind !== 'session');
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

/** The time cap counts the wall time each process of the run really ran, not only its paid calls. */
describe('ledger: wall time of earlier processes', () => {
  const KEY = { stage: 'rollout', role: 'target', provider: 'command', model: 'agent' } as const;
  const paid = (a: Accounting): void =>
    a.recordCall(KEY, { promptTokens: 10, completionTokens: 1, seconds: 1, attempts: 1 });

  it('counts from each process start to its end, the minutes before its first reply and after its last included', async () => {
    const dir = tempDir('skillopt-ledger-time-');
    try {
      const file = join(dir.path, 'ledger.jsonl');
      let now = 1_700_000_000_000;
      const clock = (): number => now;
      // First process: a minute before its agent's first reply, two after its last.
      const first = new Accounting();
      const detach = new RunLedger(file, { now: clock }).attach(first);
      now += 60_000;
      paid(first);
      now += 120_000;
      detach();
      // Second process: started, one paid call, then crashed (no end): its last heartbeat counts.
      now += 3_600_000;
      const second = new Accounting();
      const stopBeats = new RunLedger(file, { now: clock, heartbeatMs: 1 }).attach(second);
      now += 30_000;
      paid(second);
      now += 45_000;
      await new Promise((resolve) => setTimeout(resolve, 20));
      const resumed = new RunLedger(file, { now: clock });
      stopBeats();
      // 180 s of the first process, 75 s of the second up to its last heartbeat; never the hour between.
      assert.equal(resumed.priorSeconds(), 255);
      // Session rows are not spend.
      const merged = new Accounting();
      resumed.attach(merged)();
      assert.deepEqual([merged.totals().calls, merged.totals().promptTokens], [2, 20]);
    } finally {
      dir.cleanup();
    }
  });
});
