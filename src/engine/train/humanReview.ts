/**
 * The person in the loop (`review.mode`): human-first pruning before the gate, gate-then-human
 * confirmation after it, and auto mode's overrules of finished steps. Every answer is saved in the
 * step folder, so a resumed run never asks twice.
 */
import { readSkillArtifact, writeSkillArtifact } from '../skill/package/artifacts';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { GateAction, ReviewPhase } from '../../protocol/vocabulary';
import { HUMAN_ORIGIN_PREFIX, isAccepted, isInconclusive, isRejected } from '../../protocol/vocabulary';
import { applyEdits } from '../skill/applyEdits';
import { skillHash } from '../skill/document';
import { writeJsonAtomic } from '../store/atomic';
import { reviewFileName, RUN_FILE, STEP_FILE, stepDirName } from '../store/layout';
import { artifactSchemas, readArtifact } from '../store/runSchemas';
import { announceVerdict, type GateEvidence } from './gateCandidate';
import type { LoopContext } from './loopContext';
import type { ReviewDecision, ReviewRequest } from './review';
import type { SelectionOutcome } from './selection';
import { recordOf, type StageEnd, type StepStage, type StepWork } from './step/work';
import { keepProtectedBlock } from './update';
import type { SkillOptConfig } from '../config/schema';

/** Ask the person once per step and phase; the answer is saved so a resumed run does not ask again. */
async function askReview(
  loop: LoopContext,
  work: StepWork,
  phase: ReviewPhase,
  extra: Pick<ReviewRequest, 'candidateScore' | 'currentScore' | 'gateTest' | 'itemRegressions'> = {},
): Promise<ReviewDecision> {
  const request: ReviewRequest = {
    questionId: randomUUID(),
    step: work.step,
    epoch: work.epoch,
    phase,
    candidatePath: work.candidatePath!,
    // What the person is asked about: before the gate the whole candidate, after it the gated one.
    candidateHash: skillHash(phase === 'before_gate' ? work.candidate! : work.gated!),
    edits: work.candidateEdits,
    ...extra,
  };
  const file = loop.layout.stepFile(request.step, reviewFileName(phase));
  const saved = readArtifact<ReviewDecision>(file, artifactSchemas.reviewDecision);
  if (saved) return saved;
  loop.ctx.emit({ type: 'review/requested', ...request });
  const decision = await loop.stage(request.step, request.epoch, 'review', () =>
    loop.input.reviewer!.review(request, loop.ctx.signal),
  );
  writeJsonAtomic(file, decision);
  return decision;
}

/** human-first: the person keeps or drops each edit; only the kept ones reach the gate. */
async function humanFirst(loop: LoopContext, work: StepWork): Promise<StageEnd> {
  const { s } = loop;
  const update = work.update!;
  if (s.reviewMode !== 'human-first' || !loop.input.reviewer || s.updateMode !== 'patch') return 'next';
  if (!work.candidateEdits.length) return 'next';
  const record = recordOf(work);
  const decision = await askReview(loop, work, 'before_gate');
  const rejected = new Map((decision.edits ?? []).filter((d) => !d.accept).map((d) => [d.editId, d]));
  for (const [id, d] of rejected) work.humanRejected.push({ id, ...(d.reason ? { reason: d.reason } : {}) });
  if (rejected.size) {
    const kept = update.edits.filter((e) => !rejected.has(String(e.id)));
    const gated = applyEdits(work.skill, kept, {
      anchorMode: s.anchorMode,
      packagePolicy: s.packagePolicy,
    }).text;
    writeSkillArtifact(loop.layout.stepFile(work.step, STEP_FILE.reviewedCandidate), gated);
    work.gated = gated;
    record.gatedCandidate(skillHash(gated), gated.length);
  }
  record.reviewed({
    mode: s.reviewMode,
    decision: rejected.size ? 'human_pruned' : 'human_kept_all',
    ...(work.humanRejected.length ? { rejected_edits: work.humanRejected } : {}),
  });
  loop.ctx.emit({
    type: 'review/decided',
    step: work.step,
    phase: 'before_gate',
    decision: rejected.size ? 'human_pruned' : 'human_kept_all',
    rejectedEdits: work.humanRejected.map((r) => r.id),
  });
  return 'next';
}

export const humanFirstStage: StepStage = { name: 'human_first_review', run: humanFirst };

/**
 * gate-then-human: a candidate the gate accepts waits for the person before it becomes current.
 * Returns the hook the gate calls between its decision and applying it, or undefined in other modes.
 */
