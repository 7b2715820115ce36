import { SkillOptError } from '../errors';

export type EditBudgetKind = 'constant' | 'linear' | 'cosine' | 'autonomous';

export const EDIT_BUDGET_KINDS: readonly EditBudgetKind[] = ['constant', 'linear', 'cosine', 'autonomous'];

/** Budget of the `autonomous` schedule: large enough that ranking never truncates. */
export const UNLIMITED_EDIT_BUDGET = 999;

export interface EditBudgetOptions {
  /** Defaults to `cosine`, the reference default. */
  kind?: EditBudgetKind;
  /** `optimizer.learning_rate`, default 4. */
  maxLr?: number;
  /** `optimizer.min_learning_rate`, default 2. */
  minLr?: number;
  /** `num_epochs × steps_per_epoch`. */
  totalSteps: number;
}

/**
 * Python's `round()` for floats: halves go to the even neighbour (2.5 → 2, 3.5 → 4). `Math.round`
 * would give different edit budgets than the reference on exact halves.
 */
export function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const floor = Math.floor(x);
  // Exact for every double whose integer part fits in 53 bits.
  const diff = x - floor;
  if (diff < 0.5) return floor;
  if (diff > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** The edit budget at counter value `step` (1-based after the first `step()` call). */
export function editBudgetAt(
  kind: EditBudgetKind,
  step: number,
  maxLr: number,
  minLr: number,
  totalSteps: number,
): number {
  if (kind === 'autonomous') return UNLIMITED_EDIT_BUDGET;
  if (kind === 'constant' || totalSteps <= 1) return maxLr;
  const t = Math.min(step, totalSteps) / totalSteps;
  if (kind === 'linear') return Math.max(minLr, roundHalfEven(maxLr + (minLr - maxLr) * t));
  return Math.max(minLr, roundHalfEven(minLr + 0.5 * (maxLr - minLr) * (1 + Math.cos(Math.PI * t))));
}

/**
 * How many edits each step may apply (the reference's "learning rate" schedulers). The counter starts
 * at 0; `step()` advances it and returns the budget for the new value. `position`/`restore` let a
 * resumed run continue from the exact counter, which the reference does not persist.
 */
export class EditBudgetScheduler {
  readonly kind: EditBudgetKind;
  readonly maxLr: number;
  readonly minLr: number;
  readonly totalSteps: number;
  private counter = 0;

  constructor(options: EditBudgetOptions) {
    const kind = options.kind ?? 'cosine';
    if (!EDIT_BUDGET_KINDS.includes(kind)) {
      throw new SkillOptError('config', `unknown edit-budget schedule "${String(kind)}"`, {
        key: 'optimizer.lr_scheduler',
        fix: `use one of ${EDIT_BUDGET_KINDS.join(', ')}`,
      });
    }
    this.kind = kind;
    this.maxLr = options.maxLr ?? 4;
    this.minLr = options.minLr ?? 2;
    this.totalSteps = options.totalSteps;
  }

  /** Counter value: how many times `step()` has run. */
  get position(): number {
    return this.counter;
  }

  step(): number {
    this.counter++;
    return this.budgetAt(this.counter);
  }

  budgetAt(step: number): number {
    return editBudgetAt(this.kind, step, this.maxLr, this.minLr, this.totalSteps);
  }

  restore(position: number): void {
    if (!Number.isInteger(position) || position < 0) {
      throw new SkillOptError('io', `scheduler position ${String(position)} is not a whole number ≥ 0`, {
        key: 'scheduler_position',
        fix: 'delete runtime_state.json to restart the schedule, or set scheduler_position to the last completed step',
      });
    }
    this.counter = position;
  }
}
