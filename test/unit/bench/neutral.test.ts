import assert from 'node:assert/strict';
import { analyzeRun, wavesIn, windowsOf } from '../../../bench/neutral/analyze';
import { parseRunArgs } from '../../../bench/args';
import { neutralVariants, summarize, type NeutralRep } from '../../../bench/neutral/run';

describe('neutral workload analysis (issue 15)', () => {
  const events = [
    { at: 100, e: { type: 'stage/started', step: 1, stage: 'rollout' } },
    { at: 450, e: { type: 'stage/finished', step: 1, stage: 'rollout' } },
    { at: 452, e: { type: 'stage/started', step: 1, stage: 'reflect' } },
    { at: 800, e: { type: 'stage/finished', step: 1, stage: 'reflect' } },
  ];
  const requests = [
    { kind: 'target:train', arrivedAt: 110, repliedAt: 410, bytesIn: 10 },
    { kind: 'target:train', arrivedAt: 130, repliedAt: 430, bytesIn: 10 },
    // Started during the rollout, still running when the reflect stage starts.
    { kind: 'analyst', arrivedAt: 420, repliedAt: 720, bytesIn: 5 },
    { kind: 'analyst', arrivedAt: 460, repliedAt: 760, bytesIn: 5 },
  ];

  it('pairs stage events into windows', () => {
    assert.deepEqual(windowsOf(events), [
      { step: 1, stage: 'rollout', startAt: 100, endAt: 450 },
      { step: 1, stage: 'reflect', startAt: 452, endAt: 800 },
    ]);
  });

  it('measures leads, tails, steps and the first request from launch', () => {
    const run = analyzeRun({
      launchedAt: 0,
      exitedAt: 900,
      windows: windowsOf(events),
      requests,
      latencyMs: 100,
      boundWaves: 6,
      stepWaves: 6,
    });
    assert.equal(run.firstRequestMs, 110);
    assert.equal(run.ratio, 1.5);
    // Two waves at 100 ms per call: the rollout's two requests, then the analysts (pauses ≥ 50 ms).
    assert.deepEqual(run.steps, [{ step: 1, wallMs: 700, ratio: 700 / 600, waves: 2, ownRatio: 700 / 200 }]);
    assert.deepEqual(run.edges, [
      { stage: 'rollout', step: 1, leadMs: 10, tailMs: 20, requests: 2 },
      // The analyst already in flight is no lead; the later one is 8 ms after the start.
      { stage: 'reflect', step: 1, leadMs: 8, tailMs: 40, requests: 2 },
    ]);
    assert.deepEqual(run.calls, { 'target:train': 2, analyst: 2 });
    assert.equal(run.requestBytes, 30);
  });

  it('counts the waves a step sent: bursts of arrivals apart by half the latency or more', () => {
    const at = (ms: number) => ({ kind: 'x', arrivedAt: ms, repliedAt: ms + 300, bytesIn: 0 });
    const burst = (from: number, n: number) => Array.from({ length: n }, (_, i) => at(from + i * 2));
    const reqs = [...burst(0, 40), ...burst(310, 6), ...burst(615, 2), ...burst(920, 1), at(1060), at(2000)];
    assert.equal(wavesIn(reqs, 0, 1500, 300), 4);
    assert.equal(wavesIn(reqs, 300, 1500, 300), 3, 'only arrivals inside the window');
    assert.equal(wavesIn([], 0, 1500, 300), 0);
  });

  it('summarizes finished reps only, leads and tails summed per stage', () => {
    const rep = (n: number, wallMs: number, exitCode: number): NeutralRep => ({
      rep: n,
      exitCode,
      load: 1,
      wallMs,
      firstRequestMs: 100,
      ratio: wallMs / 4500,
      steps: [{ step: 1, wallMs: 1800, ratio: 1, waves: 6, ownRatio: 1 }],
      edges: [
        { stage: 'rollout', step: 1, leadMs: 5, tailMs: 1, requests: 40 },
        { stage: 'rollout', step: 2, leadMs: 7, tailMs: 2, requests: 40 },
      ],
      calls: {},
      requestBytes: 0,
    });
    const s = summarize('default', 300, [rep(1, 5000, 0), rep(2, 9000, 1), rep(3, 6000, 0)]);
    assert.deepEqual(s.wallMs, { min: 5000, median: 5500, max: 6000, n: 2 });
    assert.deepEqual(s.edges, [
      {
        stage: 'rollout',
        leadMs: { min: 12, median: 12, max: 12, n: 2 },
        tailMs: { min: 3, median: 3, max: 3, n: 2 },
        windows: 2,
      },
    ]);
  });

  it('runs the variants --variants names, and refuses an unknown one', () => {
    assert.deepEqual(
      neutralVariants(parseRunArgs(['--variants', 'default, batch20+speculate']).variants).map((v) => v.name),
      ['default', 'batch20+speculate'],
    );
    assert.equal(neutralVariants(undefined).length, 4);
    assert.throws(() => neutralVariants(['fast']), /unknown variant "fast"/);
    assert.equal(parseRunArgs(['--cli-root', '/tmp/main']).cliRoot, '/tmp/main');
  });
});
