import type { StepRecord } from '../../protocol/records';
import { planTrainEpoch } from '../data/plan';
import { SkillOptError } from '../errors';
import { leftRunningText } from '../llm/batch/cancel';
import { injectEmptyAppendix } from '../skill/document';
import { makeDir, writeJsonAtomic } from '../store/atomic';
import { RUN_DIR, RUN_FILE } from '../store/layout';
import { runEpochEnd } from './epochStages';
import { finalize, noSkillOff, noSkillRecord } from './finalize';
import { gatePower } from './gateSettings';
import { applyOverrules } from './humanReview';
import { LoopContext, type TrainInput } from './loopContext';
import { checkSameConfig } from './sameRun';
import { writeStoppedReport } from './runReport';
import { checkSameData } from './sameData';
import { runStep } from './step/runStep';
import { dropSpeculation } from './speculate';
import { artifactSchemas, readArtifact } from '../store/runSchemas';
import { patienceReason, stopReason, STOPPED_BY_REQUEST } from './stopConditions';
import { skillUseWarning } from './agentSkillUse';

export type { TrainInput };

export interface TrainOutcome {
  status: 'finished' | 'stopped';
  reason?: string;
  bestStep: number;
  bestScore: number;
  baselineScore: number;
  history: StepRecord[];
}

/**
 * The SkillOpt training loop (reference §1–§6): the baseline, then per step the stage pipeline
 * (src/engine/train/step/), at epoch ends the epoch-end stages (src/engine/train/epochStages/),
 * then the final check, the test split and the report (finalize.ts). Every completed stage leaves
 * an artifact that a resumed run reuses, and runtime_state.json is the commit point of each step.
 */
export class Trainer {
  private readonly loop: LoopContext;
  /** The baseline while it runs beside step 1. */
  private baselineRun: Promise<void> | undefined;
  /** The run folder is this run's (its config checked, run/started sent): a stop may write its report. */
  private began = false;

  constructor(input: TrainInput) {
    this.loop = new LoopContext(input);
  }

  /** report.md of a run that stopped or failed after it began (none for a folder it refused). */
  reportStop(reason: string): void {
    if (this.began) writeStoppedReport(this.loop, reason);
  }

  /** Called by the run context's recordFallback. */
  noteFallback(stage: string, reason: string): void {
    this.loop.noteFallback(stage, reason);
  }

  async run(): Promise<TrainOutcome> {
    try {
      return await this.runLoop();
    } finally {
      // Nothing may still write to the run folder once run() returns.
      await dropSpeculation(this.loop);
    }
  }

