import assert from 'node:assert/strict';
import { canonicalJson } from '../../../src/engine/llm/cache';
import { CallLog, comparableHistory, prepareSim, runSim, tempDir, type CallRecord } from './helpers';

/**
 * evaluation.repeats across a stop: each repeat is kept in its own folder, so a run stopped inside
 * a repeat, or inside the paired gate's second look (on_inconclusive: more_repeats), pays on resume
 * only for the samples it had not received, and decides as an uninterrupted run does.
 */
const overrides = [
  'evaluation.repeats=2',
  'evaluation.gate_test=paired',
  'evaluation.on_inconclusive=more_repeats',
  'evaluation.max_repeats=3',
];

/** A call's identity with its repeat and seed (the helpers' request key leaves them out). */
const sampleKey = (c: CallRecord): string =>
  canonicalJson({ key: c.key, repeat: c.request.repeat ?? 0, seed: c.request.seed ?? null });

function paidSamples(...logs: CallLog[]): Array<[string, number]> {
  const out = new Map<string, number>();
  for (const log of logs) for (const c of log.paid()) out.set(sampleKey(c), (out.get(sampleKey(c)) ?? 0) + 1);
  return [...out.entries()].sort(([a], [b]) => a.localeCompare(b));
}

const step2Selection = (c: CallRecord): boolean =>
  c.step === 2 && c.stage === 'selection' && c.phase === 'evaluate';

describe('kill and resume with repeated selection samples', function () {
  this.timeout(180_000);
  let ref: CallLog;
  let refDir: ReturnType<typeof tempDir>;
  let reference: ReturnType<typeof comparableHistory>;

  before(async () => {
    refDir = tempDir('skillopt-repeats-ref-');
    const prepared = prepareSim(refDir.path, overrides);
    ref = new CallLog(prepared);
    assert.equal((await runSim(prepared, undefined, ref)).outcome.status, 'finished');
    reference = comparableHistory(refDir.path);
    // Step 2's first look (two repeats) is inconclusive on the example: a second look at three follows.
    const step2 = reference.find((r) => r.step === 2);
    assert.equal(step2?.gate_test?.repeats, 3, JSON.stringify(step2?.gate_test));
  });
  after(() => refDir.cleanup());

  async function stopAndResume(after: number): Promise<void> {
    const dir = tempDir('skillopt-repeats-resume-');
    try {
      const p1 = prepareSim(dir.path, overrides);
      const log1 = new CallLog(p1, {
        serialize: step2Selection,
        stopAfterReply: (c, log) =>
          step2Selection(c) && log.calls.filter((x) => step2Selection(x) && x.answered).length >= after,
      });
      assert.equal((await runSim(p1, undefined, log1)).outcome.status, 'stopped');
      const total = ref.calls.filter(step2Selection).length;
      assert.ok(total > after, `step 2's gate makes only ${total} selection calls`);
      const p2 = prepareSim(dir.path, overrides);
      const log2 = new CallLog(p2);
      assert.equal((await runSim(p2, undefined, log2)).outcome.status, 'finished');
      assert.deepEqual(comparableHistory(dir.path), reference);
      // What the stopped run received is not asked for again, in any repeat.
      assert.equal(log2.calls.filter(step2Selection).length, total - after);
      assert.deepEqual(paidSamples(log1, log2), paidSamples(ref), 'every sample paid once, as one run pays');
    } finally {
      dir.cleanup();
    }
  }

  it('stopped inside the second repeat of a selection evaluation', () => stopAndResume(25));

  it('stopped inside the paired gate’s second look (more repeats of both skills)', () => stopAndResume(60));
});
