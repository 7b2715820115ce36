import { join } from 'node:path';
import { optimizerSkillView, touchedFiles } from '../skill/package/views';
import { PyRandom } from '../data/pyRandom';
import type { Contract } from '../llm/contracts/contract';
import {
  analystContract,
  deepReflectContract,
  type Hypothesis,
  type HypothesesReply,
} from '../llm/contracts/reflect';
import { structuredCall } from '../llm/structured';
import type { ChatMessage } from '../llm/types';
import { payloadKey } from '../prompts/modes';
import {
  deepReflectOpening,
  deepReflectPatchPrompt,
  deepReflectRefinePrompt,
  deepReflectSystemPrompt,
} from '../prompts/deep';
import { writeJsonAtomic } from '../store/atomic';
import type { RunContext } from './context';
import type { RawPatch } from './reflect';
import { isErrored, isFailure } from './rollout';
import { STEP_FILE } from '../store/layout';
import { artifactSchemas, readArtifact } from '../store/runSchemas';
import { failurePatterns } from './stepBuffer';
import { renderTrajectories } from './trajectories';
import type { RolloutResult } from '../../protocol/records';

export const DEEP_REFLECT_MINIBATCH = 'deep_reflect';

export interface DeepReflectDecision {
  run: boolean;
  /** The most common failure pattern (fail-reason prefix), when there is a failure. */
  pattern?: string;
  /** Share of all results that fail with that pattern. */
  failureRate: number;
}

/**
 * Whether deep reflection runs this step: when the most common failure pattern covers at least
 * `threshold` of all results, or on every step if so configured. A batch without any failure has
 * nothing to cross-reference, so it never runs, whatever the settings.
 */
export function shouldDeepReflect(
  results: readonly RolloutResult[],
  opts: { threshold: number; everyStep: boolean },
): DeepReflectDecision {
  const top = failurePatterns(results)[0];
  if (!top || results.length === 0) return { run: false, failureRate: 0 };
  const failureRate = top.count / results.length;
  return { run: opts.everyStep || failureRate >= opts.threshold, pattern: top.pattern, failureRate };
}

export interface DeepReflectArgs {
  skill: string;
  results: readonly RolloutResult[];
  seed: number;
  /** `gradient.deep_reflect_failures` */
  failures: number;
  /** `gradient.deep_reflect_successes` */
  successes: number;
  /** Maximum refinement rounds (`gradient.deep_reflect_rounds`). */
  rounds: number;
  stepBufferText: string;
  metaSkill?: string;
  /** The step (or micro-batch) directory; the transcript is saved there. */
  dir: string;
}

export interface DeepReflectRound {
  round: number;
  kind: 'hypotheses' | 'refine';
  hypotheses: Hypothesis[];
  reasoning: string;
  /** Differs from the previous round's list (always true for the first round). */
  changed: boolean;
  reasked: boolean;
}

export type DeepReflectStatus = 'patch' | 'no_failures' | 'no_hypotheses' | 'fallback';

export interface DeepReflectOutcome {
  status: DeepReflectStatus;
  /** For `fallback`: the turn whose reply stayed unusable, and why. */
  turn?: 'hypotheses' | 'refine' | 'patch';
  reason?: string;
  patch: RawPatch | null;
}

/** `deep_reflect.json`: the whole conversation, the hypotheses per round and the outcome. */
export interface DeepReflectTranscript {
  seed: number;
  update_mode: string;
  budget: number;
  max_rounds: number;
  failure_ids: string[];
  success_ids: string[];
  messages: ChatMessage[];
  rounds: DeepReflectRound[];
  /** Why refinement ended: unchanged hypotheses, the round limit, an unusable reply, or no hypotheses left. */
  stop_reason?: 'unchanged' | 'max_rounds' | 'refine_fallback' | 'no_hypotheses';
  outcome?: DeepReflectOutcome;
}

/** Seeded pick of up to `failures` failed and `successes` successful results, in shuffled order. */
export function pickDeepTrajectories(
  results: readonly RolloutResult[],
  seed: number,
  failures: number,
  successes: number,
): { failed: RolloutResult[]; succeeded: RolloutResult[] } {
  const order = new PyRandom(seed).shuffle([...results]);
  return {
    failed: order.filter(isFailure).slice(0, Math.max(0, failures)),
    succeeded: order.filter((r) => !isFailure(r) && !isErrored(r)).slice(0, Math.max(0, successes)),
  };
}

/** Order-insensitive identity of a hypothesis list, to tell whether a refinement changed anything. */
function fingerprint(list: readonly Hypothesis[]): string {
  const norm = list.map((h) =>
    JSON.stringify([
      h.cause.trim().replace(/\s+/g, ' ').toLowerCase(),
      [...new Set(h.evidence_ids.map((id) => id.trim()))].sort(),
      h.confidence,
    ]),
  );
  return JSON.stringify(norm.sort());
}

/**
 * Deep reflection (issue 8): a few failures and successes, cross-referenced over one growing
 * conversation with the optimizer (hypotheses, up to `rounds` refinements that stop as soon as the
 * list no longer changes, then a patch in the analyst's shape). The result joins the step's
 * minibatch patches as one more failure patch. The transcript is saved after every turn; once it
 * holds an outcome, a resumed run reuses it without calling the model.
 */
