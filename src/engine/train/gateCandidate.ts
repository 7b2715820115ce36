/**
 * The one gate: every candidate (a step's, the slow update's, meta reflect's) and the final check
 * are scored on the selection split, decided, applied to the state and announced here. The
 * `candidate/ready` and `gate/verdict` events are built nowhere else.
 */
import type { CandidateEdit } from '../../protocol/events';
import type { GateVerdictEvent } from '../store/replayVerdicts';
import type { GateTestRecord, ItemRegressions, Score } from '../../protocol/records';
import type {
  CandidateOrigin,
  GateAction,
  StageName,
  VerdictAction,
  VerdictOrigin,
} from '../../protocol/vocabulary';
import { isAccepted } from '../../protocol/vocabulary';
import { decideGate } from '../optimizer/gate';
import type { Edit } from '../skill/applyEdits';
import { skillHash } from '../skill/document';
import { lineHunks } from '../skill/hunks';
import { recordCandidateFiles } from '../skill/package/changes';
import { skillBody } from '../skill/package/text';
import { conflictsWithin } from './conflicts';
import type { LoopContext } from './loopContext';
import { brokenItems, pairedDecision } from './pairedGate';
import type { SelectionOutcome } from './selection';

/** A candidate's edits as the review surfaces show them, with their apply status. */
export function toCandidateEdits(
  edits: readonly Edit[],
  report: ReadonlyArray<{ status: string; error?: string }> | undefined,
  opts: { details?: boolean } = {},
): CandidateEdit[] {
  return edits.map((e, i) => ({
    id: String(e.id ?? `edit-${i + 1}`),
    op: String(e.op),
    ...(e.target !== undefined ? { target: String(e.target) } : {}),
    ...(e.content !== undefined ? { content: String(e.content) } : {}),
    ...(typeof e.file === 'string' && e.file && e.file !== 'SKILL.md' ? { file: e.file } : {}),
    ...(opts.details && e.support_count !== undefined ? { support_count: Number(e.support_count) } : {}),
    ...(opts.details && e.source_type !== undefined ? { source_type: String(e.source_type) } : {}),
    ...(report?.[i] ? { status: report[i].status } : {}),
    ...(report?.[i]?.error ? { status_reason: report[i].error } : {}),
    ...(opts.details ? conflictsWithin(e.conflicts_with, edits) : {}),
  }));
}

/** Tells every listener that a candidate exists, with its edits and line hunks. */
export function announceCandidate(
  loop: LoopContext,
  c: {
    step: number;
    epoch: number;
    origin: CandidateOrigin;
    previous: string;
    candidate: string;
    edits: CandidateEdit[];
    path: string;
  },
): void {
  const files = recordCandidateFiles(c.path, c.previous, c.candidate);
  loop.ctx.emit({
    type: 'candidate/ready',
    step: c.step,
    epoch: c.epoch,
    origin: c.origin,
    previousHash: skillHash(c.previous),
    candidateHash: skillHash(c.candidate),
    edits: c.edits,
    hunks: lineHunks(skillBody(c.previous), skillBody(c.candidate)),
    candidatePath: c.path,
    ...(files ? { files } : {}),
  });
}

/** Tells every listener what was decided, with the state's scores after the decision. */
export function announceVerdict(
  loop: LoopContext,
  v: {
    step: number;
    epoch: number;
    origin: VerdictOrigin;
    action: VerdictAction;
    candidateScore: number;
    score?: Score;
    cacheHit: boolean;
    gateTest?: GateTestRecord;
    itemRegressions?: ItemRegressions;
  },
): GateVerdictEvent {
  const { state } = loop;
  const event: GateVerdictEvent = {
    type: 'gate/verdict',
    step: v.step,
    epoch: v.epoch,
    origin: v.origin,
    action: v.action,
    candidateScore: v.candidateScore,
    currentScore: state.currentScore,
    bestScore: state.bestScore,
    ...(v.score ? { selectionHard: v.score.hard, selectionSoft: v.score.soft } : {}),
    cacheHit: v.cacheHit,
    ...(v.gateTest ? { gateTest: v.gateTest } : {}),
    ...(v.itemRegressions ? { itemRegressions: v.itemRegressions } : {}),
  };
  loop.ctx.emit(event);
  return event;
}

export interface GateRequest {
  candidate: string;
  /** Folder of the selection evaluation (`…/selection_eval`). */
  dir: string;
  step: number;
  epoch: number;
  origin: CandidateOrigin;
  stage: StageName;
  /** The state's origin label if the candidate is kept (`step_0003`, `slow_update_epoch_02`). */
  label: string;
  /** false force-accepts (evaluation.use_gate, or the slow update's own switch). */
  useGate: boolean;
  /** Wraps the selection evaluation (a step times it as its `evaluate` stage). */
  around?: (evaluate: () => Promise<SelectionOutcome>) => Promise<SelectionOutcome>;
  /** gate-then-human: the person may turn an accept into a reject before it is applied. */
  review?: (action: GateAction, sel: SelectionOutcome, evidence: GateEvidence) => Promise<GateAction>;
}

