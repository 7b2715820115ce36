import assert from 'node:assert/strict';
import { DecisionStore, type MementoLike } from '../../../src/extension/review/decisionStore';

class Memory implements MementoLike {
  private readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, JSON.parse(JSON.stringify(value)));
    return Promise.resolve();
  }
}

describe('review decisions remembered for the Gate History', () => {
  it('puts a step back as it was when the run refused the decision (it answered a question no longer asked)', async () => {
    const store = new DecisionStore(new Memory());
    const heard: string[] = [];
    store.onDidChange((run) => heard.push(run));
    await store.record('/runs/a', 'step', {
      runId: '/runs/a',
      step: 1,
      decisions: [{ editId: 'e-1', accept: true }],
      candidate: 'accept',
    });
    const prior = store.stepOf('/runs/a', 'step', 1);
    const untouched = store.stepOf('/runs/a', 'step', 2);
    assert.equal(untouched, undefined);
    await store.record('/runs/a', 'step', {
      runId: '/runs/a',
      step: 1,
      questionId: 'q-old',
      decisions: [{ editId: 'e-1', accept: false, reason: 'stale' }],
      candidate: 'reject',
    });
    await store.record('/runs/a', 'step', {
      runId: '/runs/a',
      step: 2,
      questionId: 'q-old-2',
      decisions: [{ editId: 'e-2', accept: false }],
    });
    await store.restore('/runs/a', 'step', 1, prior);
    await store.restore('/runs/a', 'step', 2, untouched);
    assert.deepEqual(store.forRun('/runs/a'), {
      'step:1': { edits: { 'e-1': { accept: true } }, candidate: 'accept' },
    });
    assert.deepEqual(heard, ['/runs/a', '/runs/a', '/runs/a', '/runs/a', '/runs/a'], 'every view redraws');
  });
});
