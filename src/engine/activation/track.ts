/**
 * One round of the activation track: score the current description on the train and held-out
 * trigger queries, ask the optimizer for a better one from the train misses and false triggers,
 * score it on the train queries, and keep it only when it is not worse there and strictly better
 * on the held-out queries (ties reject: the same rule as the body's strict gate). Every paid result
 * is saved in the round's folder first, so a resumed run pays for nothing twice.
 */
import { join } from 'node:path';
import type { ActivationRecord, TriggerRateRecord } from '../../protocol/records';
import type { GateAction } from '../../protocol/vocabulary';
import { describeContract, type DescribeReply } from '../llm/contracts/activation';
import { decideGate } from '../optimizer/gate';
import { describeSystemPrompt, describeUserPrompt } from '../prompts/activation';
import { withDescription } from '../skill/description';
import { parseFrontMatter } from '../skill/frontMatter';
import { STEP_FILE } from '../store/layout';
import { artifactSchemas } from '../store/runSchemas';
import { askOptimizer } from '../train/ask';
import { cachedArtifact } from '../train/artifacts';
import type { RunContext } from '../train/context';
import { skillDirName } from '../train/rolloutItem';
import { checkTriggerErrors, runTriggers } from './evaluate';
import type { ActivationPlan } from './plan';
import { triggerScore, type TriggerRun, type TriggerScore } from './rate';

export interface ActivationRound {
  record: ActivationRecord;
  /** The skill with the kept description (unchanged when the candidate was not kept). */
  skill: string;
}

function rateRecord(s: TriggerScore): TriggerRateRecord {
  return {
    rate: s.rate ?? null,
    ...(s.recall !== undefined ? { recall: s.recall } : {}),
    ...(s.falseTriggerRate !== undefined ? { false_trigger_rate: s.falseTriggerRate } : {}),
    queries: s.queries.length,
    runs: s.runs,
    errored: s.errored,
  };
}

/** The description a skill carries (the plan checked the initial one exists). */
export function descriptionOf(skill: string): string {
  return parseFrontMatter(skill)?.description?.trim() ?? '';
}

export async function activationRound(
  ctx: RunContext,
  plan: ActivationPlan,
  input: { skill: string; epoch: number; step: number; dir: string },
): Promise<ActivationRound> {
  const { skill, epoch, step, dir } = input;
  const s = ctx.settings;
  const evalOpts = {
    target: ctx.target,
    mode: plan.mode,
    repeats: plan.repeats,
    hostBudgetChars: plan.hostBudgetChars,
    ...(s.targetTemperature !== undefined ? { temperature: s.targetTemperature } : {}),
    signal: ctx.signal,
  };
  const FILES = {
    current: { train: STEP_FILE.triggersCurrentTrain, heldOut: STEP_FILE.triggersCurrentHeldOut },
    candidate: { train: STEP_FILE.triggersCandidateTrain, heldOut: STEP_FILE.triggersCandidateHeldOut },
  } as const;
  /** One description on one side of the split, saved before it is used. */
  const score = async (
    text: string,
    who: 'current' | 'candidate',
    side: 'train' | 'heldOut',
  ): Promise<TriggerScore> => {
    const queries = plan.split[side];
    const what = `the ${who} description (${side === 'train' ? 'train' : 'held out'})`;
    const runs = await cachedArtifact<TriggerRun[]>(
      join(dir, FILES[who][side]),
      artifactSchemas.triggerRuns,
      async () => {
        const r = await runTriggers(text, queries, evalOpts);
        checkTriggerErrors(r, what, s.maxErroredShare);
        return r;
      },
    );
    return triggerScore(queries, runs);
  };
  const before = descriptionOf(skill);
  const trainBefore = await score(skill, 'current', 'train');
  const heldBefore = await score(skill, 'current', 'heldOut');
  const base = {
    epoch,
    step,
    description_before: before,
    train_before: rateRecord(trainBefore),
    held_out_before: rateRecord(heldBefore),
    mode: plan.mode,
    ...(ctx.target.backend === 'sim' || ctx.optimizer.backend === 'sim' ? { simulated: true } : {}),
  };
  const keep = (action: string, reason: string, extra: Partial<ActivationRecord> = {}): ActivationRound => ({
    record: { ...base, ...extra, action, reason, description_after: before },
    skill,
  });
  const reply = await cachedArtifact<{
    ok: boolean;
    description?: string;
    reasoning?: string;
    error?: string;
  }>(join(dir, STEP_FILE.describeReply), artifactSchemas.describeReply, async () => {
    const asked = await askOptimizer<DescribeReply>(
      ctx,
      'describe',
      describeContract(plan.maxDescriptionChars),
      describeSystemPrompt(plan.maxDescriptionChars),
      describeUserPrompt({
        name: skillDirName(skill),
        description: before,
        bodyExcerpt: (parseFrontMatter(skill)?.body ?? skill).trim().slice(0, 1500),
        cases: trainBefore.queries.map((q) => ({
          query: q.query,
          shouldTrigger: q.shouldTrigger,
          loads: q.loads,
          runs: q.runs,
        })),
        trainRate: trainBefore.rate,
        maxChars: plan.maxDescriptionChars,
      }),
    );
    return asked.ok
      ? { ok: true, description: asked.value.description, reasoning: asked.value.reasoning }
      : { ok: false, error: asked.error };
  });
  if (!reply.ok || !reply.description)
    return keep('no_content', `the optimizer's reply was unusable: ${reply.error ?? 'no description'}`);
  const candidate = reply.description;
  const reasoning = reply.reasoning ? { reasoning: reply.reasoning } : {};
  if (candidate === before)
    return keep('no_content', 'the optimizer proposed the current description', reasoning);
  const candidateSkill = withDescription(skill, candidate);
  const trainCand = await score(candidateSkill, 'candidate', 'train');
  const withCandidate = {
    candidate_description: candidate,
    train_candidate: rateRecord(trainCand),
    ...reasoning,
  };
  if (trainCand.rate === undefined || trainBefore.rate === undefined || trainCand.rate < trainBefore.rate) {
    // Worse where it was written to do better: the held-out runs are not paid for.
    return keep('reject', 'lower trigger rate on the train queries', withCandidate);
  }
  const heldCand = await score(candidateSkill, 'candidate', 'heldOut');
  const current = heldBefore.rate ?? -1;
  const action: GateAction =
    heldCand.rate === undefined
      ? 'reject'
      : decideGate({ candidate: heldCand.rate, current, best: current, useGate: true });
  const record: ActivationRecord = {
    ...base,
    ...withCandidate,
    held_out_candidate: rateRecord(heldCand),
    action,
    ...(action === 'reject' ? { reason: 'the held-out trigger rate is not higher' } : {}),
    description_after: action === 'reject' ? before : candidate,
  };
  return { record, skill: action === 'reject' ? skill : candidateSkill };
}
