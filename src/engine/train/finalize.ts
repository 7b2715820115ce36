/**
 * The end of a run: the person's last overrules, the final selection check, the test split scored
 * for the initial, best and final skills, and `summary.json` + `report.md`.
 */
import { round1 } from './step/record';
import { cpSync } from 'node:fs';
import { settleAll } from './settleAll';
import type { NoSkillScores, Score } from '../../protocol/records';
import {
  ENGINE_ID,
  isAccepted,
  isInconclusive,
  isRejected,
  isSkipped,
  VERSION,
} from '../../protocol/vocabulary';
import { skillHash } from '../skill/document';
import { writeJsonAtomic } from '../store/atomic';
import { RUN_DIR, RUN_FILE } from '../store/layout';
import { finalCheckRecord, type FinalCheckRecord } from '../store/replayVerdicts';
import { testCheck, type TestCheck } from './testCheck';
import { evaluateTestSplit, type TestSummary } from './evaluate';
import { finalCheck } from './gateCandidate';
import { gatePower } from './gateSettings';
import type { TrainSettings } from './settings';
import { applyOverrules } from './humanReview';
import type { LoopContext } from './loopContext';
import type { SpeedFigures } from './report';
import { loopReport, writeReportMd } from './runReport';
import { promptCacheSummary } from '../llm/spendText';

export interface TestResults {
  baseline?: TestSummary;
  best?: TestSummary;
  final?: TestSummary;
  /** The test scores' intervals and whether the selection gain shows on test. */
  check?: TestCheck;
  /** evaluation.no_skill_baseline: the target with no skill at all. */
  noSkill?: { selection: Score; test?: TestSummary };
}

export async function finalize(loop: LoopContext, stoppedEarly?: string): Promise<TestResults> {
  const { state, s, files, layout } = loop;
  // The person may overrule the last step while the epoch end runs: it counts for the final skill.
  applyOverrules(loop);
  let finalSel: Score | undefined;
  let finalVerdict: FinalCheckRecord | undefined;
  const lastStep = state.lastCompletedStep;
  loop.input.ledger.track(lastStep, 'final');
  if (s.evalTest) {
    if (skillHash(state.current) !== skillHash(state.best)) {
      const check = await finalCheck(loop, lastStep, layout.file(RUN_DIR.finalSelection));
      finalSel = check.score;
      finalVerdict = finalCheckRecord(check.verdict);
      if (check.promoted) files.writeBest(state.best);
    } else {
      finalSel = state.selectionCache.get(skillHash(state.best));
    }
    state.save();
  }
  let tests: TestResults = {};
  if (s.evalTest && loop.input.splits.test.size > 0) {
    tests = await loop.stage(lastStep, s.numEpochs, 'test', async () => {
      const run = (skill: string, dir: string): Promise<TestSummary> =>
        evaluateTestSplit(loop.ctx, loop.input.splits.test, skill, layout.file(dir), s.testEnvNum);
      // Most runs end on their best skill: score it once and give the final folder the same rows.
      const sameAsBest = skillHash(state.current) === skillHash(state.best);
      const bestRun = run(state.best, RUN_DIR.testBest);
      const [baseline, best, final] = await settleAll([
        // The run's own copy: the user's file may have changed since the run started.
        run(files.readSkill(0), RUN_DIR.testBaseline),
        bestRun,
        sameAsBest
          ? bestRun.then((b) => {
              cpSync(layout.file(RUN_DIR.testBest), layout.file(RUN_DIR.testFinal), { recursive: true });
              return b;
            })
          : run(state.current, RUN_DIR.testFinal),
      ]);
      return { baseline, best, final };
    });
  }
  if (s.noSkillBaseline && s.evalTest) tests = { ...tests, noSkill: await noSkillScores(loop, lastStep) };
  const check = testCheck(
    {
      ...(tests.baseline ? { initial: tests.baseline } : {}),
      ...(tests.best ? { best: tests.best } : {}),
      ...(tests.final ? { final: tests.final } : {}),
    },
    state.bestScore - state.baselineScore,
    { alpha: s.gate.alpha, seed: s.seed },
  );
  if (check) tests = { ...tests, check };
  writeSummary(loop, { score: finalSel, verdict: finalVerdict }, tests, stoppedEarly);
  return tests;
}

/** The target with no skill at all, on the selection split and the test split: does the skill help? */
async function noSkillScores(loop: LoopContext, step: number): Promise<NonNullable<TestResults['noSkill']>> {
  const { s, layout } = loop;
  return loop.stage(step, s.numEpochs, 'test', async () => {
    const [sel, test] = await settleAll([
      loop.selection.evaluate('', layout.file(RUN_DIR.noSkillSelection), step, 'final_selection'),
      loop.input.splits.test.size > 0
        ? evaluateTestSplit(
            loop.ctx,
            loop.input.splits.test,
            '',
            layout.file(RUN_DIR.testNoSkill),
            s.testEnvNum,
          )
        : undefined,
    ]);
    loop.state.save();
    return { selection: sel.score, ...(test ? { test } : {}) };
  });
}

