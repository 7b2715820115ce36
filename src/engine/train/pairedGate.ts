/**
 * The paired gate (evaluation.gate_test: paired): the candidate's per-item selection scores
 * against the current skill's on the same items, an exact test at `alpha`, and what an
 * inconclusive verdict does (on_inconclusive). Decides only; gateCandidate() applies and announces.
 */
import type { GateTestRecord } from '../../protocol/records';
import type { GateAction } from '../../protocol/vocabulary';
import { decidePairedGate } from '../optimizer/gate';
import { pairedTest } from '../optimizer/pairedTest';
import { currentSkillEvalDir } from '../store/layout';
import type { GateRequest } from './gateCandidate';
import type { LoopContext } from './loopContext';
import type { SelectionOutcome } from './selection';

export interface PairedDecision {
  action: GateAction;
  test: GateTestRecord;
  /** The candidate's evaluation the decision rests on (more repeats replace the first one). */
  sel: SelectionOutcome;
}

/** One look: both skills' per-item scores, the test, and the verdict at level `alpha`. */
async function look(
  loop: LoopContext,
  req: GateRequest,
  sel: SelectionOutcome,
  alpha: number,
  repeats?: number,
): Promise<{ action: GateAction; test: GateTestRecord }> {
  const { state, s } = loop;
  const current = await loop.selection.evaluate(
    state.current,
    currentSkillEvalDir(req.dir),
    req.step,
    req.stage,
    { needItems: true, ...(repeats ? { repeats } : {}) },
  );
  const t = pairedTest(
    loop.selection.projectItems(sel.items ?? {}),
    loop.selection.projectItems(current.items ?? {}),
    { alpha, seed: s.seed + req.step },
  );
  const action = decidePairedGate({
    candidate: sel.projected,
    // The current skill as sampled for this look (more repeats may have moved its mean).
    current: current.projected,
    best: state.bestScore,
    useGate: req.useGate,
    test: t,
    alpha,
  });
  const verdict = action === 'reject' ? 'reject' : action === 'inconclusive' ? 'inconclusive' : 'accept';
  const test: GateTestRecord = {
    test: t.test,
    n: t.n,
    repeats: Math.min(sel.repeats, current.repeats),
    improved: t.improved,
    regressed: t.regressed,
    mean_delta: t.meanDelta,
    p_value: t.pValue,
    exact: t.exact,
    alpha,
    ci_low: t.interval[0],
    ci_high: t.interval[1],
    // Each end a one-sided bound at alpha: ci_low > 0 exactly when p ≤ alpha.
    ci_level: 1 - 2 * alpha,
    verdict,
  };
  return { action, test };
}

/**
 * Decide a candidate with the paired test. on_inconclusive: more_repeats takes one more look with
 * both skills sampled `max_repeats` times; each of the two looks is made at alpha / 2, so trying
 * again does not raise the chance of keeping a candidate that changes nothing.
 */
export async function pairedDecision(
  loop: LoopContext,
  req: GateRequest,
  sel: SelectionOutcome,
): Promise<PairedDecision> {
  const g = loop.s.gate;
  const twoLooks = g.onInconclusive === 'more_repeats';
  const alpha = twoLooks ? g.alpha / 2 : g.alpha;
  const first = await look(loop, req, sel, alpha);
  if (first.action !== 'inconclusive' || !twoLooks || sel.repeats >= g.maxRepeats) return { ...first, sel };
  const more = await loop.selection.evaluate(req.candidate, req.dir, req.step, req.stage, {
    needItems: true,
    repeats: g.maxRepeats,
  });
  const second = await look(loop, req, more, alpha, g.maxRepeats);
  return { ...second, sel: more };
}

/** Right in at least half of its samples (with one repeat: right). */
const passes = (s: { hard: number } | undefined): boolean => s !== undefined && s.hard >= 0.5;

/**
 * evaluation.max_item_regressions: the items the current skill passes and the candidate fails, on
 * the same number of samples. An item the candidate could not answer (errored) is not counted.
 */
export async function brokenItems(
  loop: LoopContext,
  req: GateRequest,
  sel: SelectionOutcome,
): Promise<string[]> {
  const current = await loop.selection.evaluate(
    loop.state.current,
    currentSkillEvalDir(req.dir),
    req.step,
    req.stage,
    { needItems: true, ...(sel.repeats > loop.s.repeats ? { repeats: sel.repeats } : {}) },
  );
  const cand = sel.items ?? {};
  return Object.entries(current.items ?? {})
    .filter(([id, s]) => passes(s) && cand[id] !== undefined && !passes(cand[id]))
    .map(([id]) => id);
}
