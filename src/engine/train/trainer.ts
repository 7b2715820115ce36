import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskItem } from '../data/tasks';
import type { SealedSplit } from '../data/splits';
import { planTrainEpoch, stepsPerEpoch } from '../data/plan';
import { SkillOptError } from '../errors';
import type { CandidateEdit } from '../../protocol/events';
import { ENGINE_ID, VERSION, type StageName, type StepAction } from '../../protocol/vocabulary';
import { decideGate } from '../optimizer/gate';
import { EditBudgetScheduler } from '../optimizer/schedule';
import { lineHunks } from '../skill/hunks';
import { extractSlowUpdate, injectEmptySlowUpdate, replaceSlowUpdate, skillHash } from '../skill/document';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic';
import { aggregate, itemsOf, type Item, type MergedPatch } from './aggregate';
import { conflictsWithin, detectConflicts } from './conflicts';
import { buildReport, renderReport } from './report';
import type { AccountingSnapshot } from '../llm/accounting';
import { recoverProvenance, type ProvenanceRecord } from './provenance';
import { payloadKey, type UpdateMode } from '../prompts/modes';
import { assignEditIds } from '../skill/applyEdits';
import type { RunContext } from './context';
import {
  applyPairPolicy,
  buildPairs,
  loadPairs,
  longitudinalPairs,
  savePairs,
  writeMetaSkill,
  writeSlowGuidance,
  type ComparisonPair,
} from './epochEnd';
import { evaluateTestSplit, type TestSummary } from './evaluate';
import { StreamingReflector, type RawPatch } from './reflect';
import { meanScore, rolloutFor } from './rollout';
import { decideLearningRate, rankAndSelect, type LrDecision } from './select';
import { SelectionEvaluator } from './selection';
import { RunFiles, epochDirName, readJsonIfExists, skillVersionPath, stepDirName } from './state';
import { buildBufferEntry, compactRejected, renderStepBuffer } from './stepBuffer';
import type { RolloutResult, RuntimeState, Score, StepBufferEntry, StepRecord } from '../../protocol/records';
import { keepProtectedBlock, updateSkill } from './update';
import { deepReflect, shouldDeepReflect } from './deepReflect';
import { metaReflect } from './metaReflect';
import type { EditDecision, ReviewDecision, Reviewer } from './review';
import { applyEdits, type Edit } from '../skill/applyEdits';

export interface TrainInput {
  ctx: RunContext;
  splits: { train: readonly TaskItem[]; val: readonly TaskItem[]; test: SealedSplit };
  initialSkill: string;
  /** Flat, redacted config written as config.json and into summary.json. */
  flatConfig: Record<string, unknown>;
  /** Checked at every step boundary; returns a reason to stop, or null. */
  budgetCheck?: () => string | null;
  /** Per-stage token counters for history records: snapshot now, diff later. */
  tokenSnapshot: () => Record<string, { calls: number; prompt_tokens: number; completion_tokens: number }>;
  totalTokens: () => Record<string, unknown>;
  /** Accounting rows (per stage, role and model) for the report's spend by role. */
  accountingSnapshot: () => AccountingSnapshot;
  resumeCommand: string;
  /** The person in the loop; without one every review mode behaves like `auto`. */
  reviewer?: Reviewer;
}

export interface TrainOutcome {
  status: 'finished' | 'stopped';
  reason?: string;
  bestStep: number;
  bestScore: number;
  baselineScore: number;
  history: StepRecord[];
}

type Tokens = StepRecord['tokens'];