export async function deepReflect(ctx: RunContext, args: DeepReflectArgs): Promise<RawPatch | null> {
  const file = join(args.dir, STEP_FILE.deepReflect);
  const saved = readArtifact<DeepReflectTranscript>(file, artifactSchemas.deepReflect);
  if (saved?.outcome) return saved.outcome.patch;

  const mode = ctx.settings.updateMode;
  const budget = ctx.settings.learningRate;
  const { failed, succeeded } = pickDeepTrajectories(args.results, args.seed, args.failures, args.successes);
  const transcript: DeepReflectTranscript = {
    seed: args.seed,
    update_mode: mode,
    budget,
    max_rounds: args.rounds,
    failure_ids: failed.map((r) => r.id),
    success_ids: succeeded.map((r) => r.id),
    messages: [],
    rounds: [],
  };
  const save = (): void => writeJsonAtomic(file, transcript);
  const finish = (outcome: DeepReflectOutcome): RawPatch | null => {
    transcript.outcome = outcome;
    save();
    return outcome.patch;
  };
  if (failed.length === 0) return finish({ status: 'no_failures', patch: null });

  const messages = transcript.messages;
  messages.push(
    { role: 'system', content: deepReflectSystemPrompt() },
    {
      role: 'user',
      content: deepReflectOpening({
        skill: optimizerSkillView(args.skill, ctx.settings.packagePolicy, touchedFiles(args.skill, failed)),
        stepBufferText: args.stepBufferText,
        ...(args.metaSkill ? { metaSkill: args.metaSkill } : {}),
        failures: renderTrajectories(failed, ctx.settings.trajectoryChars),
        failureCount: failed.length,
        successes: renderTrajectories(succeeded, ctx.settings.trajectoryChars),
        successCount: succeeded.length,
      }),
    },
  );

  const ask = async <T>(
    contract: Contract<T>,
    turn: 'hypotheses' | 'refine' | 'patch',
    maxTokens: number,
  ): Promise<{ ok: true; value: T; reasked: boolean } | { ok: false; error: string }> => {
    const outcome = await structuredCall(
      ctx.optimizer,
      {
        role: 'optimizer',
        stage: 'deep_reflect',
        // Each turn resends the conversation so far: every user turn ends a prefix the next turn
        // repeats, so each is a prompt-cache breakpoint (the transcript file keeps plain messages).
        messages: messages.map((m) => (m.role === 'user' ? { ...m, stablePrefix: m.content.length } : m)),
        maxTokens,
        cacheSkill: args.skill,
      },
      contract,
      { signal: ctx.signal, logger: ctx.logger },
    );
    if (outcome.reasked) ctx.recordReask?.('deep_reflect');
    if (!outcome.ok) {
      ctx.recordFallback('deep_reflect', `${turn} turn: ${outcome.error}`);
      return { ok: false, error: outcome.error };
    }
    // Only the usable reply stays in the conversation; a re-ask exchange is not carried forward.
    messages.push({ role: 'assistant', content: outcome.raw });
    return { ok: true, value: outcome.value, reasked: outcome.reasked };
  };

  const tokens = ctx.settings.optimizerMaxTokens;
  const first = await ask<HypothesesReply>(deepReflectContract(), 'hypotheses', tokens);
  if (!first.ok) return finish({ status: 'fallback', turn: 'hypotheses', reason: first.error, patch: null });
  let current = first.value.hypotheses;
  transcript.rounds.push({
    round: 1,
    kind: 'hypotheses',
    hypotheses: current,
    reasoning: first.value.reasoning,
    changed: true,
    reasked: first.reasked,
  });
  save();

  if (current.length > 0) {
    transcript.stop_reason = 'max_rounds';
    for (let k = 1; k <= args.rounds; k++) {
      messages.push({ role: 'user', content: deepReflectRefinePrompt(k, args.rounds) });
      const next = await ask<HypothesesReply>(deepReflectContract(), 'refine', tokens);
      if (!next.ok) {
        // Keep what the earlier rounds established and go on to the patch without this turn.
        messages.pop();
        transcript.stop_reason = 'refine_fallback';
        break;
      }
      const changed = fingerprint(next.value.hypotheses) !== fingerprint(current);
      current = next.value.hypotheses;
      transcript.rounds.push({
        round: k + 1,
        kind: 'refine',
        hypotheses: current,
        reasoning: next.value.reasoning,
        changed,
        reasked: next.reasked,
      });
      save();
      if (current.length === 0) break;
      if (!changed) {
        transcript.stop_reason = 'unchanged';
        break;
      }
    }
  }
  if (current.length === 0) {
    transcript.stop_reason = 'no_hypotheses';
    return finish({ status: 'no_hypotheses', patch: null });
  }

  messages.push({ role: 'user', content: deepReflectPatchPrompt(mode, budget) });
  const patchTokens = mode === 'full_rewrite_minibatch' ? ctx.settings.rewriteMaxTokens : tokens;
  const final = await ask(analystContract(mode, 'failure'), 'patch', patchTokens);
  if (!final.ok) return finish({ status: 'fallback', turn: 'patch', reason: final.error, patch: null });

  const value = final.value;
  const patch = (value.patch ?? { reasoning: '' }) as RawPatch['patch'];
  const key = payloadKey(mode);
  const items = Array.isArray(patch[key]) ? (patch[key] as unknown[]) : [];
  // The budget is enforced in code, as for the minibatch analysts (not in full-rewrite mode).
  if (mode !== 'full_rewrite_minibatch' && items.length > budget) patch[key] = items.slice(0, budget);
  const raw: RawPatch & { hypotheses: Hypothesis[] } = {
    ...(value as Omit<RawPatch, 'source_type' | 'patch'>),
    batch_size: value.batch_size ?? failed.length,
    source_type: 'failure',
    patch,
    trajectory_ids: [...transcript.failure_ids, ...transcript.success_ids],
    minibatch: DEEP_REFLECT_MINIBATCH,
    hypotheses: current,
  };
  return finish({ status: 'patch', patch: raw });
}