/** The target alone, as summary.json, the report and the run/finished event give it. */
export function noSkillRecord(tests: TestResults): NoSkillScores | undefined {
  const n = tests.noSkill;
  return n ? { selection: n.selection.hard, test: n.test?.overall.hard ?? null } : undefined;
}

/** The run scores its end but was told not to score the target alone: said where the row would be. */
export function noSkillOff(s: TrainSettings): boolean {
  return s.evalTest && !s.noSkillBaseline;
}

function writeSummary(
  loop: LoopContext,
  final: { score: Score | undefined; verdict: FinalCheckRecord | undefined },
  tests: TestResults,
  stoppedEarly?: string,
): void {
  const { state, layout } = loop;
  const finalSel = final.score;
  const history = state.history;
  const speed = speedFigures(loop);
  const count = (pred: (a: string) => boolean, recs = history): number =>
    recs.filter((r) => pred(r.action)).length;
  const epochs = [...new Set(history.map((r) => r.epoch))].sort((a, b) => a - b);
  const th = (t?: TestSummary): number | null => t?.overall.hard ?? null;
  const ts = (t?: TestSummary): number | null => t?.overall.soft ?? null;
  const check = tests.check;
  const noSkill = noSkillRecord(tests);
  const power = gatePower(loop.s, loop.input.splits.val.length);
  const summary = {
    version: `${ENGINE_ID}-${VERSION}`,
    config: loop.input.flatConfig,
    baseline_selection_hard: state.baselineScore,
    best_selection_hard: state.bestScore,
    final_selection_hard: finalSel?.hard ?? null,
    final_selection_soft: finalSel?.soft ?? null,
    // The final check's verdict, so a run opened from its folder shows it (replayVerdicts.ts).
    ...(final.verdict ? { final_check: final.verdict } : {}),
    best_step: state.bestStep,
    current_origin: state.currentOrigin,
    best_origin: state.bestOrigin,
    total_steps: history.length,
    ...(stoppedEarly ? { stopped_early: stoppedEarly } : {}),
    total_accepts: count(isAccepted),
    total_rejects: count(isRejected),
    // The paired gate's "could not tell": neither kept nor proven worse (accepts + rejects + skips +
    // inconclusive = total_steps).
    total_inconclusive: count(isInconclusive),
    total_skips: count(isSkipped),
    epoch_stats: epochs.map((e) => {
      const recs = history.filter((r) => r.epoch === e);
      const last = recs[recs.length - 1];
      return {
        epoch: e,
        steps: recs.map((r) => r.step),
        accepts: count(isAccepted, recs),
        rejects: count(isRejected, recs),
        inconclusive: count(isInconclusive, recs),
        skips: count(isSkipped, recs),
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
    ...(check ? { test_check: check } : {}),
    ...(noSkill ? { no_skill_selection_hard: noSkill.selection, no_skill_test_hard: noSkill.test } : {}),
    ...(power ? { gate_power: power } : {}),
    total_wall_time_s: round1((Date.now() - loop.started) / 1000),
    token_summary: loop.input.totalTokens(),
    prompt_cache: promptCacheSummary(loop.input.accountingSnapshot().totals),
  };
  const report = loopReport(loop, {
    finalSelection: finalSel ? loop.selection.project(finalSel, state.current) : null,
    tests: {
      ...(tests.baseline ? { initial: tests.baseline.overall.hard } : {}),
      ...(tests.best ? { best: tests.best.overall.hard } : {}),
      ...(tests.final ? { final: tests.final.overall.hard } : {}),
    },
    ...(check ? { testCheck: check } : {}),
    ...(noSkill ? { noSkill } : {}),
    noSkillOff: noSkillOff(loop.s),
    ...(stoppedEarly ? { stoppedEarly } : {}),
    ...(speed ? { speed } : {}),
  });
  const activation = report.activation;
  writeJsonAtomic(layout.file(RUN_FILE.summary), {
    ...summary,
    ...(activation ? { activation } : {}),
    ...(speed ? { speed } : {}),
    report,
  });
  writeReportMd(loop, report);
}

/** summary.json `speed`: what the speed options saved or added, when one of them is on. */
function speedFigures(loop: LoopContext): SpeedFigures | undefined {
  const { s, speed } = loop;
  if (!s.earlyStop && !s.speculate) return undefined;
  return {
    ...(s.earlyStop ? { selection_calls_saved: speed.selectionCallsSaved } : {}),
    ...(s.speculate
      ? {
          speculative_calls: speed.speculativeCalls,
          speculative_calls_discarded: speed.speculativeCallsDiscarded,
        }
      : {}),
  };
}