  private async runLoop(): Promise<TrainOutcome> {
    const { loop } = this;
    const { state, s, ctx, input } = loop;
    makeDir(ctx.outDir);
    const resumed = state.restore();
    // config.json is written before the first call: a run killed before its first save (during
    // step 1 or its baseline, with calls paid) has started too, keeps its config, and starts over
    // from the work it paid for. --resume on a folder with no run is refused before (run.ts).
    const saved = readArtifact<Record<string, unknown>>(
      loop.layout.file(RUN_FILE.config),
      artifactSchemas.config,
    );
    if (saved) {
      const changed = checkSameConfig(ctx.outDir, saved, input.flatConfig, input.forceConfig);
      if (changed.length) {
        ctx.emit({
          type: 'warning',
          message: `resuming under a changed config (--force); the steps already done keep their results: ${changed.join('; ')}`,
        });
      }
      if (!resumed)
        ctx.emit({
          type: 'warning',
          message:
            'no step of this run was saved before it stopped: it starts again at step 1, reusing the replies it kept (the ledger keeps what was paid)',
        });
    }
    const dataNotice = input.taskData && checkSameData(loop.layout, input.taskData, resumed);
    if (dataNotice) ctx.emit({ type: 'warning', message: dataNotice });
    input.splits.persist?.();
    writeJsonAtomic(loop.layout.file(RUN_FILE.config), input.flatConfig);
    // The run's copy of the skill it started with wins over the file as it is now, also for a run
    // killed before its first save: its kept replies (baseline, step 1) were answered under that copy.
    const ownCopy = resumed ? loop.files.readSkill(0) : loop.files.readSkillIfAny(0);
    if (ownCopy === undefined) loop.files.writeSkill(0, input.initialSkill);
    else if (ownCopy !== input.initialSkill) {
      if (!resumed) state.current = state.best = ownCopy;
      ctx.emit({
        type: 'warning',
        message: `the skill file changed since this run started; the run goes on from its own copy (${loop.layout.skillVersion(0)}); --fresh starts a new run from the changed file`,
      });
    }
    // Skill-aware reflection trains with an (empty) appendix from the start, as the reference does;
    // skill_v0000.md stays the file as given.
    if (s.skillAware.enabled) state.current = injectEmptyAppendix(state.current);
    ctx.emit({
      type: 'run/started',
      runId: ctx.outDir,
      outDir: ctx.outDir,
      totalSteps: loop.totalSteps,
      epochs: s.numEpochs,
      stepsPerEpoch: loop.stepsPerEpoch,
      splitSizes: {
        train: input.splits.train.length,
        val: input.splits.val.length,
        test: input.splits.test.size,
      },
      optimizer: `${ctx.optimizer.backend}/${ctx.optimizer.model}`,
      target: ctx.targetName ?? `${ctx.target.backend}/${ctx.target.model}`,
      simulated: ctx.optimizer.backend === 'sim' || ctx.target.backend === 'sim',
      ...(resumed ? { resumedFromStep: state.lastCompletedStep + 1 } : {}),
      ...(s.useGate ? { gatePower: gatePower(s, input.splits.val.length) } : { gateOff: true }),
    });
    this.began = true;

    try {
      // A resumed run over one of its caps stops before it spends anything more.
      const over = stopReason(loop);
      if (over) return this.stopped(over);
      // Step 1's rollouts and reflection do not need the baseline score, only its gate does: the
      // baseline runs beside them, its requests after step 1's (which the analysts wait for),
      // unless a cap must see its spend before step 1 starts.
      let besideStep1: (() => Promise<void>) | undefined;
      if (state.currentScore < 0) {
        const start = (): Promise<void> => {
          // Step 1 makes no selection call before its gate, which waits for the baseline.
          this.baselineRun ??= input.ledger.within('selection', 0, 'baseline', () => this.baseline());
          this.baselineRun.catch(() => undefined);
          return this.baselineRun;
        };
        if (input.budgetCapped) await start();
        else besideStep1 = start;
      }
      for (let epoch = 1; epoch <= s.numEpochs; epoch++) {
        if (state.lastCompletedEpoch < epoch) {
          // Only an epoch still to run starts a new buffer: a resume passing a finished epoch keeps
          // the buffer of the one it resumes in.
          if (state.bufferEpoch !== epoch) {
            state.buffer = [];
            state.bufferEpoch = epoch;
          }
          const plan = planTrainEpoch(input.splits.train, {
            seed: s.seed,
            epoch,
            batchSize: s.batchSize,
            accumulation: s.accumulation,
          });
          for (let sie = 0; sie < loop.stepsPerEpoch; sie++) {
            const step = (epoch - 1) * loop.stepsPerEpoch + sie + 1;
            if (step <= state.lastCompletedStep) continue;
            applyOverrules(loop);
            const stop = stopReason(loop);
            if (stop) {
              await this.baselineRun?.catch(() => undefined);
              return this.stopped(stop);
            }
            const batches = plan.slice(sie * s.accumulation, (sie + 1) * s.accumulation);
            const beside = besideStep1;
            besideStep1 = undefined;
            try {
              await runStep(loop, { step, epoch, stepInEpoch: sie, batches, ...(beside ? { beside } : {}) });
            } catch (err) {
              // The baseline comes first (when it started): its failure is the one a sequential run reports.
              await this.baselineRun;
              throw err;
            }
            this.baselineRun = undefined;
            if (patienceReason(loop)) break;
          }
          // An overrule of the epoch's last step counts before the slow update reads the skill.
          applyOverrules(loop);
          const stop = stopReason(loop);
          if (stop) return this.stopped(stop);
          await runEpochEnd(loop, epoch);
        }
        const patience = patienceReason(loop);
        if (patience) return await this.finish(patience);
      }
      return await this.finish();
    } catch (err) {
      // Nothing may still write to the run folder once run() returns.
      await this.baselineRun?.catch(() => undefined);
      if (SkillOptError.is(err, 'cancelled') || ctx.signal.aborted) {
        // A stop while a provider batch is out says what becomes of it (left running, collected on resume).
        // Every batch still out, not only the one whose wait the stop cut first.
        const batchOut = SkillOptError.is(err, 'cancelled') && err.place.fix;
        const left = batchOut
          ? (leftRunningText(
              loop.layout.root,
              loop.input.cancelBatchCommand ?? 'the resume command with --cancel-batch in place of --resume',
              RUN_DIR.evalOnly,
            ) ?? err.place.fix)
          : undefined;
        return this.stopped(left ? `${STOPPED_BY_REQUEST}; ${left}` : STOPPED_BY_REQUEST);
      }
      throw err;
    }
  }

