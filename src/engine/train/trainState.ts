import type { CachedSelection, RuntimeState, StepBufferEntry, StepRecord } from '../../protocol/records';
import { becomesBest, ENGINE_ID, GATE_ACTIONS, isAccepted } from '../../protocol/vocabulary';
import type { EditBudgetScheduler } from '../optimizer/schedule';
import { RUN_FILE } from '../store/layout';
import { RUNTIME_STATE_VERSION } from '../store/runSchemas';
import type { RunFiles } from './state';

/**
 * Everything the loop carries from one step to the next, in one place: the current and best
 * skills and scores, the step buffer, the meta skill, the epoch-end progress, the patience and
 * decay counters and the selection cache. It is exactly what `runtime_state.json` saves, so
 * `snapshot()` and `restore()` are the only translation between the two.
 */
export class TrainState {
  current = '';
  currentScore = -1;
  currentOrigin = 'initial_skill';
  best = '';
  bestScore = -1;
  bestStep = 0;
  bestOrigin = 'initial_skill';
  baselineScore = -1;
  history: StepRecord[] = [];
  buffer: StepBufferEntry[] = [];
  bufferEpoch = 0;
  metaSkill = '';
  lastCompletedStep = 0;
  lastCompletedEpoch = 0;
  slowDoneEpoch = 0;
  metaReflectDoneEpoch = 0;
  /** Last epoch whose activation-track stage is complete. */
  activationDoneEpoch = 0;
  /** Edit-budget reduction from consecutive rejections (optimizer.decay_on_reject). */
  decay = 0;
  /** Gated steps since the last new best (evaluation.patience). */
  noImprove = 0;
  /** Selection scores by skill hash: a skill is never scored twice in a run. */
  readonly selectionCache = new Map<string, CachedSelection>();

  constructor(
    readonly files: RunFiles,
    readonly scheduler: EditBudgetScheduler,
    initialSkill: string,
  ) {
    this.current = initialSkill;
    this.best = initialSkill;
  }

  /** The candidate becomes current (and maybe best) when the action says so; true when it is the new best. */
  applyVerdict(action: string, candidate: string, score: number, step: number, origin: string): boolean {
    // Only a gate's accept or a slow-update placeholder lands here; a person's accept and a final
    // promotion are applied by their own code paths.
    const gated = (GATE_ACTIONS as readonly string[]).includes(action) || action === 'inject_placeholder';
    if (!gated || !isAccepted(action)) return false;
    const newBest = becomesBest(action, score, this.bestScore);
    this.current = candidate;
    this.currentScore = score;
    this.currentOrigin = origin;
    if (newBest) {
      this.best = candidate;
      this.bestScore = score;
      this.bestStep = step;
      this.bestOrigin = origin;
    }
    return newBest;
  }

  /** The final check found the current skill better than the best: it becomes the best. */
  promoteCurrent(score: number, step: number): void {
    this.best = this.current;
    this.bestScore = score;
    this.bestStep = step;
    this.bestOrigin = this.currentOrigin;
  }

  /**
   * Patience and decay-on-reject counters after a gated step. `newBest` is what applyVerdict said:
   * a force-accept (evaluation.use_gate: false) that beats the best is an improvement too.
   */
  countGated(action: string, decayOnReject: boolean, newBest: boolean): void {
    if (isAccepted(action)) {
      this.decay = 0;
      this.noImprove = newBest ? 0 : this.noImprove + 1;
    } else {
      this.decay = decayOnReject ? this.decay + 1 : 0;
      this.noImprove++;
    }
  }

  /** What `runtime_state.json` holds after the last commit. */
  snapshot(): RuntimeState {
    const layout = this.files.layout;
    return {
      schema_version: RUNTIME_STATE_VERSION,
      last_completed_step: this.lastCompletedStep,
      current_skill_path: layout.skillVersion(this.lastCompletedStep),
      current_score: this.currentScore,
      current_origin: this.currentOrigin,
      best_skill_path: layout.file(RUN_FILE.bestSkill),
      best_score: this.bestScore,
      best_step: this.bestStep,
      best_origin: this.bestOrigin,
      scheduler_position: this.scheduler.position,
      step_buffer_epoch: this.bufferEpoch,
      step_buffer: this.buffer,
      active_meta_skill: this.metaSkill,
      last_completed_epoch: this.lastCompletedEpoch,
      slow_done_epoch: this.slowDoneEpoch,
      meta_reflect_done_epoch: this.metaReflectDoneEpoch,
      ...(this.activationDoneEpoch ? { activation_done_epoch: this.activationDoneEpoch } : {}),
      budget_decay: this.decay,
      steps_without_improvement: this.noImprove,
      baseline_score: this.baselineScore,
      selection_cache: Object.fromEntries(this.selectionCache),
      engine: ENGINE_ID,
    };
  }

  /** Save the state (the commit point). */
  save(): void {
    this.files.writeState(this.snapshot());
  }

  /** Load a previous run's state from the folder, if any. Returns whether this is a resume. */
  restore(): boolean {
    const state = this.files.readState();
    if (!state) return false;
    this.lastCompletedStep = state.last_completed_step;
    // Paths inside may come from another machine (the Python reference writes absolute ones).
    this.current = this.files.readSkill(state.last_completed_step);
    this.best = this.files.readBest();
    this.currentScore = state.current_score;
    this.currentOrigin = state.current_origin;
    this.bestScore = state.best_score;
    this.bestStep = state.best_step;
    this.bestOrigin = state.best_origin;
    this.history = this.files.readHistory().filter((r) => r.step <= state.last_completed_step);
    this.buffer = state.step_buffer ?? [];
    this.bufferEpoch = state.step_buffer_epoch ?? 0;
    this.metaSkill = state.active_meta_skill ?? '';
    this.lastCompletedEpoch = state.last_completed_epoch ?? 0;
    this.slowDoneEpoch = state.slow_done_epoch ?? 0;
    this.metaReflectDoneEpoch = state.meta_reflect_done_epoch ?? 0;
    this.activationDoneEpoch = state.activation_done_epoch ?? 0;
    this.decay = state.budget_decay ?? 0;
    this.noImprove = state.steps_without_improvement ?? 0;
    this.scheduler.restore(state.scheduler_position ?? 0);
    this.baselineScore = state.baseline_score ?? this.history[0]?.current_score ?? state.current_score;
    for (const [h, sc] of Object.entries(state.selection_cache ?? {})) this.selectionCache.set(h, sc);
    for (const r of this.history) {
      if (r.candidate_hash && r.selection_hard !== undefined) {
        // The history's means win; the per-item scores only runtime_state.json keeps stay.
        const { items, repeats, dirs } = this.selectionCache.get(r.candidate_hash) ?? {};
        this.selectionCache.set(r.candidate_hash, {
          hard: r.selection_hard,
          soft: r.selection_soft ?? 0,
          ...(items ? { items, ...(repeats ? { repeats } : {}), ...(dirs ? { dirs } : {}) } : {}),
        });
      }
    }
    return true;
  }
}
