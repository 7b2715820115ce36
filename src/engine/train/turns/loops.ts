/**
 * The multi-call ways a chat target answers one item: a tool loop (each reply's function calls run
 * and their results sent back, until a reply gives the answer or the turns run out) and refinement
 * turns (the reply is asked for again, as the reference's benchmarks ask). Every call goes through
 * the target client, so each turn is limited, retried, cached and in the ledger like any call.
 */
import { SkillOptError } from '../../errors';
import type { ChatMessage, ModelClient, ReplyToolCall, ToolSpec } from '../../llm/types';
import type { ConversationRecord, ToolCallRecord, TurnStep } from '../../../protocol/records';
import { excerpt } from '../trajectories';
import type { ItemTools, RefineStyle } from './types';
import type { TargetCall } from '../rolloutItem';

/** What the result row keeps of each turn (conversation.json keeps it whole). */
const STEP_CHARS = 1500;

export interface TurnsOutcome {
  /** The last reply's text: what is scored. */
  text: string;
  /** Set when the item ended without an answer (the reference scores it as no answer). */
  noAnswer?: string;
  /** The conversation after the task message. */
  records: Array<ConversationRecord | ToolCallRecord>;
  steps: TurnStep[];
  turns: number;
  /** Every turn came from the response cache. */
  cached: boolean;
  /** Set when a call failed after its retries: the item is errored, not failed. */
  error?: unknown;
}

interface LoopOptions {
  client: ModelClient;
  signal: AbortSignal;
  answerTag: string;
}

function hasAnswer(text: string, tag: string): boolean {
  return text.toLowerCase().includes(`<${tag.toLowerCase()}>`);
}

function callsOf(trace: Record<string, unknown> | undefined, turn: number): ReplyToolCall[] {
  const calls = Array.isArray(trace?.toolCalls) ? (trace.toolCalls as ReplyToolCall[]) : [];
  // Every result must name its call; a server that gave no id gets one the next request carries.
  return calls.map((c, i) => (c.id ? c : { ...c, id: `call_${turn}_${i + 1}` }));
}

/** One model call of the loop; a failure ends the item as errored (cancellation still stops the run). */
async function turnCall(
  call: TargetCall,
  messages: ChatMessage[],
  opts: LoopOptions,
  extra: Partial<TargetCall['req']> = {},
): Promise<{ text: string; cached: boolean; trace?: Record<string, unknown> } | { error: unknown }> {
  try {
    const reply = await opts.client.chat({ ...call.req, ...extra, messages }, opts.signal);
    return { text: reply.text, cached: reply.cached, ...(reply.trace ? { trace: reply.trace } : {}) };
  } catch (err) {
    if (SkillOptError.is(err, 'cancelled')) throw err;
    return { error: err };
  }
}

/** OfficeQA's tool loop: at most `maxTurns` calls; a reply with function calls is answered and the loop goes on. */
export async function runToolLoop(
  call: TargetCall,
  tools: { specs: readonly ToolSpec[]; maxTurns: number; item: ItemTools },
  opts: LoopOptions,
): Promise<TurnsOutcome> {
  const messages = [...call.messages];
  const out: TurnsOutcome = { text: '', records: [], steps: [], turns: 0, cached: true };
  for (let turn = 1; turn <= tools.maxTurns; turn++) {
    const reply = await turnCall(call, [...messages], opts, { tools: [...tools.specs] });
    if ('error' in reply) return { ...out, error: reply.error };
    out.turns = turn;
    out.cached &&= reply.cached;
    out.text = reply.text;
    if (reply.text) {
      out.records.push({ role: 'assistant', content: reply.text, turn });
      out.steps.push({ turn, reply: excerpt(reply.text, STEP_CHARS) });
    }
    const calls = callsOf(reply.trace, turn);
    if (calls.length) {
      messages.push({ role: 'assistant', content: reply.text, toolCalls: calls });
      for (const c of calls) {
        const seen = tools.item.run(c);
        out.records.push({ type: 'tool_call', turn, cmd: seen.cmd, obs: seen.obs });
        out.steps.push({ turn, cmd: seen.cmd, obs: excerpt(seen.obs, STEP_CHARS) });
        messages.push({ role: 'tool', toolCallId: c.id, content: seen.obs });
      }
      continue;
    }
    if (hasAnswer(reply.text, opts.answerTag)) return out;
    if (turn < tools.maxTurns)
      return { ...out, noAnswer: 'the reply neither called a tool nor gave a final answer' };
  }
  return {
    ...out,
    noAnswer: `the tool-turn budget (env.max_tool_turns ${tools.maxTurns}) ran out before a final answer`,
  };
}

/** Refinement turns (env.max_turns): the reply asked for again until one has an answer, as `style` sends it. */
export async function runRefineTurns(
  call: TargetCall,
  refine: { maxTurns: number; style: RefineStyle },
  opts: LoopOptions,
): Promise<TurnsOutcome> {
  const { style } = refine;
  const out: TurnsOutcome = { text: '', records: [], steps: [], turns: 0, cached: true };
  for (let turn = 1; turn <= refine.maxTurns; turn++) {
    let messages = call.messages;
    if (turn > 1) {
      const ask = style.prompt(out.text, opts.answerTag);
      out.records.push({ role: 'user', content: ask, turn });
      messages = style.history
        ? [...call.messages, { role: 'assistant', content: out.text }, { role: 'user', content: ask }]
        : [...call.messages.filter((m) => m.role === 'system'), { role: 'user', content: ask }];
    }
    const reply = await turnCall(call, messages, opts);
    if ('error' in reply) return { ...out, error: reply.error };
    out.turns = turn;
    out.cached &&= reply.cached;
    out.text = reply.text;
    out.records.push({ role: 'assistant', content: reply.text, turn });
    out.steps.push({ turn, reply: excerpt(reply.text, STEP_CHARS) });
    if (hasAnswer(reply.text, opts.answerTag) && (turn > 1 || style.stopOnFirstAnswer)) break;
  }
  return out;
}