export function afterGateReview(
  loop: LoopContext,
  work: StepWork,
): ((action: GateAction, sel: SelectionOutcome, evidence: GateEvidence) => Promise<GateAction>) | undefined {
  if (loop.s.reviewMode !== 'gate-then-human' || !loop.input.reviewer) return undefined;
  return async (action, sel, evidence) => {
    if (action === 'reject') return action;
    // An inconclusive verdict goes to the person only when evaluation.on_inconclusive says ask.
    const inconclusive = isInconclusive(action);
    if (inconclusive && loop.s.gate.onInconclusive !== 'ask') return action;
    const record = recordOf(work);
    const decision = await askReview(loop, work, 'after_gate', {
      candidateScore: sel.projected,
      currentScore: loop.state.currentScore,
      ...(evidence.test ? { gateTest: evidence.test } : {}),
      ...(evidence.regressions ? { itemRegressions: evidence.regressions } : {}),
    });
    const accepted = decision.candidate !== 'reject';
    record.reviewed({
      mode: loop.s.reviewMode,
      decision: accepted ? 'human_accept' : 'human_reject',
      gate_action: action,
      ...(decision.reason ? { reason: decision.reason } : {}),
    });
    if (!accepted) {
      for (const e of work.candidateEdits)
        work.humanRejected.push({ id: e.id, ...(decision.reason ? { reason: decision.reason } : {}) });
    }
    loop.ctx.emit({
      type: 'review/decided',
      step: work.step,
      phase: 'after_gate',
      decision: accepted ? 'human_accept' : 'human_reject',
      rejectedEdits: accepted ? [] : work.candidateEdits.map((e) => e.id),
    });
    if (!accepted) return 'reject';
    // The person keeps a candidate the gate could not tell from noise: an accept like any other.
    if (inconclusive) return sel.projected > loop.state.bestScore ? 'accept_new_best' : 'accept';
    return action;
  };
}

/** Apply the person's overrules of finished steps (auto mode), at a step boundary. */
export function applyOverrules(loop: LoopContext): void {
  const overrules = loop.input.reviewer?.takeOverrules() ?? [];
  if (!overrules.length) return;
  const { state, layout } = loop;
  const logPath = layout.file(RUN_FILE.humanDecisions);
  const log = readArtifact<Array<Record<string, unknown>>>(logPath, artifactSchemas.records) ?? [];
  for (const o of overrules) {
    const rec = state.history.find((r) => r.step === o.step);
    if (!rec?.candidate_hash) continue;
    // A candidate the gate did not keep (rejected, or inconclusive under the paired gate) can be accepted.
    if (o.decision === 'accept' && (isRejected(rec.action) || isInconclusive(rec.action))) {
      const reviewed = layout.stepFile(o.step, STEP_FILE.reviewedCandidate);
      const candidate = existsSync(reviewed) ? reviewed : layout.stepFile(o.step, STEP_FILE.candidate);
      // The protected blocks are the epoch ends' work since that step: they stay as they are now.
      state.current = keepProtectedBlock(state.current, readSkillArtifact(candidate)).text;
      state.currentScore = rec.candidate_gate_score ?? state.currentScore;
      state.currentOrigin = `${HUMAN_ORIGIN_PREFIX.accept}${stepDirName(o.step)}`;
    } else if (o.decision === 'revert' && isAccepted(rec.action)) {
      // Any accepted step can be reverted, force-accepted ones (evaluation.use_gate: false) included.
      state.current = keepProtectedBlock(state.current, loop.files.readSkill(o.step - 1)).text;
      const prev = state.history.find((r) => r.step === o.step - 1);
      state.currentScore = prev?.current_score ?? state.baselineScore;
      state.currentOrigin = `${HUMAN_ORIGIN_PREFIX.revert}${stepDirName(o.step)}`;
    } else {
      // Nothing to change (the step already is what the person asks for): say so, never drop it silently.
      loop.ctx.emit({
        type: 'warning',
        message: `your ${o.decision} of step ${o.step} changes nothing: the gate's verdict on it (${rec.action}) already ${o.decision === 'accept' ? 'kept' : 'dropped'} its candidate`,
      });
      continue;
    }
    log.push({ ...o, applied_after_step: state.lastCompletedStep, current_score: state.currentScore });
    announceVerdict(loop, {
      step: o.step,
      epoch: rec.epoch,
      origin: 'human',
      action: o.decision === 'accept' ? 'human_accept' : 'human_revert',
      candidateScore: rec.candidate_gate_score ?? state.currentScore,
      cacheHit: true,
    });
  }
  writeJsonAtomic(logPath, log);
  loop.files.writeSkill(state.lastCompletedStep, state.current);
  state.save();
}

/** A review mode that needs a person, in a run with nobody to ask (the CLI), runs as auto: say so. */
export function unreviewedModeNotice(cfg: SkillOptConfig, hasReviewer: boolean): string | undefined {
  const mode = cfg.review.mode;
  if (hasReviewer || (mode !== 'gate-then-human' && mode !== 'human-first')) return undefined;
  return `review.mode: ${mode} asks a person to review candidates, and this run has nobody to ask (no editor): it runs as auto, each candidate kept or dropped by the gate alone; start it from VS Code to review`;
}
