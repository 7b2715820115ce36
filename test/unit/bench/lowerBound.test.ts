import assert from 'node:assert/strict';
import { isolatedBound, lowerBound, topologicalOrder, type Phase } from '../../../bench/lowerBound';

const repeat = (n: number, ms: number): number[] => Array.from({ length: n }, () => ms);
const caps = { optimizer: 16, target: 16 };

function phase(
  id: string,
  role: Phase['role'],
  durations: number[],
  after: string[] = [],
  streamsFrom?: string,
): Phase {
  return { id, stage: id, step: 1, role, durations, after, ...(streamsFrom ? { streamsFrom } : {}) };
}

describe('bench lower bound: one phase', () => {
  it('is waves × latency for equal calls', () => {
    assert.deepEqual(isolatedBound(repeat(40, 300), 16), { ms: 900, waves: 3 });
    assert.deepEqual(isolatedBound(repeat(16, 300), 16), { ms: 300, waves: 1 });
    assert.deepEqual(isolatedBound(repeat(17, 300), 16), { ms: 600, waves: 2 });
    assert.deepEqual(isolatedBound(repeat(3, 100), 16), { ms: 100, waves: 1 });
  });

  it('is zero for a phase without calls', () => {
    assert.deepEqual(isolatedBound([], 4), { ms: 0, waves: 0 });
  });

  it('uses the pigeonhole chain when durations differ, and it is the true optimum here', () => {
    // Two slots, five calls: the best split is {10, 9} and {8, 7, 6}, i.e. 21.
    assert.deepEqual(isolatedBound([10, 9, 8, 7, 6], 2), { ms: 21, waves: 3 });
    // One long call dominates everything else.
    assert.equal(isolatedBound([1000, 10, 10, 10], 2).ms, 1000);
  });

  it('never drops below the total work spread over the slots', () => {
    // Three calls of 100 on 2 slots: 150 of work per slot at best, but a slot must run two calls.
    assert.equal(isolatedBound([100, 100, 100], 2).ms, 200);
    assert.equal(isolatedBound([50, 50, 50, 50, 200], 4).ms, 200);
  });

  it('rejects a cap below one and negative durations', () => {
    assert.throws(() => isolatedBound([1], 0), /cap must be at least 1/);
    assert.throws(() => isolatedBound([-1], 2), /durations must be ≥ 0/);
  });
});

describe('bench lower bound: dependent phases', () => {
  it('adds up a chain and reports it as the critical path', () => {
    const r = lowerBound(
      [
        phase('rollout', 'target', repeat(40, 300)),
        phase('merge', 'optimizer', repeat(6, 100), ['rollout']),
        phase('gate', 'target', repeat(40, 300), ['merge']),
      ],
      caps,
    );
    assert.equal(r.totalMs, 1900);
    assert.deepEqual(r.criticalPath, ['rollout', 'merge', 'gate']);
    assert.deepEqual(
      r.phases.map((p) => [p.id, p.earliestStartMs, p.earliestFinishMs, p.limitedBy]),
      [
        ['rollout', 0, 900, 'chain'],
        ['merge', 900, 1000, 'chain'],
        ['gate', 1000, 1900, 'chain'],
      ],
    );
  });

  it('lets a streamed phase start at the first result but end after the last one', () => {
    const few = lowerBound(
      [
        phase('rollout', 'target', repeat(40, 300)),
        phase('reflect', 'optimizer', repeat(6, 100), [], 'rollout'),
      ],
      caps,
    );
    const reflect = few.phases.find((p) => p.id === 'reflect')!;
    assert.equal(reflect.earliestStartMs, 300);
    assert.equal(reflect.earliestFinishMs, 1000);
    assert.equal(reflect.limitedBy, 'stream');
    assert.deepEqual(few.criticalPath, ['rollout', 'reflect']);

    // So many analyst calls on two slots that the stream is not what limits them.
    const many = lowerBound(
      [
        phase('rollout', 'target', repeat(40, 300)),
        phase('reflect', 'optimizer', repeat(40, 100), [], 'rollout'),
      ],
      { optimizer: 2, target: 16 },
    );
    const r2 = many.phases.find((p) => p.id === 'reflect')!;
    assert.equal(r2.earliestFinishMs, 300 + 2000);
    assert.equal(r2.limitedBy, 'chain');
  });

  it('bounds concurrent phases on one cap by their combined work', () => {
    // Two 16-call phases at once on 16 slots take two waves, so the call after them ends at 900, not 600.
    const r = lowerBound(
      [
        phase('a', 'target', repeat(16, 300)),
        phase('b', 'target', repeat(16, 300)),
        phase('after', 'target', [300], ['a', 'b']),
      ],
      caps,
    );
    const after = r.phases.find((p) => p.id === 'after')!;
    assert.equal(after.earliestFinishMs, 900);
    assert.equal(after.limitedBy, 'shared-cap');
    assert.equal(r.totalMs, 900);
  });

  it('does not share a cap across roles', () => {
    const r = lowerBound(
      [
        phase('a', 'target', repeat(16, 300)),
        phase('b', 'optimizer', repeat(16, 300)),
        phase('after', 'target', [300], ['a', 'b']),
      ],
      caps,
    );
    assert.equal(r.totalMs, 600);
  });

  it('treats phases without calls as pass-through', () => {
    const r = lowerBound(
      [
        phase('a', 'target', [100]),
        phase('empty', 'optimizer', [], ['a']),
        phase('b', 'target', [100], ['empty']),
      ],
      caps,
    );
    assert.equal(r.totalMs, 200);
    assert.deepEqual(r.criticalPath, ['a', 'empty', 'b']);
  });

  it('refuses unknown dependencies, cycles and duplicate ids', () => {
    assert.throws(() => topologicalOrder([phase('a', 'target', [], ['ghost'])]), /unknown phase ghost/);
    assert.throws(
      () => topologicalOrder([phase('a', 'target', [], ['b']), phase('b', 'target', [], ['a'])]),
      /cycle/,
    );
    assert.throws(() => topologicalOrder([phase('a', 'target', []), phase('a', 'target', [])]), /duplicate/);
  });
});
