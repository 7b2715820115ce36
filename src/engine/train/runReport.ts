/**
 * report.md and summary.json's `report` from the loop's state: at the end of a run (finalize.ts),
 * and for a run that stopped or failed part way (a cap, errored items, a stop request), so the
 * reliability section is there for the runs that most need it.
 */
import type { NoSkillScores, TestCheck } from '../../protocol/records';
import { activationSummary } from '../activation/summary';
import { writeFileAtomic } from '../store/atomic';
import { join } from 'node:path';
import { RUN_FILE, STEP_FILE } from '../store/layout';
import { epochEndGateEvidence } from '../store/replayVerdicts';
import { artifactSchemas, readArtifact } from '../store/runSchemas';
import { readActivationHistory } from './epochStages/activation';
import { gatePower } from './gateSettings';
import type { LoopContext } from './loopContext';
import type { ProvenanceRecord } from './provenance';
import { buildReport, type GateTestRow, type RunReport, type SpeedFigures } from './report';
import { renderReport } from './reportMarkdown';
import { messageOf } from '../errors';

export interface ReportEnd {
  finalSelection: number | null;
  tests: { initial?: number; best?: number; final?: number };
  testCheck?: TestCheck;
  noSkill?: NoSkillScores;
  noSkillOff?: boolean;
  stoppedEarly?: string;
  speed?: SpeedFigures;
}

/** The epoch ends' gate findings, from their result files (written as each epoch end is decided). */
function epochEndGates(loop: LoopContext): GateTestRow[] {
  const epochs = [...new Set(loop.state.history.map((r) => r.epoch))];
  return epochs.flatMap((epoch) => {
    const step = Math.max(...loop.state.history.filter((r) => r.epoch === epoch).map((r) => r.step));
    return (
      [
        ['slow_update', STEP_FILE.slowResult],
        ['meta_reflect', STEP_FILE.gateResult],
      ] as const
    ).flatMap(([origin, file]) => {
      const res = readArtifact<{ action: string }>(
        join(loop.layout.epochDir(origin, epoch), file),
        origin === 'slow_update' ? artifactSchemas.slowResult : artifactSchemas.gateResult,
      );
      const found = res ? epochEndGateEvidence(res) : {};
      if (!res || (!found.gateTest && !found.itemRegressions)) return [];
      return [
        {
          step,
          action: res.action,
          origin,
          epoch,
          ...(found.gateTest ? { test: found.gateTest } : {}),
          ...(found.itemRegressions ? { item_regressions: found.itemRegressions } : {}),
        },
      ];
    });
  });
}

/** The run report of the loop as it stands. */
export function loopReport(loop: LoopContext, end: ReportEnd): RunReport {
  const { state, layout } = loop;
  const activation = loop.input.activation
    ? activationSummary(loop.input.activation, readActivationHistory(loop))
    : undefined;
  return buildReport({
    outDir: loop.ctx.outDir,
    history: state.history,
    baselineSelection: state.baselineScore,
    bestSelection: state.bestScore,
    finalSelection: end.finalSelection,
    tests: end.tests,
    accounting: loop.input.accountingSnapshot(),
    bestSkill: state.best,
    provenance:
      readArtifact<ProvenanceRecord[]>(layout.file(RUN_FILE.provenance), artifactSchemas.records) ?? [],
    ...(end.testCheck ? { testCheck: end.testCheck } : {}),
    ...(end.noSkill ? { noSkill: end.noSkill } : {}),
    ...(end.noSkillOff ? { noSkillOff: true } : {}),
    ...(loop.s.useGate ? { gatePower: gatePower(loop.s, loop.input.splits.val.length) } : { gateOff: true }),
    humanDecisions: (
      readArtifact<unknown[]>(layout.file(RUN_FILE.humanDecisions), artifactSchemas.records) ?? []
    ).length,
    ...(end.stoppedEarly ? { stoppedEarly: end.stoppedEarly } : {}),
    epochEndGates: epochEndGates(loop),
    ...(activation ? { activation } : {}),
    ...(end.speed ? { speed: end.speed } : {}),
  });
}

export function writeReportMd(loop: LoopContext, report: RunReport, stopped?: { reason: string }): void {
  const simulated = loop.ctx.optimizer.backend === 'sim' || loop.ctx.target.backend === 'sim';
  writeFileAtomic(
    loop.layout.file(RUN_FILE.report),
    renderReport(
      report,
      loop.ctx.outDir,
      simulated,
      stopped && { ...stopped, resume: loop.input.resumeCommand },
    ),
  );
}

/**
 * report.md of a run that ended before its end: what it reached, its spend and its reliability
 * (errored items by cause, retries, re-asks, fallbacks), headed as a stopped run's report. A
 * resumed run that finishes replaces it. Never throws: the stop's own cause is what to report.
 */
export function writeStoppedReport(loop: LoopContext, reason: string): void {
  try {
    const report = loopReport(loop, { finalSelection: null, tests: {} });
    // Scores the run never reached are unknown, not -1.
    const known = (n: number | null): number | null => (n === null || n < 0 ? null : n);
    report.scores.selection.initial = known(report.scores.selection.initial);
    report.scores.selection.best = known(report.scores.selection.best);
    writeReportMd(loop, report, { reason });
  } catch (err) {
    loop.ctx.logger.log(
      'warn',
      'report',
      `report.md of the stopped run could not be written: ${messageOf(err)}`,
    );
  }
}