function tokenDelta(after: Tokens, before: Tokens): Tokens {
  const out: Tokens = {};
  for (const [stage, a] of Object.entries(after)) {
    const b = before[stage] ?? { calls: 0, prompt_tokens: 0, completion_tokens: 0 };
    const d = {
      calls: a.calls - b.calls,
      prompt_tokens: a.prompt_tokens - b.prompt_tokens,
      completion_tokens: a.completion_tokens - b.completion_tokens,
    };
    if (d.calls > 0) out[stage] = d;
  }
  return out;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;
const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

/** Rough token count (4 chars/token) used for skill-length telemetry; documented as an estimate. */
export function estimateSkillTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The SkillOpt training loop (reference §1–§6): per step rollout → reflect → aggregate → select →
 * update → gate, and at epoch ends slow update and meta skill; then final selection check and
 * test evaluation. Every completed stage leaves an artifact that a resumed run reuses, and
 * runtime_state.json is the commit point of each step.
 */
export class Trainer {
  private readonly files: RunFiles;
  private readonly s: RunContext['settings'];
  private current = '';
  private currentScore = -1;
  private currentOrigin = 'initial_skill';
  private best = '';
  private bestScore = -1;
  private bestStep = 0;
  private bestOrigin = 'initial_skill';
  private baselineScore = -1;
  private history: StepRecord[] = [];
  private buffer: StepBufferEntry[] = [];
  private bufferEpoch = 0;
  private metaSkill = '';
  private lastCompletedStep = 0;
  private lastCompletedEpoch = 0;
  private slowDoneEpoch = 0;
  private metaReflectDoneEpoch = 0;
  private decay = 0;
  private noImprove = 0;
  private readonly scheduler: EditBudgetScheduler;
  private readonly selection: SelectionEvaluator;
  private readonly selCache = new Map<string, Score>();
  private readonly spe: number;
  private readonly totalSteps: number;
  private readonly started = Date.now();

  constructor(private readonly input: TrainInput) {
    this.s = input.ctx.settings;
    this.files = new RunFiles(input.ctx.outDir);
    this.spe = stepsPerEpoch(input.splits.train.length, this.s.batchSize, this.s.accumulation);
    this.totalSteps = this.s.numEpochs * this.spe;
    this.scheduler = new EditBudgetScheduler({
      kind: this.s.lrScheduler,
      maxLr: this.s.learningRate,
      minLr: this.s.minLearningRate,
      totalSteps: this.totalSteps,
    });
    const selItems = this.s.selEnvNum > 0 ? input.splits.val.slice(0, this.s.selEnvNum) : input.splits.val;
    this.selection = new SelectionEvaluator(input.ctx, selItems, this.selCache);
  }

  private get ctx(): RunContext {
    return this.input.ctx;
  }

  private checkStop(): string | null {
    if (this.ctx.signal.aborted) return 'stopped by request';
    return this.input.budgetCheck?.() ?? null;
  }

  private stage<T>(step: number, epoch: number, stage: StageName, fn: () => Promise<T>): Promise<T> {
    this.ctx.emit({ type: 'stage/started', step, epoch, stage });
    const t0 = performance.now();
    return fn().then((v) => {
      this.ctx.emit({ type: 'stage/finished', step, epoch, stage, seconds: (performance.now() - t0) / 1000 });
      return v;
    });
  }

  async run(): Promise<TrainOutcome> {
    mkdirSync(this.ctx.outDir, { recursive: true });
    writeJsonAtomic(this.files.path('config.json'), this.input.flatConfig);
    this.files.writeSkill(0, this.input.initialSkill);
    const resumed = this.restore();
    this.ctx.emit({
      type: 'run/started',
      runId: this.ctx.outDir,
      outDir: this.ctx.outDir,
      totalSteps: this.totalSteps,
      epochs: this.s.numEpochs,
      stepsPerEpoch: this.spe,
      splitSizes: {
        train: this.input.splits.train.length,
        val: this.input.splits.val.length,
        test: this.input.splits.test.size,
      },
      optimizer: `${this.ctx.optimizer.backend}/${this.ctx.optimizer.model}`,
      target: `${this.ctx.target.backend}/${this.ctx.target.model}`,
      simulated: this.ctx.optimizer.backend === 'sim' || this.ctx.target.backend === 'sim',
      ...(resumed ? { resumedFromStep: this.lastCompletedStep + 1 } : {}),
    });

    try {
      if (this.currentScore < 0) await this.baseline();
      for (let epoch = 1; epoch <= this.s.numEpochs; epoch++) {
        if (this.bufferEpoch !== epoch) {
          this.buffer = [];
          this.bufferEpoch = epoch;
        }
        if (this.lastCompletedEpoch < epoch) {
          const plan = planTrainEpoch(this.input.splits.train, {
            seed: this.s.seed,
            epoch,
            batchSize: this.s.batchSize,
            accumulation: this.s.accumulation,
          });
          for (let sie = 0; sie < this.spe; sie++) {
            const step = (epoch - 1) * this.spe + sie + 1;
            if (step <= this.lastCompletedStep) continue;
            this.applyOverrules();
            const stop = this.checkStop();
            if (stop) return this.stopped(stop);
            const batches = plan.slice(sie * this.s.accumulation, (sie + 1) * this.s.accumulation);
            await this.step(step, epoch, sie, batches);
            if (this.s.patience > 0 && this.noImprove >= this.s.patience) break;
          }
          // An overrule of the epoch's last step counts before the slow update reads the skill.
          this.applyOverrules();
          const stop = this.checkStop();
          if (stop) return this.stopped(stop);
          await this.epochEnd(epoch);
        }
        if (this.s.patience > 0 && this.noImprove >= this.s.patience) {
          return await this.finish(
            `no selection improvement for ${this.noImprove} gated steps (patience ${this.s.patience})`,
          );
        }
      }
      return await this.finish();
    } catch (err) {
      if (SkillOptError.is(err, 'cancelled') || this.ctx.signal.aborted)
        return this.stopped('stopped by request');
      throw err;
    }
  }

  private stopped(reason: string): TrainOutcome {
    this.ctx.emit({
      type: 'run/stopped',
      outDir: this.ctx.outDir,
      reason,
      resumeCommand: this.input.resumeCommand,
    });
    return {
      status: 'stopped',
      reason,
      bestStep: this.bestStep,
      bestScore: this.bestScore,
      baselineScore: this.baselineScore,
      history: this.history,
    };
  }

  /** Load a previous run's state from the folder, if any. Returns whether this is a resume. */
  private restore(): boolean {
    const state = this.files.readState();
    this.current = this.input.initialSkill;
    this.best = this.input.initialSkill;
    if (!state) return false;
    const outDir = this.ctx.outDir;
    this.lastCompletedStep = state.last_completed_step;
    // Paths inside may come from another machine (the Python reference writes absolute ones).
    this.current = readFileSync(skillVersionPath(outDir, state.last_completed_step), 'utf8');
    this.best = readFileSync(join(outDir, 'best_skill.md'), 'utf8');
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
    this.slowDoneEpoch = (state as RuntimeState & { slow_done_epoch?: number }).slow_done_epoch ?? 0;
    this.metaReflectDoneEpoch =
      (state as RuntimeState & { meta_reflect_done_epoch?: number }).meta_reflect_done_epoch ?? 0;
    this.decay = state.budget_decay ?? 0;
    this.noImprove = state.steps_without_improvement ?? 0;
    this.scheduler.restore(state.scheduler_position ?? 0);
    const base = (state as RuntimeState & { baseline_score?: number }).baseline_score;
    this.baselineScore = base ?? this.history[0]?.current_score ?? state.current_score;
    const cache = (state as RuntimeState & { selection_cache?: Record<string, Score> }).selection_cache ?? {};
    for (const [h, sc] of Object.entries(cache)) this.selCache.set(h, sc);
    for (const r of this.history) {
      if (r.candidate_hash && r.selection_hard !== undefined)
        this.selCache.set(r.candidate_hash, { hard: r.selection_hard, soft: r.selection_soft ?? 0 });
    }
    return true;
  }

  private state(): RuntimeState & Record<string, unknown> {
    return {
      last_completed_step: this.lastCompletedStep,
      current_skill_path: skillVersionPath(this.ctx.outDir, this.lastCompletedStep),
      current_score: this.currentScore,
      current_origin: this.currentOrigin,
      best_skill_path: join(this.ctx.outDir, 'best_skill.md'),
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
      budget_decay: this.decay,
      steps_without_improvement: this.noImprove,
      baseline_score: this.baselineScore,
      selection_cache: Object.fromEntries(this.selCache),
      engine: 'skillopt-vscode',
    };
  }

  private async baseline(): Promise<void> {
    const out = await this.stage(0, 0, 'baseline', () =>
      this.selection.evaluate(this.current, this.files.path('selection_eval_baseline'), 0, 'baseline'),
    );
    this.currentScore = this.bestScore = this.baselineScore = out.projected;
    this.ctx.emit({
      type: 'baseline/scored',
      hard: out.score.hard,
      soft: out.score.soft,
      score: out.projected,
    });
    this.files.writeBest(this.best);
    this.files.writeState(this.state());
  }

  private bufferText(): string {
    return renderStepBuffer(this.buffer);
  }

  private async step(
    step: number,
    epoch: number,
    sie: number,
    batches: ReturnType<typeof planTrainEpoch>,
  ): Promise<void> {
    const t0 = Date.now();
    const tokens0 = this.input.tokenSnapshot();
    const fallbacks: Array<{ stage: string; reason: string }> = [];
    const unsubscribe = this.onFallback((f) => fallbacks.push(f));
    try {
      await this.runStep(step, epoch, sie, batches, t0, tokens0, fallbacks);
    } finally {
      unsubscribe();
    }
  }

  private fallbackListeners = new Set<(f: { stage: string; reason: string }) => void>();
  private onFallback(fn: (f: { stage: string; reason: string }) => void): () => void {
    this.fallbackListeners.add(fn);
    return () => this.fallbackListeners.delete(fn);
  }
  /** Called by the run context's recordFallback. */
  noteFallback(stage: string, reason: string): void {
    for (const fn of this.fallbackListeners) fn({ stage, reason });
  }

  private async runStep(
    step: number,
    epoch: number,
    sie: number,
    batches: ReturnType<typeof planTrainEpoch>,
    t0: number,
    tokens0: Tokens,
    fallbacks: Array<{ stage: string; reason: string }>,
  ): Promise<void> {
    const s = this.s;
    const stepDir = this.files.path('steps', stepDirName(step));
    const timing: Record<string, number> = {};
    const timed = async <T>(key: string, stage: StageName, fn: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      const v = await this.stage(step, epoch, stage, fn);
      timing[key] = round1((timing[key] ?? 0) + (performance.now() - t) / 1000);
      return v;
    };
    const skill = this.current;
    const bufferText = this.bufferText();

    // ① rollout and ② reflect, overlapped per micro-batch.
    const allResults: RolloutResult[] = [];
    const allRaw: RawPatch[] = [];
    const accBatches: StepRecord['accumulation_batches'] = [];
    for (const [a, batch] of batches.entries()) {
      const batchDir = s.accumulation === 1 ? stepDir : join(stepDir, `batch_${a}`);
      const reflector = new StreamingReflector(this.ctx, {
        skill,
        patchesDir: join(batchDir, 'patches'),
        itemIds: batch.items.map((i) => i.id),
        seed: batch.seed,
        stepBufferText: bufferText,
        ...(this.metaSkill ? { metaSkill: this.metaSkill } : {}),
      });
      let passed = 0;
      const results = await timed('rollout_s', 'rollout', () =>
        rolloutFor(this.ctx, batch.items, skill, join(batchDir, 'rollout'), 'rollout', (r, done, total) => {
          passed += r.hard;
          reflector.onResult(r);
          this.ctx.emit({
            type: 'rollout/progress',
            step,
            stage: 'rollout',
            done,
            total,
            hard: passed / done,
          });
        }),
      );
      const raw = await timed('reflect_s', 'reflect', () => reflector.finish());
      const sc = meanScore(results);
      accBatches.push({
        batch_idx: a,
        batch_seed: batch.seed,
        n_envs: results.length,
        hard: round6(sc.hard),
        soft: round6(sc.soft),
        n_failure_patches: raw.filter((p) => p.source_type === 'failure').length,
        n_success_patches: raw.filter((p) => p.source_type === 'success').length,
      });
      allResults.push(...results);
      allRaw.push(...raw);
    }
    // Deep reflection: when one failure pattern dominates, cross-reference a few failures and
    // successes over several turns; its patch joins the analysts' (source: failure).
    const deep = s.deepReflect;
    if (
      deep.enabled &&
      shouldDeepReflect(allResults, { threshold: deep.threshold, everyStep: deep.everyStep }).run
    ) {
      const patch = await timed('reflect_s', 'deep_reflect', () =>
        deepReflect(this.ctx, {
          skill,
          results: allResults,
          seed: batches[0]?.seed ?? s.seed,
          failures: deep.failures,
          successes: deep.successes,
          rounds: deep.rounds,
          stepBufferText: bufferText,
          ...(this.metaSkill ? { metaSkill: this.metaSkill } : {}),
          dir: stepDir,
        }),
      );
      if (patch) allRaw.push(patch);
    }
    const rolloutScore = meanScore(allResults);
    const nFail = allRaw.filter((p) => p.source_type === 'failure').length;
    const nSucc = allRaw.filter((p) => p.source_type === 'success').length;
    const base: StepRecord = {
      step,
      epoch,
      step_in_epoch: sie,
      timing,
      tokens: {},
      rollout_hard: round6(rolloutScore.hard),
      rollout_soft: round6(rolloutScore.soft),
      rollout_n: allResults.length,
      accumulation_batches: accBatches,
      n_patches: allRaw.length,
      n_failure_patches: nFail,
      n_success_patches: nSucc,
      n_edits_proposed: allRaw.reduce((n, p) => n + itemsOf(p.patch, s.updateMode).length, 0),
      action: 'skip_no_patches',
      current_score: this.currentScore,
      best_score: this.bestScore,
      best_step: this.bestStep,
      skill_len: this.current.length,
      wall_time_s: 0,
    };
    const hasItems = allRaw.some((p) => itemsOf(p.patch, s.updateMode).length > 0);
    if (!hasItems) {
      this.commit(base, t0, tokens0, fallbacks, undefined);
      return;
    }

    // ③ aggregate
    const mergedPath = join(stepDir, 'merged_patch.json');
    const merged =
      readJsonIfExists<MergedPatch>(mergedPath) ??
      withConflicts(
        await timed('aggregate_s', 'aggregate', () =>
          aggregate(this.ctx, skill, allRaw, this.metaSkill || undefined),
        ),
        s.updateMode,
      );
    writeJsonAtomic(mergedPath, merged);
    base.n_edits_merged = itemsOf(merged, s.updateMode).length;

    // ④ select
    let ranked: MergedPatch;
    let budget: number | null = null;
    let lrDecision: LrDecision | undefined;
    const rankedPath = join(stepDir, 'ranked_edits.json');
    if (s.updateMode === 'full_rewrite_minibatch') {
      ranked = merged;
    } else {
      if (s.lrControlMode === 'autonomous') {
        const lrPath = join(stepDir, 'lr_decision.json');
        lrDecision =
          readJsonIfExists<LrDecision>(lrPath) ??
          (await timed('select_s', 'select', () =>
            decideLearningRate(
              this.ctx,
              skill,
              merged,
              { rolloutN: allResults.length, hard: rolloutScore.hard, soft: rolloutScore.soft },
              bufferText,
              this.metaSkill || undefined,
            ),
          ));
        if (!readJsonIfExists(lrPath)) {
          writeJsonAtomic(lrPath, lrDecision);
          const line = JSON.stringify({ step, epoch, ...lrDecision }) + '\n';
          const histPath = this.files.path('lr_history.jsonl');
          const prior = existsSync(histPath) ? readFileSync(histPath, 'utf8') : '';
          writeFileAtomic(histPath, prior + line);
        }
        budget = lrDecision.learning_rate;
      } else {
        budget = Math.max(s.minLearningRate, this.scheduler.step() - this.decay);
      }
      ranked =
        readJsonIfExists<MergedPatch>(rankedPath) ??
        (await timed('select_s', 'select', () =>
          rankAndSelect(this.ctx, skill, merged, budget ?? 0, this.metaSkill || undefined),
        ));
    }
    writeJsonAtomic(rankedPath, ranked);
    const rankedItems = itemsOf(ranked, s.updateMode);
    base.n_edits_ranked = rankedItems.length;
    base.edit_budget = budget;
    base.lr_control_mode = s.updateMode === 'full_rewrite_minibatch' ? 'none' : s.lrControlMode;
    if (lrDecision) base.lr_decision = lrDecision as unknown as Record<string, unknown>;
    base.support_counts = rankedItems.map((i) => Number(i.support_count ?? 1));

    // ⑤ update
    const candPath = join(stepDir, 'candidate_skill.md');
    const update = await timed('update_s', 'update', () => updateSkill(this.ctx, skill, ranked, bufferText));
    if (update.candidate === null) {
      base.action = 'skip_no_rewrite';
      this.commit(base, t0, tokens0, fallbacks, undefined);
      return;
    }
    const candidate = update.candidate;
    writeFileAtomic(candPath, candidate);
    if (update.report?.length) writeJsonAtomic(join(stepDir, 'edit_apply_report.json'), update.report);
    if (update.artifact) writeJsonAtomic(join(stepDir, update.artifact.file), update.artifact.value);
    base.candidate_hash = skillHash(candidate);
    base.candidate_skill_len = candidate.length;
    if (update.changeSummary) base.rewrite_change_summary = update.changeSummary;
    if (update.summary) base.edit_apply_summary = update.summary;
    const candidateEdits: CandidateEdit[] = update.edits.map((e, i) => ({
      id: String(e.id ?? `edit-${i + 1}`),
      op: String(e.op),
      ...(e.target !== undefined ? { target: String(e.target) } : {}),
      ...(e.content !== undefined ? { content: String(e.content) } : {}),
      ...(e.support_count !== undefined ? { support_count: Number(e.support_count) } : {}),
      ...(e.source_type !== undefined ? { source_type: String(e.source_type) } : {}),
      ...(update.report?.[i] ? { status: update.report[i].status } : {}),
      ...conflictsWithin(e.conflicts_with, update.edits),
    }));
    this.ctx.emit({
      type: 'candidate/ready',
      step,
      epoch,
      origin: 'step',
      previousHash: skillHash(skill),
      candidateHash: base.candidate_hash,
      edits: candidateEdits,
      hunks: lineHunks(skill, candidate),
      candidatePath: candPath,
    });

    // human-first review: the person prunes edits; only the kept ones reach the gate.
    let gated = candidate;
    const humanRejected: Array<{ id: string; reason?: string }> = [];
    if (
      s.reviewMode === 'human-first' &&
      this.input.reviewer &&
      s.updateMode === 'patch' &&
      candidateEdits.length
    ) {
      const decision = await this.askReview(stepDir, 'before_gate', {
        step,
        epoch,
        phase: 'before_gate',
        candidatePath: candPath,
        candidateHash: base.candidate_hash,
        edits: candidateEdits,
      });
      const rejected = new Map((decision.edits ?? []).filter((d) => !d.accept).map((d) => [d.editId, d]));
      for (const [id, d] of rejected) humanRejected.push({ id, ...(d.reason ? { reason: d.reason } : {}) });
      if (rejected.size) {
        const kept = update.edits.filter((e) => !rejected.has(String(e.id)));
        gated = applyEdits(skill, kept, { anchorMode: s.anchorMode }).text;
        writeFileAtomic(join(stepDir, 'candidate_skill.reviewed.md'), gated);
        base.candidate_hash = skillHash(gated);
        base.candidate_skill_len = gated.length;
      }
      base.review = {
        mode: s.reviewMode,
        decision: rejected.size ? 'human_pruned' : 'human_kept_all',
        ...(humanRejected.length ? { rejected_edits: humanRejected } : {}),
      };
      this.ctx.emit({
        type: 'review/decided',
        step,
        phase: 'before_gate',
        decision: base.review.decision,
        rejectedEdits: humanRejected.map((r) => r.id),
      });
    }

    // ⑥ gate
    const sel = await timed('evaluate_s', 'evaluate', () =>
      this.selection.evaluate(gated, join(stepDir, 'selection_eval'), step, 'evaluate'),
    );
    let action: StepAction = decideGate({
      candidate: sel.projected,
      current: this.currentScore,
      best: this.bestScore,
      useGate: s.useGate,
    });
    // gate-then-human: an accepted candidate waits for the person before it becomes current.
    if (s.reviewMode === 'gate-then-human' && this.input.reviewer && action !== 'reject') {
      const decision = await this.askReview(stepDir, 'after_gate', {
        step,
        epoch,
        phase: 'after_gate',
        candidatePath: candPath,
        candidateHash: base.candidate_hash,
        edits: candidateEdits,
        candidateScore: sel.projected,
        currentScore: this.currentScore,
      });
      const accepted = decision.candidate !== 'reject';
      base.review = {
        mode: s.reviewMode,
        decision: accepted ? 'human_accept' : 'human_reject',
        gate_action: action,
        ...(decision.reason ? { reason: decision.reason } : {}),
      };
      if (!accepted) {
        action = 'reject';
        for (const e of candidateEdits)
          humanRejected.push({ id: e.id, ...(decision.reason ? { reason: decision.reason } : {}) });
      }
      this.ctx.emit({
        type: 'review/decided',
        step,
        phase: 'after_gate',
        decision: base.review.decision,
        rejectedEdits: accepted ? [] : candidateEdits.map((e) => e.id),
      });
    }
    const before = this.currentScore;
    this.applyVerdict(action, gated, sel.projected, step, `step_${String(step).padStart(4, '0')}`);
    this.ctx.emit({
      type: 'gate/verdict',
      step,
      epoch,
      origin: 'step',
      action,
      candidateScore: sel.projected,
      currentScore: this.currentScore,
      bestScore: this.bestScore,
      selectionHard: sel.score.hard,
      selectionSoft: sel.score.soft,
      cacheHit: sel.cacheHit,
    });
    base.selection_hard = sel.score.hard;
    base.selection_soft = sel.score.soft;
    base.gate_metric = s.gateMetric;
    base.candidate_gate_score = sel.projected;
    base.action = action;
    if (action === 'reject') {
      this.decay = s.decayOnReject ? this.decay + 1 : 0;
      this.noImprove++;
    } else {
      this.decay = 0;
      this.noImprove = action === 'accept_new_best' ? 0 : this.noImprove + 1;
    }
    if (action !== 'reject' && update.report) {
      this.recordProvenance(
        step,
        epoch,
        action,
        before,
        sel.projected,
        update.edits,
        update.report,
        allRaw,
        humanRejected,
      );
    }
    this.commit(base, t0, tokens0, fallbacks, {
      results: allResults,
      raw: allRaw,
      scoreBefore: before,
      scoreAfter: sel.projected,
      rejected:
        action === 'reject'
          ? compactRejected(rankedItems).map((r) =>
              base.review?.decision === 'human_reject'
                ? { ...r, human: true, ...(base.review.reason ? { reason: base.review.reason } : {}) }
                : r,
            )
          : // Edits the person turned down (with their reason) are rejections the optimizer should see too.
            humanRejectedItems(update.edits, humanRejected),
    });
  }

  /** Append the applied edits of an accepted step, with their evidence, to provenance.json. */
  private recordProvenance(
    step: number,
    epoch: number,
    action: string,
    before: number,
    after: number,
    edits: readonly Edit[],
    report: ReadonlyArray<{ index: number; status: string }>,
    raw: readonly RawPatch[],
    humanRejected: ReadonlyArray<{ id: string }>,
  ): void {
    const turnedDown = new Set(humanRejected.map((r) => r.id));
    const origins = recoverProvenance(edits, raw, this.s.updateMode);
    const path = this.files.path('provenance.json');
    const records = (readJsonIfExists<ProvenanceRecord[]>(path) ?? []).filter((r) => r.step !== step);
    edits.forEach((e, i) => {
      const row = report[i];
      if (!row?.status.startsWith('applied') || turnedDown.has(String(e.id))) return;
      records.push({
        step,
        epoch,
        edit_id: String(e.id),
        op: String(e.op),
        ...(e.target ? { target: String(e.target) } : {}),
        ...(e.content ? { content: String(e.content) } : {}),
        ...(e.source_type ? { source_type: String(e.source_type) } : {}),
        ...(e.support_count !== undefined ? { support_count: Number(e.support_count) } : {}),
        action,
        score_before: before,
        score_after: after,
        ...origins[i],
      });
    });
    writeJsonAtomic(path, records);
  }

  /** Ask the person once per step and phase; the answer is saved so a resumed run does not ask again. */
  private async askReview(
    stepDir: string,
    phase: 'before_gate' | 'after_gate',
    request: Parameters<Reviewer['review']>[0],
  ): Promise<ReviewDecision> {
    const file = join(stepDir, `review_${phase}.json`);
    const saved = readJsonIfExists<ReviewDecision>(file);
    if (saved) return saved;
    this.ctx.emit({ type: 'review/requested', ...request });
    const decision = await this.stage(request.step, request.epoch, 'review', () =>
      this.input.reviewer!.review(request, this.ctx.signal),
    );
    writeJsonAtomic(file, decision);
    return decision;
  }

  /** Apply the person's overrules of finished steps (auto mode), at a step boundary. */
  private applyOverrules(): void {
    const overrules = this.input.reviewer?.takeOverrules() ?? [];
    if (!overrules.length) return;
    const logPath = this.files.path('human_decisions.json');
    const log = readJsonIfExists<Array<Record<string, unknown>>>(logPath) ?? [];
    for (const o of overrules) {
      const rec = this.history.find((r) => r.step === o.step);
      if (!rec?.candidate_hash) continue;
      const stepDir = this.files.path('steps', stepDirName(o.step));
      if (o.decision === 'accept' && rec.action === 'reject') {
        const reviewed = join(stepDir, 'candidate_skill.reviewed.md');
        // The protected blocks are the epoch ends' work since that step: they stay as they are now.
        this.current = keepProtectedBlock(
          this.current,
          readFileSync(existsSync(reviewed) ? reviewed : join(stepDir, 'candidate_skill.md'), 'utf8'),
        ).text;
        this.currentScore = rec.candidate_gate_score ?? this.currentScore;
        this.currentOrigin = `human_step_${String(o.step).padStart(4, '0')}`;
      } else if (o.decision === 'revert' && rec.action.startsWith('accept')) {
        this.current = keepProtectedBlock(
          this.current,
          readFileSync(skillVersionPath(this.ctx.outDir, o.step - 1), 'utf8'),
        ).text;
        const prev = this.history.find((r) => r.step === o.step - 1);
        this.currentScore = prev?.current_score ?? this.baselineScore;
        this.currentOrigin = `human_revert_step_${String(o.step).padStart(4, '0')}`;
      } else {
        continue;
      }
      log.push({ ...o, applied_after_step: this.lastCompletedStep, current_score: this.currentScore });
      this.ctx.emit({
        type: 'gate/verdict',
        step: o.step,
        epoch: rec.epoch,
        origin: 'human',
        action: o.decision === 'accept' ? 'human_accept' : 'human_revert',
        candidateScore: rec.candidate_gate_score ?? this.currentScore,
        currentScore: this.currentScore,
        bestScore: this.bestScore,
        cacheHit: true,
      });
    }
    writeJsonAtomic(logPath, log);
    this.files.writeSkill(this.lastCompletedStep, this.current);
    this.files.writeState(this.state());
  }

  private applyVerdict(action: string, candidate: string, score: number, step: number, origin: string): void {
    if (action === 'accept_new_best' || action === 'accept' || action === 'force_accept') {
      this.current = candidate;
      this.currentScore = score;
      this.currentOrigin = origin;
    }
    if (action === 'accept_new_best' || (action === 'force_accept' && score > this.bestScore)) {
      this.best = candidate;
      this.bestScore = score;
      this.bestStep = step;
      this.bestOrigin = origin;
    }
  }

  private commit(
    record: StepRecord,
    t0: number,
    tokens0: Tokens,
    fallbacks: Array<{ stage: string; reason: string }>,
    gated:
      | {
          results: RolloutResult[];
          raw: RawPatch[];
          scoreBefore: number;
          scoreAfter: number;
          rejected: Array<Record<string, unknown>>;
        }
      | undefined,
  ): void {
    record.tokens = tokenDelta(this.input.tokenSnapshot(), tokens0);
    record.current_score = this.currentScore;
    record.best_score = this.bestScore;
    record.best_step = this.bestStep;
    if (gated) {
      record.current_origin = this.currentOrigin;
      record.best_origin = this.bestOrigin;
    }
    record.skill_len = this.current.length;
    record.skill_tokens = estimateSkillTokens(this.current);
    if (fallbacks.length) record.fallbacks = [...fallbacks];
    record.wall_time_s = round1((Date.now() - t0) / 1000);
    if (gated) {
      const entry = buildBufferEntry({
        step: record.step,
        action: record.action,
        results: gated.results,
        raw: gated.raw,
        scoreBefore: gated.scoreBefore,
        scoreAfter: gated.scoreAfter,
        rejected: gated.rejected,
      });
      this.buffer.push(entry);
      writeJsonAtomic(
        join(this.files.path('steps', stepDirName(record.step)), 'trajectory_digest.json'),
        entry,
      );
    }
    this.history.push(record);
    this.lastCompletedStep = record.step;
    this.files.commitStep(record, this.history, this.state(), this.current, this.best);
    this.ctx.emit({ type: 'step/finished', record });
  }

  /** Slow update then meta skill for this epoch; each is skipped on resume once done. */
  private async epochEnd(epoch: number): Promise<void> {
    const lastStep = epoch * this.spe;
    const prevSkill =
      epoch >= 2
        ? readFileSync(skillVersionPath(this.ctx.outDir, (epoch - 1) * this.spe), 'utf8')
        : this.current;
    if (this.s.useMetaReflect && this.metaReflectDoneEpoch < epoch) {
      await this.stage(lastStep, epoch, 'meta_reflect', () => this.metaReflectStage(epoch, lastStep));
    }
    // The meta skill compares against the skill before the slow update. A resume after the slow
    // update committed would see the updated skill as current, so the pre-slow text is kept on disk.
    const preSlowPath = this.files.path('slow_update', epochDirName(epoch), 'pre_slow_skill.md');
    if (this.s.useSlowUpdate && this.slowDoneEpoch < epoch) writeFileAtomic(preSlowPath, this.current);
    const preSlowSkill = existsSync(preSlowPath) ? readFileSync(preSlowPath, 'utf8') : this.current;
    let pairs: ComparisonPair[] | undefined;
    if (this.s.useSlowUpdate && this.slowDoneEpoch < epoch) {
      pairs = await this.stage(lastStep, epoch, 'slow_update', () =>
        this.slowUpdate(epoch, lastStep, prevSkill),
      );
    }
    let metaAction: string | undefined;
    if (this.s.useMetaSkill) {
      metaAction = await this.stage(lastStep, epoch, 'meta_skill', () =>
        this.metaSkillStage(epoch, prevSkill, preSlowSkill, pairs),
      );
    }
    this.lastCompletedEpoch = epoch;
    this.files.writeState(this.state());
    this.ctx.emit({
      type: 'epoch/finished',
      epoch,
      ...(this.s.useSlowUpdate ? { slowUpdate: this.currentOrigin } : {}),
      ...(metaAction ? { metaSkill: metaAction } : {}),
    });
  }

  /**
   * Meta reflect: higher-level edits from the whole epoch's history, applied to a meta candidate
   * that goes through the same gate as a step's. Its gate decision is saved with the result so a
   * resumed run re-applies it instead of asking again.
   */
  private async metaReflectStage(epoch: number, lastStep: number): Promise<void> {
    const dir = this.files.path('meta_reflect', epochDirName(epoch));
    const gatePath = join(dir, 'gate_result.json');
    const origin = `meta_reflect_${epochDirName(epoch)}`;
    const saved = readJsonIfExists<{ action: string; score: number }>(gatePath);
    if (saved) {
      if (saved.action !== 'reject' && existsSync(join(dir, 'candidate_skill.md'))) {
        this.applyVerdict(
          saved.action,
          readFileSync(join(dir, 'candidate_skill.md'), 'utf8'),
          saved.score,
          lastStep,
          origin,
        );
      }
    } else {
      const meta = await metaReflect(this.ctx, {
        epoch,
        skill: this.current,
        history: this.history.filter((r) => r.epoch === epoch),
        stepBuffer: this.bufferEpoch === epoch ? this.buffer : [],
        ...(this.metaSkill ? { metaSkill: this.metaSkill } : {}),
        dir,
      });
      if (meta.candidate) {
        this.ctx.emit({
          type: 'candidate/ready',
          step: lastStep,
          epoch,
          origin: 'meta_reflect',
          previousHash: skillHash(this.current),
          candidateHash: skillHash(meta.candidate),
          edits: meta.edits.map((e, i) => ({
            id: String(e.id ?? `edit-${i + 1}`),
            op: String(e.op),
            ...(e.target !== undefined ? { target: String(e.target) } : {}),
            ...(e.content !== undefined ? { content: String(e.content) } : {}),
            ...(meta.report[i] ? { status: meta.report[i].status } : {}),
          })),
          hunks: lineHunks(this.current, meta.candidate),
          candidatePath: join(dir, 'candidate_skill.md'),
        });
        const sel = await this.selection.evaluate(
          meta.candidate,
          join(dir, 'selection_eval'),
          lastStep,
          'meta_reflect',
        );
        const action = decideGate({
          candidate: sel.projected,
          current: this.currentScore,
          best: this.bestScore,
          useGate: this.s.useGate,
        });
        writeJsonAtomic(gatePath, {
          action,
          score: sel.projected,
          selection_hard: sel.score.hard,
          selection_soft: sel.score.soft,
        });
        this.applyVerdict(action, meta.candidate, sel.projected, lastStep, origin);
        this.ctx.emit({
          type: 'gate/verdict',
          step: lastStep,
          epoch,
          origin: 'meta_reflect',
          action,
          candidateScore: sel.projected,
          currentScore: this.currentScore,
          bestScore: this.bestScore,
          selectionHard: sel.score.hard,
          selectionSoft: sel.score.soft,
          cacheHit: sel.cacheHit,
        });
      } else {
        writeJsonAtomic(gatePath, { action: 'no_candidate', score: this.currentScore });
      }
    }
    this.metaReflectDoneEpoch = epoch;
    this.files.writeSkill(lastStep, this.current);
    this.files.writeBest(this.best);
    this.files.writeState(this.state());
  }

  private async slowUpdate(
    epoch: number,
    lastStep: number,
    prevSkill: string,
  ): Promise<ComparisonPair[] | undefined> {
    const dir = this.files.path('slow_update', epochDirName(epoch));
    const resultPath = join(dir, 'slow_result.json');
    const done = readJsonIfExists<{ action: string }>(resultPath);
    if (done) {
      // Crashed after the stage wrote its result but before the state commit: re-apply it.
      if (['inject_placeholder', 'accept', 'accept_new_best', 'force_accept'].includes(done.action)) {
        const cand =
          done.action === 'inject_placeholder'
            ? injectEmptySlowUpdate(this.current)
            : readFileSync(join(dir, 'candidate_skill.md'), 'utf8');
        const sc = (done as { selection_score?: number }).selection_score ?? this.currentScore;
        this.applyVerdict(
          done.action,
          cand,
          sc,
          lastStep,
          done.action === 'inject_placeholder'
            ? `slow_update_placeholder_${epochDirName(epoch)}`
            : `slow_update_${epochDirName(epoch)}`,
        );
        if (done.action === 'inject_placeholder')
          this.currentOrigin = `slow_update_placeholder_${epochDirName(epoch)}`;
      }
      this.commitSlow(epoch, lastStep);
      return loadPairs(dir);
    }
    if (epoch === 1) {
      this.current = injectEmptySlowUpdate(this.current);
      this.currentOrigin = `slow_update_placeholder_${epochDirName(epoch)}`;
      writeJsonAtomic(resultPath, { action: 'inject_placeholder', epoch: 1 });
      this.commitSlow(epoch, lastStep);
      return undefined;
    }
    const t0 = Date.now();
    const { kept, all } = await longitudinalPairs(this.ctx, {
      train: this.input.splits.train,
      epoch,
      prevSkill,
      currSkill: this.current,
      dir,
    });
    savePairs(dir, kept, all, this.s.pairPolicy);
    const previous = extractSlowUpdate(this.current) ?? '';
    // Saved as soon as it arrives: a stop during the slow-update gate must not pay for it again.
    const guidancePath = join(dir, 'slow_guidance.json');
    type Guidance = Awaited<ReturnType<typeof writeSlowGuidance>>;
    const saved = readJsonIfExists<{ guidance: Guidance }>(guidancePath);
    const guidance = saved
      ? saved.guidance
      : await writeSlowGuidance(this.ctx, prevSkill, this.current, previous, kept);
    if (!saved) writeJsonAtomic(guidancePath, { guidance });
    const prevHard = kept.filter((p) => p.prev.hard).length / Math.max(1, kept.length);
    const currHard = kept.filter((p) => p.curr.hard).length / Math.max(1, kept.length);
    const result: Record<string, unknown> = {
      reasoning: guidance?.reasoning ?? '',
      slow_update_content: guidance?.content ?? '',
      prev_hard: prevHard,
      curr_hard: currHard,
      update_origin: 'slow_update_momentum',
      update_target: 'Prevent cross-epoch regressions and fix failures that persist across epochs.',
    };
    if (!guidance) {
      result.action = 'no_content';
    } else {
      const candidate = replaceSlowUpdate(this.current, guidance.content);
      writeFileAtomic(join(dir, 'candidate_skill.md'), candidate);
      result.candidate_hash = skillHash(candidate);
      this.ctx.emit({
        type: 'candidate/ready',
        step: lastStep,
        epoch,
        origin: 'slow_update',
        previousHash: skillHash(this.current),
        candidateHash: skillHash(candidate),
        edits: [],
        hunks: lineHunks(this.current, candidate),
        candidatePath: join(dir, 'candidate_skill.md'),
      });
      // Gated (the paper's setting) or force-accepted; either way the score is measured, so the
      // current score never goes stale (the reference keeps the pre-update score on force-accept).
      const sel = await this.selection.evaluate(
        candidate,
        join(dir, 'selection_eval'),
        lastStep,
        'slow_update',
      );
      const action = this.s.slowUpdateGate
        ? decideGate({
            candidate: sel.projected,
            current: this.currentScore,
            best: this.bestScore,
            useGate: true,
          })
        : 'force_accept';
      this.applyVerdict(action, candidate, sel.projected, lastStep, `slow_update_${epochDirName(epoch)}`);
      result.action = action;
      result.selection_hard = sel.score.hard;
      result.selection_soft = sel.score.soft;
      result.selection_score = sel.projected;
      this.ctx.emit({
        type: 'gate/verdict',
        step: lastStep,
        epoch,
        origin: 'slow_update',
        action,
        candidateScore: sel.projected,
        currentScore: this.currentScore,
        bestScore: this.bestScore,
        selectionHard: sel.score.hard,
        selectionSoft: sel.score.soft,
        cacheHit: sel.cacheHit,
      });
    }
    result.time_s = round1((Date.now() - t0) / 1000);
    writeJsonAtomic(resultPath, result);
    this.commitSlow(epoch, lastStep);
    return kept;
  }

  private commitSlow(epoch: number, lastStep: number): void {
    this.slowDoneEpoch = epoch;
    this.files.writeSkill(lastStep, this.current);
    this.files.writeBest(this.best);
    this.files.writeState(this.state());
  }

  private async metaSkillStage(
    epoch: number,
    prevSkill: string,
    currSkill: string,
    slowPairs: ComparisonPair[] | undefined,
  ): Promise<string> {
    const dir = this.files.path('meta_skill', epochDirName(epoch));
    const resultPath = join(dir, 'meta_skill_result.json');
    const done = readJsonIfExists<{ action: string; meta_skill_content?: string }>(resultPath);
    if (done) {
      if (done.meta_skill_content) this.metaSkill = done.meta_skill_content;
      return done.action;
    }
    let result: Record<string, unknown>;
    if (epoch === 1) {
      result = { action: 'skip_first_epoch', epoch: 1 };
    } else if (epoch === this.s.numEpochs) {
      // The reference writes one here that nothing ever reads; we save the calls.
      result = { action: 'skip_last_epoch', epoch };
    } else {
      const t0 = Date.now();
      let pairs = slowPairs ?? loadPairs(this.files.path('slow_update', epochDirName(epoch)));
      if (!pairs) {
        const { kept, all } = await longitudinalPairs(this.ctx, {
          train: this.input.splits.train,
          epoch,
          prevSkill,
          currSkill,
          dir,
        });
        savePairs(dir, kept, all, this.s.pairPolicy);
        pairs = kept;
      }
      const memory = await writeMetaSkill(this.ctx, prevSkill, currSkill, this.metaSkill, pairs);
      result = memory
        ? { reasoning: memory.reasoning, meta_skill_content: memory.content, action: 'write_meta_skill' }
        : { action: 'no_content' };
      result.time_s = round1((Date.now() - t0) / 1000);
      if (memory) this.metaSkill = memory.content;
    }
    writeJsonAtomic(resultPath, result);
    return String(result.action);
  }

  private async finish(stoppedEarly?: string): Promise<TrainOutcome> {
    // The person may overrule the last step while the epoch end runs: it counts for the final skill.
    this.applyOverrules();
    let finalSel: Score | undefined;
    const lastStep = this.lastCompletedStep;
    if (this.s.evalTest) {
      if (skillHash(this.current) !== skillHash(this.best)) {
        const sel = await this.stage(lastStep, this.s.numEpochs, 'final_selection', () =>
          this.selection.evaluate(
            this.current,
            this.files.path('final_selection_eval'),
            lastStep,
            'final_selection',
          ),
        );
        finalSel = sel.score;
        const promote = sel.projected > this.bestScore;
        if (promote) {
          this.best = this.current;
          this.bestScore = sel.projected;
          this.bestStep = lastStep;
          this.bestOrigin = this.currentOrigin;
          this.files.writeBest(this.best);
        }
        this.ctx.emit({
          type: 'gate/verdict',
          step: lastStep,
          epoch: this.s.numEpochs,
          origin: 'final',
          action: promote ? 'promote' : 'keep',
          candidateScore: sel.projected,
          currentScore: this.currentScore,
          bestScore: this.bestScore,
          selectionHard: sel.score.hard,
          selectionSoft: sel.score.soft,
          cacheHit: sel.cacheHit,
        });
      } else {
        finalSel = this.selCache.get(skillHash(this.best));
      }
      this.files.writeState(this.state());
    }
    let tests: { baseline?: TestSummary; best?: TestSummary; final?: TestSummary } = {};
    if (this.s.evalTest && this.input.splits.test.size > 0) {
      tests = await this.stage(lastStep, this.s.numEpochs, 'test', async () => {
        const run = (skill: string, dir: string): Promise<TestSummary> =>
          evaluateTestSplit(this.ctx, this.input.splits.test, skill, this.files.path(dir), this.s.testEnvNum);
        // Most runs end on their best skill: score it once and give the final folder the same rows.
        const sameAsBest = skillHash(this.current) === skillHash(this.best);
        const bestRun = run(this.best, 'test_eval');
        const [baseline, best, final] = await Promise.all([
          run(this.input.initialSkill, 'test_eval_baseline'),
          bestRun,
          sameAsBest
            ? bestRun.then((b) => {
                cpSync(this.files.path('test_eval'), this.files.path('test_eval_final'), { recursive: true });
                return b;
              })
            : run(this.current, 'test_eval_final'),
        ]);
        return { baseline, best, final };
      });
    }
    this.writeSummary(finalSel, tests, stoppedEarly);
    this.ctx.emit({
      type: 'run/finished',
      outDir: this.ctx.outDir,
      bestStep: this.bestStep,
      bestScore: this.bestScore,
      baselineScore: this.baselineScore,
      bestSkillPath: this.files.path('best_skill.md'),
      reportPath: this.files.path('report.md'),
      ...(stoppedEarly ? { stoppedEarly } : {}),
      ...(tests.best
        ? {
            test: {
              baseline: tests.baseline?.overall.hard,
              best: tests.best.overall.hard,
              final: tests.final?.overall.hard,
            },
          }
        : {}),
    });
    return {
      status: 'finished',
      ...(stoppedEarly ? { reason: stoppedEarly } : {}),
      bestStep: this.bestStep,
      bestScore: this.bestScore,
      baselineScore: this.baselineScore,
      history: this.history,
    };
  }

  private writeSummary(
    finalSel: Score | undefined,
    tests: { baseline?: TestSummary; best?: TestSummary; final?: TestSummary },
    stoppedEarly?: string,
  ): void {
    const count = (pred: (a: StepAction) => boolean): number =>
      this.history.filter((r) => pred(r.action)).length;
    const epochs = [...new Set(this.history.map((r) => r.epoch))].sort((a, b) => a - b);
    const th = (t?: TestSummary): number | null => t?.overall.hard ?? null;
    const ts = (t?: TestSummary): number | null => t?.overall.soft ?? null;
    const summary = {
      version: `${ENGINE_ID}-${VERSION}`,
      config: this.input.flatConfig,
      baseline_selection_hard: this.baselineScore,
      best_selection_hard: this.bestScore,
      final_selection_hard: finalSel?.hard ?? null,
      final_selection_soft: finalSel?.soft ?? null,
      best_step: this.bestStep,
      current_origin: this.currentOrigin,
      best_origin: this.bestOrigin,
      total_steps: this.history.length,
      ...(stoppedEarly ? { stopped_early: stoppedEarly } : {}),
      total_accepts: count((a) => a.includes('accept')),
      total_rejects: count((a) => a === 'reject'),
      total_skips: count((a) => a.startsWith('skip')),
      epoch_stats: epochs.map((e) => {
        const recs = this.history.filter((r) => r.epoch === e);
        const last = recs[recs.length - 1];
        return {
          epoch: e,
          steps: recs.map((r) => r.step),
          accepts: recs.filter((r) => r.action.includes('accept')).length,
          rejects: recs.filter((r) => r.action === 'reject').length,
          skips: recs.filter((r) => r.action.startsWith('skip')).length,
          best_score_at_epoch_end: last.best_score,
          current_score_at_epoch_end: last.current_score,
        };
      }),
      baseline_test_hard: th(tests.baseline),
      baseline_test_soft: ts(tests.baseline),
      test_hard: th(tests.best),
      test_soft: ts(tests.best),
      final_test_hard: th(tests.final),
      final_test_soft: ts(tests.final),
      test_delta_hard: tests.best && tests.baseline ? th(tests.best)! - th(tests.baseline)! : null,
      final_test_delta_hard: tests.final && tests.baseline ? th(tests.final)! - th(tests.baseline)! : null,
      total_wall_time_s: round1((Date.now() - this.started) / 1000),
      token_summary: this.input.totalTokens(),
    };
    const report = buildReport({
      outDir: this.ctx.outDir,
      history: this.history,
      baselineSelection: this.baselineScore,
      bestSelection: this.bestScore,
      finalSelection: finalSel ? this.selection.project(finalSel, this.current) : null,
      tests: {
        ...(tests.baseline ? { initial: tests.baseline.overall.hard } : {}),
        ...(tests.best ? { best: tests.best.overall.hard } : {}),
        ...(tests.final ? { final: tests.final.overall.hard } : {}),
      },
      accounting: this.input.accountingSnapshot(),
      bestSkill: this.best,
      provenance: readJsonIfExists<ProvenanceRecord[]>(this.files.path('provenance.json')) ?? [],
      humanDecisions: (readJsonIfExists<unknown[]>(this.files.path('human_decisions.json')) ?? []).length,
      ...(stoppedEarly ? { stoppedEarly } : {}),
    });
    writeJsonAtomic(this.files.path('summary.json'), { ...summary, report });
    const simulated = this.ctx.optimizer.backend === 'sim' || this.ctx.target.backend === 'sim';
    writeFileAtomic(this.files.path('report.md'), renderReport(report, this.ctx.outDir, simulated));
  }
}

export { applyPairPolicy, buildPairs };

function humanRejectedItems(
  edits: readonly Edit[],
  rejected: ReadonlyArray<{ id: string; reason?: string }>,
): Array<Record<string, unknown>> {
  const byId = new Map(edits.map((e) => [String(e.id), e]));
  return rejected.flatMap((r) => {
    const e = byId.get(r.id);
    return e
      ? [
          {
            op: e.op,
            target: e.target ?? '',
            content: e.content ?? '',
            human: true,
            ...(r.reason ? { reason: r.reason } : {}),
          },
        ]
      : [];
  });
}

export type { EditDecision };

/** Give merged edits stable ids and flag pairs that pull the same rule in opposite directions. */
function withConflicts(merged: MergedPatch, mode: UpdateMode): MergedPatch {
  if (mode !== 'patch') return merged;
  const key = payloadKey(mode);
  const items = assignEditIds(itemsOf(merged, mode) as Edit[]) as Item[];
  const conflicts = detectConflicts(items);
  if (conflicts.length) {
    for (const c of conflicts) {
      for (const [self, other] of [
        [c.a, c.b],
        [c.b, c.a],
      ] as const) {
        const item = items.find((i) => i.id === self);
        if (item) item.conflicts_with = [...((item.conflicts_with as string[] | undefined) ?? []), other];
      }
    }
  }
  return { ...merged, [key]: items, ...(conflicts.length ? { conflicts } : {}) };
}
