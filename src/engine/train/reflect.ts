import { artifactSchemas, readArtifact } from '../store/runSchemas';
import { optimizerSkillView, touchedFiles } from '../skill/package/views';
import { join } from 'node:path';
import { analystContract } from '../llm/contracts/reflect';
import { Semaphore } from '../llm/limiter';
import { patchFileName } from '../store/layout';
import { payloadKey, type UpdateMode } from '../prompts/modes';
import { analystSystemPrompt } from '../prompts/system';
import { appliesTo, withSkillAware } from '../prompts/skillAware';
import { blocks, metaSkillBlock, payloadLabel } from '../prompts/shared';
import { PyRandom } from '../data/pyRandom';
import { writeJsonAtomic } from '../store/atomic';
import { askOptimizer } from './ask';
import type { RunContext } from './context';
import { isErrored, isFailure } from './rollout';
import { renderTrajectories } from './trajectories';
import type { RolloutResult } from '../../protocol/records';

/** A raw analyst reply as saved in `patches/minibatch_*.json` (reference shape + `source_type`). */
export interface RawPatch {
  source_type: 'failure' | 'success';
  batch_size?: number;
  failure_summary?: Array<{ failure_type?: string; count?: number; description?: string }>;
  success_patterns?: string[];
  patch: { reasoning?: string; [key: string]: unknown };
  /** Ours: which trajectories this minibatch analysed (provenance). */
  trajectory_ids?: string[];
  minibatch?: string;
  /** Skill-aware reflection: reminders of existing rules the target did not apply (§5.4). */
  appendix_notes?: string[];
}

export interface ReflectParams {
  skill: string;
  /** `<step or batch dir>/patches` */
  patchesDir: string;
  /** Ids of the batch in rollout order; shuffled with `seed` to form minibatches deterministically. */
  itemIds: readonly string[];
  seed: number;
  stepBufferText: string;
  metaSkill?: string;
}

/**
 * Minibatch reflection that starts while the rollout is still running. Minibatch membership is a
 * pure function of the batch and the seed: items are visited in a seeded shuffle of the batch, and
 * the k-th failure minibatch is the k-th run of `minibatch_size` failures in that order. A
 * minibatch is dispatched as soon as every item up to its last member has a result, so arrival
 * order never changes what the analyst sees. (The reference shuffles failures and successes
 * separately after the whole rollout; ours is equally deterministic and lets stages overlap.)
 */
export class StreamingReflector {
  private readonly order: string[];
  private readonly results = new Map<string, RolloutResult>();
  private cursor = 0;
  private readonly pending: { failure: RolloutResult[]; success: RolloutResult[] } = {
    failure: [],
    success: [],
  };
  private readonly counters = { failure: 0, success: 0 };
  private readonly jobs: Array<Promise<RawPatch | null>> = [];
  private readonly gate: Semaphore;

  constructor(
    private readonly ctx: RunContext,
    private readonly params: ReflectParams,
  ) {
    this.order = new PyRandom(params.seed).shuffle([...params.itemIds]);
    this.gate = new Semaphore(Math.max(1, ctx.settings.analystWorkers));
  }

  /** The order it visits items in: a rollout that sends them so completes minibatches early. */
  get visitOrder(): readonly string[] {
    return this.order;
  }

  onResult(result: RolloutResult): void {
    this.results.set(result.id, result);
    while (this.cursor < this.order.length) {
      const next = this.results.get(this.order[this.cursor]);
      if (!next) break;
      this.cursor++;
      // What the target could not answer says nothing about the skill.
      if (isErrored(next)) continue;
      const kind = isFailure(next) ? 'failure' : 'success';
      if (kind === 'success' && this.ctx.settings.failureOnly) continue;
      this.pending[kind].push(next);
      if (this.pending[kind].length >= this.ctx.settings.minibatchSize) this.dispatch(kind);
    }
    // Every item is in: the partial minibatches are complete now, not when the rollout stage ends,
    // unless errored items dominate: the rollout then stops the run, and the optimizer is not paid.
    if (this.cursor === this.order.length && !this.erroredDominate()) this.flush();
  }

  /** limits.max_errored_share as the rollout checks it (rollout.ts checkErrored). */
  private erroredDominate(): boolean {
    const errored = [...this.results.values()].filter(isErrored).length;
    return errored > 0 && errored > this.ctx.settings.maxErroredShare * this.order.length;
  }

  private flush(): void {
    if (this.pending.failure.length) this.dispatch('failure');
    if (this.pending.success.length) this.dispatch('success');
  }

  /** Flush the partial minibatches and wait for every analyst; returns failure then success patches. */
  async finish(): Promise<RawPatch[]> {
    this.flush();
    const out = await Promise.all(this.jobs);
    const patches = out.filter((p): p is RawPatch => p !== null);
    return [
      ...patches.filter((p) => p.source_type === 'failure'),
      ...patches.filter((p) => p.source_type === 'success'),
    ];
  }

