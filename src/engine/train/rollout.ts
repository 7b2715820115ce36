import type { TaskItem } from '../data/tasks';
import { SkillOptError } from '../errors';
import { TARGET_ERROR_LABELS, type TargetErrorKind } from '../../protocol/vocabulary';
import { errorKind } from '../llm/retry';
import type { ChatMessage, ModelClient, Stage } from '../llm/types';
import { targetSystemPrompt } from '../prompts/system';
import { extractAnswer } from '../scoring/extract';
import type { Scorer } from '../scoring/scorers';
import { writeJsonAtomic } from '../store/atomic';
import { appendJsonl, readJsonlTolerant } from '../store/jsonl';
import { evalPaths } from '../store/layout';
import { assignPredictionNames } from '../store/predictionNames';
import type { RunContext } from './context';
import { describeAgentRun, excerpt } from './trajectories';
import type { AgentRun, ConversationRecord, RolloutResult, Score } from '../../protocol/records';

export interface RolloutOptions {
  items: readonly TaskItem[];
  skill: string;
  /** Rollout directory: `results.jsonl` and `predictions/<id>/conversation.json`. */
  dir: string;
  client: ModelClient;
  scorer: Scorer;
  stage: Stage;
  answerTag: string;
  /** A user-supplied system prompt template with `{skill}`; our default otherwise. */
  systemTemplate?: string;
  maxTokens?: number;
  temperature?: number;
  /** A repeated sample (evaluation.repeats), counted from 0: sent with a seed of its own, cached apart. */
  repeat?: number;
  signal: AbortSignal;
  /** Called as each item finishes (resumed items first), with the count done so far. */
  onResult?: (result: RolloutResult, done: number, total: number) => void;
}

export function renderTargetSystem(skill: string, answerTag: string, template?: string): string {
  if (template) return template.replace(/\{skill\}/g, skill.trim());
  return targetSystemPrompt(skill, answerTag);
}

export function renderTaskMessage(item: TaskItem): string {
  const parts: string[] = [];
  if (item.context) parts.push(`Context:\n${item.context}`);
  parts.push(item.input);
  if (item.choices?.length) {
    parts.push('Choices:\n' + item.choices.map((c, i) => `${String.fromCharCode(65 + i)}. ${c}`).join('\n'));
  }
  return parts.join('\n\n');
}

/**
 * Run the target on every item with the skill as its system prompt, score each reply, and write the
 * reference's rollout layout. Resume-aware per item: rows already in `results.jsonl` are reused.
 * A target call that fails after retries is a scored failure, not an exception; cancellation is.
 */
export async function rollout(opts: RolloutOptions): Promise<RolloutResult[]> {
  const resultsPath = evalPaths(opts.dir).results;
  const wanted = new Set(opts.items.map((i) => i.id));
  const done = new Map<string, RolloutResult>();
  // An errored row is not an answer: a resumed run asks again (the cause may be gone).
  for (const row of readJsonlTolerant<RolloutResult>(resultsPath))
    if (wanted.has(row.id)) {
      if (isErrored(row)) done.delete(row.id);
      else done.set(row.id, row);
    }
  const total = opts.items.length;
  let finished = 0;
  for (const item of opts.items) {
    const prior = done.get(item.id);
    if (prior) opts.onResult?.(prior, ++finished, total);
  }
  const system = renderTargetSystem(opts.skill, opts.answerTag, opts.systemTemplate);
  const names = assignPredictionNames(
    opts.dir,
    opts.items.map((i) => i.id),
  );
  const conversation = (id: string): string => evalPaths(opts.dir).conversationIn(names.get(id)!);

  await Promise.all(
    opts.items
      .filter((item) => !done.has(item.id))
      .map(async (item) => {
        const result = await runItem(item, system, opts, conversation(item.id));
        appendJsonl(resultsPath, result);
        done.set(item.id, result);
        opts.onResult?.(result, ++finished, total);
      }),
  );
  return opts.items.map((i) => done.get(i.id)!);
}