export interface GateOutcome {
  action: GateAction;
  sel: SelectionOutcome;
  /** The paired gate's test (evaluation.gate_test: paired). */
  test?: GateTestRecord;
  /** Items the candidate broke (evaluation.max_item_regressions). */
  regressions?: ItemRegressions;
  /** The current score before the verdict. */
  before: number;
  /** The candidate became the best skill (vocabulary `becomesBest`). */
  newBest: boolean;
}

/** What the gate found beyond the means, shown to the person who reviews the verdict. */
export interface GateEvidence {
  test?: GateTestRecord;
  regressions?: ItemRegressions;
}

interface Decided {
  sel: SelectionOutcome;
  action: GateAction;
  test?: GateTestRecord;
  regressions?: ItemRegressions;
}

/**
 * Score a candidate on the selection split, decide (strict: ties reject; paired: an exact test on
 * per-item deltas, which may be inconclusive), apply and announce.
 */
export async function gateCandidate(loop: LoopContext, req: GateRequest): Promise<GateOutcome> {
  const { state } = loop;
  const paired = loop.s.gate.test === 'paired' && req.useGate;
  const maxBroken = req.useGate ? loop.s.gate.maxItemRegressions : undefined;
  const decide = async (): Promise<Decided> => {
    // evaluation.early_stop (earlyStop.ts): only the strict gate with nothing else reading every item.
    const early = loop.s.earlyStop && req.useGate && !paired && maxBroken === undefined && !req.review;
    const first = await loop.selection.evaluate(req.candidate, req.dir, req.step, req.stage, {
      needItems: paired || maxBroken !== undefined,
      ...(early ? { earlyStop: { current: state.currentScore, best: state.bestScore } } : {}),
    });
    if (paired) return pairedDecision(loop, req, first);
    const action = decideGate({
      candidate: first.projected,
      current: state.currentScore,
      best: state.bestScore,
      useGate: req.useGate,
    });
    return { sel: first, action };
  };
  const evaluate = async (): Promise<Decided> => {
    const d = await decide();
    if (maxBroken === undefined) return d;
    // A higher mean must not hide broken items: more than the allowed number rejects.
    const items = await brokenItems(loop, req, d.sel);
    const rejected = items.length > maxBroken && isAccepted(d.action);
    return {
      ...d,
      ...(rejected ? { action: 'reject' as const } : {}),
      regressions: { max: maxBroken, items, rejected },
    };
  };
  // The evaluate stage's time covers the paired gate's extra samples too.
  let decided: Decided | undefined;
  const timed = async (): Promise<SelectionOutcome> => {
    decided = await evaluate();
    return decided.sel;
  };
  await (req.around ? req.around(timed) : timed());
  const { sel, test, regressions } = decided!;
  let action = decided!.action;
  if (req.review)
    action = await req.review(action, sel, {
      ...(test ? { test } : {}),
      ...(regressions ? { regressions } : {}),
    });
  const before = state.currentScore;
  const newBest = state.applyVerdict(action, req.candidate, sel.projected, req.step, req.label);
  announceVerdict(loop, {
    step: req.step,
    epoch: req.epoch,
    origin: req.origin,
    action,
    candidateScore: sel.projected,
    score: sel.score,
    cacheHit: sel.cacheHit,
    ...(test ? { gateTest: test } : {}),
    ...(regressions ? { itemRegressions: regressions } : {}),
  });
  return { action, sel, before, newBest, ...(test ? { test } : {}), ...(regressions ? { regressions } : {}) };
}

/** What the gate found beyond the means, as an epoch end's result file keeps it (history.json's names). */
export function gateEvidenceFields(g: GateOutcome): {
  gate_test?: GateTestRecord;
  item_regressions?: ItemRegressions;
} {
  return {
    ...(g.test ? { gate_test: g.test } : {}),
    ...(g.regressions ? { item_regressions: g.regressions } : {}),
  };
}

/**
 * The final check (reference §4.5): the last skill, when it is not the best, is scored once more
 * and promoted to best only if it beats it strictly.
 */
export async function finalCheck(
  loop: LoopContext,
  step: number,
  dir: string,
): Promise<{ score: Score; promoted: boolean; verdict: GateVerdictEvent }> {
  const { state } = loop;
  const sel = await loop.stage(step, loop.s.numEpochs, 'final_selection', () =>
    loop.selection.evaluate(state.current, dir, step, 'final_selection'),
  );
  const promote = sel.projected > state.bestScore;
  if (promote) state.promoteCurrent(sel.projected, step);
  const verdict = announceVerdict(loop, {
    step,
    epoch: loop.s.numEpochs,
    origin: 'final',
    action: promote ? 'promote' : 'keep',
    candidateScore: sel.projected,
    score: sel.score,
    cacheHit: sel.cacheHit,
  });
  return { score: sel.score, promoted: promote, verdict };
}
