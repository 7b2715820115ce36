/** ⑥ gate: the candidate (after any human-first pruning) against the current skill on selection. */
import { stepDirName } from '../../store/layout';
import { gateCandidate } from '../gateCandidate';
import { startSpeculation } from '../speculate';
import { isErrored } from '../rollout';
import { afterGateReview } from '../humanReview';
import type { LoopContext } from '../loopContext';
import { recordOf, type StageEnd, type StepStage, type StepWork } from './work';

async function run(loop: LoopContext, work: StepWork): Promise<StageEnd> {
  const review = afterGateReview(loop, work);
  startSpeculation(loop, work);
  const gate = await gateCandidate(loop, {
    candidate: work.gated!,
    dir: loop.layout.selectionDir(work.dir),
    step: work.step,
    epoch: work.epoch,
    origin: 'step',
    stage: 'evaluate',
    label: stepDirName(work.step),
    useGate: loop.s.useGate,
    around: (evaluate) => work.timed('evaluate_s', 'evaluate', evaluate),
    ...(review ? { review } : {}),
  });
  work.gate = gate;
  recordOf(work).gated({
    score: gate.sel.score,
    metric: loop.s.gateMetric,
    projected: gate.sel.projected,
    action: gate.action,
    errored: gate.sel.results?.filter(isErrored).length ?? 0,
    ...(gate.test ? { test: gate.test } : {}),
    ...(gate.regressions ? { regressions: gate.regressions } : {}),
  });
  loop.state.countGated(gate.action, loop.s.decayOnReject, gate.newBest);
  return 'next';
}

export const gateStage: StepStage = { name: 'gate', run };
