import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import {
  EditBudgetScheduler,
  editBudgetAt,
  roundHalfEven,
  type EditBudgetKind,
} from '../../../src/engine/optimizer/schedule';

function sequence(
  kind: EditBudgetKind,
  totalSteps: number,
  maxLr?: number,
  minLr?: number,
  steps = totalSteps,
): number[] {
  const s = new EditBudgetScheduler({ kind, totalSteps, maxLr, minLr });
  return Array.from({ length: steps }, () => s.step());
}

// Golden values from the reference formulas evaluated with python3 (math.cos, round).
describe('edit-budget schedules', () => {
  it('rounds halves to even like Python', () => {
    assert.deepEqual(
      [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 2.4999999999999996, 2.5000000000000004].map(roundHalfEven),
      [0, 2, 2, 4, 0, -2, -2, 2, 3],
    );
    assert.equal(roundHalfEven(3), 3);
    assert.equal(roundHalfEven(2.6), 3);
    assert.ok(Number.isNaN(roundHalfEven(NaN)));
  });

  it('matches the reference sequences for total 4', () => {
    assert.deepEqual(sequence('cosine', 4), [4, 3, 2, 2]);
    assert.deepEqual(sequence('linear', 4), [4, 3, 2, 2]);
  });

  it('matches the reference sequences for total 8, with banker rounding at steps 2 and 6', () => {
    assert.deepEqual(sequence('cosine', 8), [4, 4, 3, 3, 3, 2, 2, 2]);
    assert.deepEqual(sequence('linear', 8), [4, 4, 3, 3, 3, 2, 2, 2]);
    // 3.5 → 4 and 2.5 → 2; Math.round would give 4 and 3.
    assert.equal(editBudgetAt('linear', 2, 4, 2, 8), 4);
    assert.equal(editBudgetAt('linear', 6, 4, 2, 8), 2);
  });

  it('matches the reference sequences for total 12', () => {
    assert.deepEqual(sequence('cosine', 12), [4, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2]);
    assert.deepEqual(sequence('linear', 12), [4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2]);
  });

  it('gives 13×4, 13×3, 14×2 for cosine over 40 steps', () => {
    const expected = [
      ...Array<number>(13).fill(4),
      ...Array<number>(13).fill(3),
      ...Array<number>(14).fill(2),
    ];
    assert.deepEqual(sequence('cosine', 40), expected);
  });

  it('matches python for other totals and ranges', () => {
    assert.deepEqual(sequence('cosine', 2), [3, 2]);
    assert.deepEqual(sequence('cosine', 3), [4, 2, 2]);
    assert.deepEqual(sequence('linear', 3), [3, 3, 2]);
    assert.deepEqual(sequence('cosine', 5), [4, 3, 3, 2, 2]);
    assert.deepEqual(sequence('cosine', 10, 8, 1), [8, 7, 7, 6, 4, 3, 2, 2, 1, 1]);
    assert.deepEqual(sequence('linear', 10, 8, 1), [7, 7, 6, 5, 4, 4, 3, 2, 2, 1]);
    assert.deepEqual(sequence('cosine', 7, 5, 0), [5, 4, 3, 2, 1, 0, 0]);
    assert.deepEqual(sequence('linear', 6, 5, 0), [4, 3, 2, 2, 1, 0]);
  });

  it('stays at the minimum past the last step', () => {
    assert.deepEqual(sequence('cosine', 4, undefined, undefined, 7), [4, 3, 2, 2, 2, 2, 2]);
  });

  it('returns max for totals of 1 or less, and for constant', () => {
    assert.deepEqual(sequence('cosine', 1, undefined, undefined, 3), [4, 4, 4]);
    assert.deepEqual(sequence('linear', 0, undefined, undefined, 2), [4, 4]);
    assert.deepEqual(sequence('constant', 8, 6), [6, 6, 6, 6, 6, 6, 6, 6]);
  });

  it('gives 999 for autonomous', () => {
    assert.deepEqual(sequence('autonomous', 4), [999, 999, 999, 999]);
  });

  it('defaults to cosine with max 4 and min 2', () => {
    const s = new EditBudgetScheduler({ totalSteps: 8 });
    assert.equal(s.kind, 'cosine');
    assert.equal(s.maxLr, 4);
    assert.equal(s.minLr, 2);
  });

  it('continues exactly after restore', () => {
    const fresh = sequence('cosine', 12);
    const first = new EditBudgetScheduler({ kind: 'cosine', totalSteps: 12 });
    for (let i = 0; i < 5; i++) first.step();
    assert.equal(first.position, 5);
    const resumed = new EditBudgetScheduler({ kind: 'cosine', totalSteps: 12 });
    resumed.restore(first.position);
    const rest = Array.from({ length: 7 }, () => resumed.step());
    assert.deepEqual(rest, fresh.slice(5));
    assert.equal(resumed.position, 12);
  });

  it('refuses a bad position and an unknown schedule', () => {
    const s = new EditBudgetScheduler({ totalSteps: 4 });
    assert.throws(
      () => s.restore(-1),
      (e: unknown) => SkillOptError.is(e, 'io'),
    );
    assert.throws(() => s.restore(1.5), /not a whole number/);
    assert.throws(
      () => new EditBudgetScheduler({ kind: 'step' as EditBudgetKind, totalSteps: 4 }),
      (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'optimizer.lr_scheduler',
    );
  });
});
