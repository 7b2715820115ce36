/** One rollout item: the target request, the call, and the scored (or errored) result row. */
import { SKILL_DIR_NAME } from '../skill/dirName';
import { chatSkillView } from '../skill/package/views';
import { parseFrontMatter } from '../skill/frontMatter';
import { readImage } from '../data/images';
import type { TaskItem } from '../data/tasks';
import { SkillOptError, messageOf } from '../errors';
import { errorKind } from '../llm/retry';
import type { ChatMessage, ChatRequest, ChatResult } from '../llm/types';
import { targetSystemPrompt } from '../prompts/system';
import { extractAnswer } from '../scoring/extract';
import { choiceLabels } from '../scoring/valueScorers';
import { writeJsonAtomic } from '../store/atomic';
import type { RolloutOptions } from './rollout';
import { replyReference } from './storedReply';
import { runRefineTurns, runToolLoop, type TurnsOutcome } from './turns/loops';

/** The rollout's options plus where each item's conversation goes (names assigned once per rollout). */
export type ItemOptions = RolloutOptions & { conversationFile(taskId: string): string };
import { describeAgentRun, excerpt } from './trajectories';
import { renderInputFiles } from './inputFiles';
import type { AgentRun, ConversationRecord, RolloutResult } from '../../protocol/records';

export function renderTargetSystem(text: string, answerTag: string, template?: string): string {
  // A skill package reaches a chat model as SKILL.md and the files it refers to (skill/package/views.ts).
  const skill = chatSkillView(text);
  if (template) return template.replace(/\{skill\}/g, skill.trim());
  return targetSystemPrompt(skill, answerTag);
}

/** The task as the target reads it; input files inline (chat) or named as copies in the workspace (agents). */
export function renderTaskMessage(item: TaskItem, files: 'inline' | 'workspace' = 'inline'): string {
  const parts: string[] = [];
  if (item.context) parts.push(`Context:\n${item.context}`);
  parts.push(item.input);
  if (item.choices?.length) {
    const labels = choiceLabels(item);
    parts.push('Choices:\n' + item.choices.map((c, i) => `${labels[i]}. ${c}`).join('\n'));
  }
  if (item.files?.length) parts.push(renderInputFiles(item.files, files));
  return parts.join('\n\n');
}

/** The target request for one item, as the synchronous call and the batch API both send it. */
export function targetRequest(item: TaskItem, system: string, opts: ItemOptions): TargetCall {
  // An agent target (the command backend) finds input files in its workspace; a chat target reads them inline.
  const user =
    opts.turns?.taskMessage?.(item) ??
    renderTaskMessage(item, opts.client.backend === 'command' ? 'workspace' : 'inline');
  const images = (item.images ?? []).map((p) => readImage(p, item.imageDetail));
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: user, ...(images.length ? { images } : {}) },
  ];
  // Transcripts name the images; the bytes stay out of run folders.
  const userRecord: ConversationRecord = {
    role: 'user',
    content: [user, ...images.map((i) => `[image] ${i.name}`)].join('\n\n'),
  };
  const req: ChatRequest = {
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
      ...(item.files?.length
        ? { files: item.files.map((f) => ({ name: f.name, path: f.path, digest: f.digest })) }
        : {}),
      ...(opts.turns?.agentFolders?.length ? { folders: opts.turns.agentFolders } : {}),
    },
  };
  return { item, user, userRecord, messages, req };
}

export interface TargetCall {
  item: TaskItem;
  user: string;
  /** The task as the conversation file records it (images by name). */
  userRecord: ConversationRecord;
  messages: ChatMessage[];
  req: ChatRequest;
}

/** One item through the target client: scored, or `errored` when the call failed after its retries. */
export async function runItem(item: TaskItem, system: string, opts: ItemOptions): Promise<RolloutResult> {
  const call = targetRequest(item, system, opts);
  const tools = opts.turns?.tools;
  if (tools) {
    const loop = await runToolLoop(
      call,
      { specs: tools.specs, maxTurns: tools.maxTurns, item: tools.forItem(item) },
      opts,
    );
    return loop.error === undefined
      ? scoreOrErrored(call, { text: loop.text, cached: loop.cached }, opts, loop)
      : erroredResult(call, loop.error, opts, loop);
  }
  const refine = opts.turns?.refine;
  if (refine && refine.maxTurns > 1) {
    const turns = await runRefineTurns(call, refine, opts);
    return turns.error === undefined
      ? scoreOrErrored(call, { text: turns.text, cached: turns.cached }, opts, turns)
      : erroredResult(call, turns.error, opts, turns);
  }
  let reply: ChatResult;
  try {
    reply = await opts.client.chat(call.req, opts.signal);
  } catch (err) {
    if (SkillOptError.is(err, 'cancelled')) throw err;
    return erroredResult(call, err, opts);
  }
  return scoreOrErrored(call, reply, opts);
}