async function runItem(
  item: TaskItem,
  system: string,
  opts: RolloutOptions,
  conversationFile: string,
): Promise<RolloutResult> {
  const user = renderTaskMessage(item);
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
  const base = {
    id: item.id,
    ...(item.taskType !== undefined ? { task_type: item.taskType } : {}),
    task_description: item.input,
    expected: item.answers,
    n_turns: 1,
  };
  let response: string;
  let cached: boolean;
  let agentRun: AgentRun | undefined;
  try {
    const reply = await opts.client.chat(
      {
        role: 'target',
        stage: opts.stage,
        messages,
        ...(opts.maxTokens !== undefined ? { maxTokens: opts.maxTokens } : {}),
        ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
        ...(opts.repeat ? { repeat: opts.repeat, seed: opts.repeat } : {}),
        // Agent harnesses see only task.md and SKILL.md, so the answer format travels with the task.
        task: {
          taskId: item.id,
          skill: opts.skill,
          skillName: skillDirName(opts.skill),
          prompt: `${user}\n\nEnd with your final answer wrapped as <${opts.answerTag}>...</${opts.answerTag}>.`,
        },
      },
      opts.signal,
    );
    response = reply.text;
    cached = reply.cached;
    agentRun = agentRunOf(reply.trace);
  } catch (err) {
    if (SkillOptError.is(err, 'cancelled')) throw err;
    const message = err instanceof Error ? err.message : String(err);
    const result: RolloutResult = {
      ...base,
      hard: 0,
      soft: 0,
      predicted_answer: '',
      response: '',
      outcome: 'errored',
      error: message,
      error_kind: errorKind(err),
    };
    writeConversation(conversationFile, [
      ...messages.slice(1),
      { role: 'system', content: `[TARGET ERROR] ${message}` },
    ]);
    return result;
  }
  const predicted = extractAnswer(response, opts.answerTag).answer;
  const score = await opts.scorer.score(predicted, item, opts.signal);
  const result: RolloutResult = {
    ...base,
    hard: score.hard,
    soft: score.soft,
    ...(score.hard < 1 ? { fail_reason: score.reason } : {}),
    predicted_answer: predicted,
    response,
    ...(cached ? { cached } : {}),
    ...(agentRun ? { agent_run: agentRun } : {}),
  };
  writeConversation(conversationFile, [
    { role: 'user', content: user },
    { role: 'assistant', content: response },
    ...(agentRun ? [{ role: 'system' as const, content: `[AGENT RUN] ${describeAgentRun(agentRun)}` }] : []),
    {
      role: 'system',
      content: `[EVALUATION RESULT] ${score.hard >= 1 ? 'PASS' : 'FAIL'} hard=${score.hard} soft=${score.soft.toFixed(2)}; predicted "${predicted}", expected ${JSON.stringify(item.answers)}. ${score.reason}`,
    },
  ]);
  return result;
}