  /** The initial skill's selection score: the first current and best. */
  private async baseline(): Promise<void> {
    const { loop } = this;
    const { state } = loop;
    const out = await loop.stage(0, 0, 'baseline', () =>
      loop.selection.evaluate(state.current, loop.layout.file(RUN_DIR.baselineSelection), 0, 'baseline'),
    );
    state.currentScore = state.bestScore = state.baselineScore = out.projected;
    loop.ctx.emit({
      type: 'baseline/scored',
      hard: out.score.hard,
      soft: out.score.soft,
      score: out.projected,
    });
    const unused = skillUseWarning('baseline selection', out.results);
    if (unused) loop.ctx.emit({ type: 'warning', message: unused });
    loop.files.writeBest(state.best);
    state.save();
  }

  private outcome(status: TrainOutcome['status'], reason?: string): TrainOutcome {
    const { state } = this.loop;
    return {
      status,
      ...(reason ? { reason } : {}),
      bestStep: state.bestStep,
      bestScore: state.bestScore,
      baselineScore: state.baselineScore,
      history: state.history,
    };
  }

  private stopped(reason: string): TrainOutcome {
    const { ctx, input } = this.loop;
    const cap = reason.startsWith(STOPPED_BY_REQUEST) ? undefined : input.capReached?.();
    ctx.emit({
      type: 'run/stopped',
      outDir: ctx.outDir,
      reason,
      resumeCommand: input.resumeCommand,
      ...(cap ? { cap } : {}),
    });
    return this.outcome('stopped', reason);
  }

  private async finish(stoppedEarly?: string): Promise<TrainOutcome> {
    const { loop } = this;
    const { state, layout } = loop;
    await dropSpeculation(loop);
    const tests = await finalize(loop, stoppedEarly);
    const noSkill = noSkillRecord(tests);
    loop.ctx.emit({
      type: 'run/finished',
      outDir: loop.ctx.outDir,
      bestStep: state.bestStep,
      bestScore: state.bestScore,
      baselineScore: state.baselineScore,
      bestSkillPath: layout.file(RUN_FILE.bestSkill),
      reportPath: layout.file(RUN_FILE.report),
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
      ...(tests.check ? { testCheck: tests.check } : {}),
      ...(noSkill ? { noSkill } : noSkillOff(loop.s) ? { noSkillOff: true as const } : {}),
    });
    return this.outcome('finished', stoppedEarly);
  }
}