/** scoreReply, except that a judge model (scoring/judge.ts) that could not grade leaves the item errored, not failed. */
export async function scoreOrErrored(
  call: TargetCall,
  reply: Pick<ChatResult, 'text' | 'cached' | 'trace'>,
  opts: ItemOptions,
  turns?: TurnsOutcome,
): Promise<RolloutResult> {
  try {
    return await scoreReply(call, reply, opts, turns);
  } catch (err) {
    if (SkillOptError.is(err, 'llm')) return erroredResult(call, err, opts, turns);
    throw err;
  }
}

function baseOf(
  item: TaskItem,
): Pick<RolloutResult, 'id' | 'task_type' | 'task_description' | 'expected' | 'n_turns'> {
  return {
    id: item.id,
    ...(item.taskType !== undefined ? { task_type: item.taskType } : {}),
    task_description: item.input,
    expected: item.answers,
    n_turns: 1,
  };
}

function erroredResult(
  call: TargetCall,
  err: unknown,
  opts: ItemOptions,
  turns?: TurnsOutcome,
): RolloutResult {
  const message = messageOf(err);
  writeJsonAtomic(opts.conversationFile(call.item.id), [
    call.userRecord,
    // The turns an item had taken before a call failed stay readable (they are paid for).
    ...(turns?.records ?? []),
    { role: 'system', content: `[TARGET ERROR] ${message}` },
  ]);
  return {
    ...baseOf(call.item),
    ...(turns ? { n_turns: turns.turns, steps: turns.steps } : {}),
    hard: 0,
    soft: 0,
    predicted_answer: '',
    response: '',
    outcome: 'errored',
    error: message,
    error_kind: errorKind(err),
  };
}

/** Score the target's reply to one item and write its conversation. */
export async function scoreReply(
  call: TargetCall,
  reply: Pick<ChatResult, 'text' | 'cached' | 'trace'>,
  opts: Pick<ItemOptions, 'answerTag' | 'scorer' | 'signal' | 'conversationFile' | 'dir'>,
  turns?: TurnsOutcome,
): Promise<RolloutResult> {
  const { item } = call;
  const response = reply.text;
  const agentRun = agentRunOf(reply.trace);
  // A tool loop that ended without a final answer has none, as the reference scores it.
  const predicted =
    turns?.noAnswer !== undefined
      ? ''
      : (opts.scorer.extract ?? extractAnswer)(response, opts.answerTag).answer;
  const score = await opts.scorer.score(predicted, item, opts.signal, {
    text: response,
    ...(agentRun ? { activity: describeAgentRun(agentRun) } : {}),
  });
  const failReason = turns?.noAnswer ?? score.reason;
  const result: RolloutResult = {
    ...baseOf(item),
    ...(turns ? { n_turns: turns.turns, steps: turns.steps } : {}),
    hard: score.hard,
    soft: score.soft,
    ...(score.hard < 1 ? { fail_reason: failReason } : {}),
    predicted_answer: predicted,
    response,
    ...(reply.cached ? { cached: true } : {}),
    ...(agentRun ? { agent_run: agentRun } : {}),
  };
  const replies = turns ? turns.records : [{ role: 'assistant' as const, content: response }];
  const file = opts.conversationFile(item.id);
  writeJsonAtomic(file, [
    call.userRecord,
    ...replies,
    ...(agentRun ? [{ role: 'system' as const, content: `[AGENT RUN] ${describeAgentRun(agentRun)}` }] : []),
    {
      role: 'system',
      content: `[EVALUATION RESULT] ${score.hard >= 1 ? 'PASS' : 'FAIL'} hard=${score.hard} soft=${score.soft.toFixed(2)}; predicted "${predicted}", expected ${JSON.stringify(item.answers)}. ${failReason}`,
    },
  ]);
  return { ...result, ...replyReference(response, replies, file, opts.dir) };
}

/** Names of the skills asked about lately (the slow update's rollouts alternate two). */
const dirNames = new Map<string, string>();

/** Agent CLIs find a skill by its folder, which should match the front matter's `name:`. */
export function skillDirName(skill: string): string {
  // Asked once per target call: the front matter is parsed once per skill.
  const known = dirNames.get(skill);
  if (known !== undefined) return known;
  const parsed = parseFrontMatter(skill)?.name?.trim();
  const name = parsed && SKILL_DIR_NAME.test(parsed) ? parsed : 'skill';
  if (dirNames.size >= 4) dirNames.clear();
  dirNames.set(skill, name);
  return name;
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