/** Agent CLIs find a skill by its folder, which should match the front matter's `name:`. */
function skillDirName(skill: string): string {
  const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(skill)?.[1];
  const name = front && /^name:\s*["']?([A-Za-z0-9][A-Za-z0-9._-]*)["']?\s*$/m.exec(front)?.[1];
  return name || 'skill';
}

/** The part of a `command` backend trace the trajectory keeps; undefined for chat backends. */
function agentRunOf(trace: Record<string, unknown> | undefined): AgentRun | undefined {
  if (!trace || typeof trace.durationMs !== 'number') return undefined;
  return {
    exit_code: typeof trace.exitCode === 'number' ? trace.exitCode : null,
    signal: typeof trace.signal === 'string' ? trace.signal : null,
    timed_out: trace.timedOut === true,
    duration_ms: trace.durationMs,
    stderr: excerpt(typeof trace.stderr === 'string' ? trace.stderr : '', 2000),
    // A custom command prints plain text: what it did is unknown, not "nothing".
    ...(trace.agent !== 'custom' ? agentActivity(trace) : {}),
  };
}

/** What a known agent CLI reported doing (from its JSON events). */
function agentActivity(trace: Record<string, unknown>): Partial<AgentRun> {
  return {
    ...(typeof trace.skillLoaded === 'boolean' ? { skill_loaded: trace.skillLoaded } : {}),
    ...(Array.isArray(trace.toolCalls)
      ? {
          tool_calls: (trace.toolCalls as Array<{ name?: unknown; detail?: unknown }>)
            .slice(0, 50)
            .map((c) => ({
              name: String(c.name),
              ...(typeof c.detail === 'string' ? { detail: c.detail } : {}),
            })),
        }
      : {}),
    ...(typeof trace.turns === 'number' ? { turns: trace.turns } : {}),
  };
}

function writeConversation(file: string, records: ConversationRecord[]): void {
  writeJsonAtomic(file, records);
}

/** The target could not answer this item: no score, no failure, no trajectory for the analysts. */
export function isErrored(r: RolloutResult): boolean {
  return r.outcome === 'errored';
}

/** Unweighted means over the answered items, as the reference computes them over all of its. */
export function meanScore(results: readonly RolloutResult[]): Score {
  return meanOf(results.filter((r) => !isErrored(r)));
}

/** The unweighted mean of some scores, summed in their order; 0 for none. */
export function meanOf(scores: readonly Score[]): Score {
  if (scores.length === 0) return { hard: 0, soft: 0 };
  let hard = 0;
  let soft = 0;
  for (const s of scores) {
    hard += s.hard;
    soft += s.soft;
  }
  return { hard: hard / scores.length, soft: soft / scores.length };
}

/** An answered item that scored 0 (errored items are neither failures nor successes). */
export function isFailure(r: RolloutResult): boolean {
  return !isErrored(r) && (!r.hard || r.hard < 1e-9);
}

/**
 * Errored is not failed, and it must not pass for a result either: when the target could not
 * answer more than `maxShare` of a batch, the run stops here, before the optimizer is paid for
 * reflecting on it, naming the cause and the first error.
 */
export function checkErrored(results: readonly RolloutResult[], what: string, maxShare: number): void {
  const errored = results.filter(isErrored);
  if (errored.length === 0 || errored.length <= maxShare * results.length) return;
  const byKind = new Map<string, number>();
  for (const r of errored)
    byKind.set(r.error_kind ?? 'other', (byKind.get(r.error_kind ?? 'other') ?? 0) + 1);
  const causes = [...byKind.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${TARGET_ERROR_LABELS[k as TargetErrorKind] ?? k} ×${n}`)
    .join(', ');
  // The first error's own fix (the stored message is `<problem>. Fix: <fix>`) leads the run's fix.
  const text = errored[0].error ?? '';
  const cut = text.indexOf('. Fix: ');
  const first = cut < 0 ? text : text.slice(0, cut);
  const cause = cut < 0 ? 'fix the cause above' : text.slice(cut + '. Fix: '.length);
  throw new SkillOptError(
    'target',
    `the target could not answer ${errored.length} of ${results.length} items in ${what} (${causes}). First error: ${first}`,
    {
      key: 'limits.max_errored_share',
      fix: `${cause}; then resume the run (nothing answered so far is paid again); the skill was not judged on these items`,
    },
  );
}

const BATCH_NAMES: Partial<Record<Stage, string>> = {
  rollout: 'a training batch',
  selection: 'a selection evaluation',
  test: 'the test split',
  eval: 'the evaluation',
};

/**
 * A rollout with the options every stage shares, from the run's settings; it stops the run when
 * errored items dominate (limits.max_errored_share).
 */
export async function rolloutFor(
  ctx: RunContext,
  items: readonly TaskItem[],
  skill: string,
  dir: string,
  stage: Stage,
  onResult?: RolloutOptions['onResult'],
  repeat?: number,
): Promise<RolloutResult[]> {
  const s = ctx.settings;
  const results = await rollout({
    items,
    skill,
    dir,
    client: ctx.target,
    scorer: ctx.scorer,
    stage,
    answerTag: s.answerTag,
    ...(s.targetSystemTemplate !== undefined ? { systemTemplate: s.targetSystemTemplate } : {}),
    maxTokens: s.targetMaxTokens,
    ...(s.targetTemperature !== undefined ? { temperature: s.targetTemperature } : {}),
    ...(repeat ? { repeat } : {}),
    signal: ctx.signal,
    ...(onResult ? { onResult } : {}),
  });
  checkErrored(results, `${BATCH_NAMES[stage] ?? `the ${stage} rollout`} (${dir})`, s.maxErroredShare);
  return results;
}
