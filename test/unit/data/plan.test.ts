import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTrainBatch, planTrainEpoch, stepsPerEpoch } from '../../../src/engine/data/plan';
import type { TaskItem } from '../../../src/engine/data/tasks';

const task = (id: string): TaskItem => ({ id, input: `question ${id}`, answers: ['x'], fields: { id } });
const train40 = Array.from({ length: 40 }, (_, i) => task(`q${String(i).padStart(2, '0')}`));

// Golden orders from CPython 3.11: random.Random(42 + epoch*1000).shuffle(ids).
const epoch1Order = [
  'q06', 'q33', 'q04', 'q23', 'q01', 'q34', 'q14', 'q32', 'q12', 'q36', 'q37', 'q07', 'q38', 'q17', 'q35', 'q13',
  'q30', 'q11', 'q02', 'q00', 'q08', 'q27', 'q16', 'q26', 'q20', 'q10', 'q29', 'q28', 'q39', 'q05', 'q24', 'q18',
  'q25', 'q31', 'q19', 'q21', 'q03', 'q22', 'q09', 'q15',
]; // prettier-ignore
const epoch2Order = [
  'q10', 'q03', 'q20', 'q34', 'q12', 'q05', 'q27', 'q17', 'q18', 'q33', 'q25', 'q36', 'q31', 'q01', 'q23', 'q04',
  'q35', 'q13', 'q08', 'q30', 'q11', 'q39', 'q16', 'q37', 'q24', 'q15', 'q07', 'q02', 'q29', 'q22', 'q28', 'q00',
  'q26', 'q06', 'q19', 'q09', 'q32', 'q14', 'q38', 'q21',
]; // prettier-ignore

describe('epoch plan', () => {
  it('epoch 1 of a 40-item split with seed 42 is one batch in the Python order with batch seed 1043', () => {
    const plan = planTrainEpoch(train40, { seed: 42, epoch: 1, batchSize: 40 });
    assert.equal(plan.length, 1);
    assert.equal(plan[0].seed, 1043);
    assert.equal(plan[0].batchIdx, 0);
    assert.equal(plan[0].refilled, false);
    assert.deepEqual(
      plan[0].items.map((i) => i.id),
      epoch1Order,
    );
  });

  it('agrees with the batch seeds in the reference run fixture', () => {
    const history = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'fixtures', 'skillopt-python-run', 'history.json'), 'utf8'),
    ) as Array<{ epoch: number; accumulation_batches: Array<{ batch_seed: number; n_envs: number }> }>;
    for (const record of history) {
      const plan = planTrainEpoch(train40, { seed: 42, epoch: record.epoch, batchSize: 40 });
      assert.deepEqual(
        plan.map((b) => [b.seed, b.items.length]),
        record.accumulation_batches.map((b) => [b.batch_seed, b.n_envs]),
      );
    }
  });

  it('epoch 2 uses a new order and cuts consecutive batches (the last one short)', () => {
    const plan = planTrainEpoch(train40, { seed: 42, epoch: 2, batchSize: 12 });
    assert.deepEqual(
      plan.map((b) => [b.batchIdx, b.seed, b.items.length]),
      [
        [0, 2043, 12],
        [1, 2044, 12],
        [2, 2045, 12],
        [3, 2046, 4],
      ],
    );
    assert.deepEqual(
      plan.flatMap((b) => b.items.map((i) => i.id)),
      epoch2Order,
    );
  });

  it('refills a trailing empty micro-batch from a reshuffle seeded by its batch seed', () => {
    const five = ['t0', 't1', 't2', 't3', 't4'].map(task);
    const plan = planTrainEpoch(five, { seed: 42, epoch: 1, batchSize: 4, accumulation: 3 });
    // Golden from the reference plan_train_epoch under CPython.
    assert.deepEqual(
      plan.map((b) => ({ seed: b.seed, ids: b.items.map((i) => i.id), refilled: b.refilled })),
      [
        { seed: 1043, ids: ['t2', 't0', 't3', 't4'], refilled: false },
        { seed: 1044, ids: ['t1'], refilled: false },
        { seed: 1045, ids: ['t1', 't3', 't0', 't4'], refilled: true },
      ],
    );
  });

  it('short last batch with epoch 0 and seed 7 (golden)', () => {
    const ten = Array.from({ length: 10 }, (_, i) => task(`t${i}`));
    const plan = planTrainEpoch(ten, { seed: 7, epoch: 0, batchSize: 4, stepsPerEpoch: 2 });
    assert.deepEqual(
      plan.map((b) => [b.seed, b.items.map((i) => i.id)]),
      [
        [8, ['t8', 't3', 't1', 't4']],
        [9, ['t7', 't0', 't9', 't6']],
      ],
    );
  });

  it('counts steps per epoch with ceil and validates sizes', () => {
    assert.equal(stepsPerEpoch(40, 40, 1), 1);
    assert.equal(stepsPerEpoch(41, 40, 1), 2);
    assert.equal(stepsPerEpoch(400, 40, 3), 4);
    assert.equal(stepsPerEpoch(5, 4, 3), 1);
    assert.throws(() => stepsPerEpoch(10, 0), { name: 'SkillOptError', reason: 'config' });
    assert.throws(
      () => planTrainEpoch(train40, { seed: 1, epoch: 1, batchSize: 4, accumulation: 1.5 }),
      /accumulation/,
    );
  });

  it('buildTrainBatch shuffles with Random(seed) and takes the first n (slow-update sampling)', () => {
    const sample = buildTrainBatch(train40, 20, 42 + 1 * 2000);
    assert.deepEqual(
      sample.map((i) => i.id),
      epoch2Order.slice(0, 20),
    );
    assert.equal(buildTrainBatch(train40, 100, 5).length, 40);
    assert.equal(train40[0].id, 'q00', 'the input is not reordered');
  });
});
