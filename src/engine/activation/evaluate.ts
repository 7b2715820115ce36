/**
 * The trigger evaluation: each query, `repeats` times, through the run's real target, and whether
 * the skill loaded. An agent target (Claude Code, Codex, Copilot CLI) gets the query alone with
 * the skill folder where it discovers skills (native delivery, whatever `model.target_delivery`
 * says), so the description decides; its JSON events say whether it opened the skill. A chat
 * target gets the host's listing (names and descriptions, a function that opens a skill) and the
 * query; a call of that function for this skill is a load.
 */
import { TARGET_ERROR_LABELS, type TargetErrorKind } from '../../protocol/vocabulary';
import { SkillOptError, splitFix, messageOf } from '../errors';
import { errorKind } from '../llm/retry';
import type { ChatRequest, ChatResult, ModelClient } from '../llm/types';
import { LOAD_SKILL_TOOL, loadSkillTool, skillListingPrompt } from '../prompts/activation';
import { parseFrontMatter } from '../skill/frontMatter';
import { skillDirName } from '../train/rolloutItem';
import type { TriggerQuery } from './queries';
import type { TriggerRun } from './rate';

/** How trigger runs reach the target: its own skill discovery, or the listing prompt. */
export type TriggerMode = 'agent' | 'chat';

export interface TriggerEvalOptions {
  target: ModelClient;
  mode: TriggerMode;
  repeats: number;
  hostBudgetChars: number;
  temperature?: number;
  signal: AbortSignal;
}

/** The request of one trigger run. */
export function triggerRequest(
  skill: string,
  q: TriggerQuery,
  repeat: number,
  opts: TriggerEvalOptions,
): ChatRequest {
  const name = skillDirName(skill);
  const base = {
    role: 'target' as const,
    stage: 'trigger' as const,
    ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
    ...(repeat ? { repeat, seed: repeat } : {}),
  };
  if (opts.mode === 'agent') {
    return {
      ...base,
      messages: [{ role: 'user', content: q.query }],
      task: { taskId: `trigger-${q.id}`, skill, skillName: name, prompt: q.query, delivery: 'native' },
    };
  }
  const description = parseFrontMatter(skill)?.description ?? '';
  return {
    ...base,
    messages: [
      { role: 'system', content: skillListingPrompt([{ name, description }], opts.hostBudgetChars) },
      { role: 'user', content: q.query },
    ],
    tools: [loadSkillTool([name])],
    maxTokens: 512,
  };
}

/** Whether the reply shows the skill loaded: the agent's own report, or a call of the load function. */
export function loadedIn(reply: Pick<ChatResult, 'trace'>, mode: TriggerMode, name: string): boolean {
  const trace = reply.trace ?? {};
  if (mode === 'agent') return trace.skillLoaded === true;
  const calls = Array.isArray(trace.toolCalls) ? (trace.toolCalls as Array<Record<string, unknown>>) : [];
  return calls.some((c) => {
    const args = c.arguments as Record<string, unknown> | undefined;
    return c.name === LOAD_SKILL_TOOL && args?.name === name;
  });
}

/** Every query × repeat through the target; errored runs are kept with their error, never as "not loaded". */
export async function runTriggers(
  skill: string,
  queries: readonly TriggerQuery[],
  opts: TriggerEvalOptions,
): Promise<TriggerRun[]> {
  const name = skillDirName(skill);
  const jobs = queries.flatMap((q) => Array.from({ length: opts.repeats }, (_, r) => ({ q, r })));
  return Promise.all(
    jobs.map(async ({ q, r }): Promise<TriggerRun> => {
      const run = { id: q.id, repeat: r, shouldTrigger: q.shouldTrigger };
      try {
        const reply = await opts.target.chat(triggerRequest(skill, q, r, opts), opts.signal);
        return { ...run, loaded: loadedIn(reply, opts.mode, name) };
      } catch (err) {
        if (SkillOptError.is(err, 'cancelled')) throw err;
        return { ...run, error: messageOf(err), errorKind: errorKind(err) };
      }
    }),
  );
}

/** Stops the run when errored trigger runs dominate (limits.max_errored_share), as rollouts do. */
export function checkTriggerErrors(runs: readonly TriggerRun[], what: string, maxShare: number): void {
  const errored = runs.filter((r) => r.loaded === undefined);
  if (errored.length === 0 || errored.length <= maxShare * runs.length) return;
  const byKind = new Map<string, number>();
  for (const r of errored) byKind.set(r.errorKind ?? 'other', (byKind.get(r.errorKind ?? 'other') ?? 0) + 1);
  const causes = [...byKind.entries()]
    .map(([k, n]) => `${TARGET_ERROR_LABELS[k as TargetErrorKind] ?? k} ×${n}`)
    .join(', ');
  // The first error's own fix stands for all only when every run failed the same way.
  const first = splitFix(errored[0].error ?? '', byKind.size > 1);
  throw new SkillOptError(
    'target',
    `the target could not run ${errored.length} of ${runs.length} trigger queries in ${what} (${causes}). First error: ${first.problem}`,
    {
      key: 'limits.max_errored_share',
      // One "Fix:": the first error's own when every run failed the same way.
      fix: `${first.fix ? `${first.fix}, then resume` : 'fix the cause above and resume'} the run; the description was not judged on these runs`,
    },
  );
}