  private dispatch(kind: 'failure' | 'success'): void {
    const members = this.pending[kind];
    this.pending[kind] = [];
    const index = this.counters[kind]++;
    const job = this.gate.run(() => runAnalyst(this.ctx, this.params, kind, index, members), this.ctx.signal);
    // Attach a handler now so a rejection before finish() is awaited is not reported as unhandled.
    job.catch(() => undefined);
    this.jobs.push(job);
  }
}

/**
 * The analyst's user message, stable part first: the skill and the step's context are the same
 * for every analyst of a step, so `stablePrefix` (their length) is where a provider's prompt cache
 * can stop; the trajectories that differ come last.
 */
export function analystUserMessage(
  mode: UpdateMode,
  kind: 'failure' | 'success',
  skill: string,
  budget: number,
  stepBufferText: string,
  metaSkill: string | undefined,
  trajectories: string,
  count: number,
): { text: string; stablePrefix: number } {
  const budgetBlock =
    mode === 'full_rewrite_minibatch'
      ? '## Update Format\nReturn exactly one complete replacement skill in `skill_candidates`.'
      : `## Budget\nPropose at most ${budget} ${payloadLabel(mode)}.`;
  const stable = blocks(
    `## Current Skill\n<current_skill>\n${skill.trim()}\n</current_skill>`,
    budgetBlock,
    stepBufferText && `## Previous Steps in This Epoch\n${stepBufferText}`,
    metaSkillBlock(metaSkill),
  );
  const text = blocks(
    stable,
    `## ${kind === 'failure' ? 'Failed' : 'Successful'} Trajectories (${count} total)\n\n${trajectories}`,
  );
  return { text, stablePrefix: stable.length };
}

async function runAnalyst(
  ctx: RunContext,
  params: ReflectParams,
  kind: 'failure' | 'success',
  index: number,
  members: RolloutResult[],
): Promise<RawPatch | null> {
  const file = join(params.patchesDir, patchFileName(kind, index));
  const saved = readArtifact<RawPatch>(file, artifactSchemas.rawPatch);
  // Saved for other trajectories (a run stopped over errored items, asked again since): stale.
  if (saved && (!saved.trajectory_ids || sameIds(saved.trajectory_ids, members))) return saved;
  const mode = ctx.settings.updateMode;
  const budget = ctx.settings.learningRate;
  const user = analystUserMessage(
    mode,
    kind,
    // A package shows the files this minibatch's trajectories touched.
    optimizerSkillView(params.skill, ctx.settings.packagePolicy, touchedFiles(params.skill, members)),
    budget,
    params.stepBufferText,
    params.metaSkill,
    renderTrajectories(members, ctx.settings.trajectoryChars),
    members.length,
  );
  const maxTokens =
    mode === 'full_rewrite_minibatch' ? ctx.settings.rewriteMaxTokens : ctx.settings.optimizerMaxTokens;
  const aware = appliesTo(kind, ctx.settings.skillAware);
  const reply = await askOptimizer<Record<string, unknown>>(
    ctx,
    'analyst',
    // Only the failure analyst may answer with reminders alone (the reference's lapse-only carrier).
    analystContract(mode, kind, { appendixNotes: aware && kind === 'failure' }),
    withSkillAware(analystSystemPrompt(kind, mode), kind, ctx.settings.skillAware),
    user.text,
    maxTokens,
    { skill: params.skill, stablePrefix: user.stablePrefix },
  );
  if (!reply.ok) return null;
  const { appendix_notes: notes, ...value } = reply.value;
  const key = payloadKey(mode);
  const patch = (value.patch ?? { reasoning: 'execution-lapse only', [key]: [] }) as RawPatch['patch'];
  const items = Array.isArray(patch[key]) ? (patch[key] as unknown[]) : [];
  // The analyst budget is enforced in code, as the reference does (not in full-rewrite mode).
  if (mode !== 'full_rewrite_minibatch' && items.length > budget) patch[key] = items.slice(0, budget);
  const raw: RawPatch = {
    ...(value as Omit<RawPatch, 'source_type' | 'patch'>),
    source_type: kind,
    patch,
    trajectory_ids: members.map((m) => m.id),
    minibatch: patchFileName(kind, index).replace(/\.json$/, ''),
    // Notes nobody asked for are not kept: with the option off the appendix does not exist.
    ...(aware && Array.isArray(notes) && notes.length ? { appendix_notes: notes as string[] } : {}),
  };
  writeJsonAtomic(file, raw);
  return raw;
}

function sameIds(ids: readonly string[], members: readonly RolloutResult[]): boolean {
  return ids.length === members.length && ids.every((id, i) => id === members[i]?.id);
}
