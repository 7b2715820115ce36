/**
 * How a chat target answers one item when that takes more than one plain call: OfficeQA's document
 * tool loop (env.max_tool_turns) and the reference's refinement turns (env.max_turns). Built once
 * per run (turns/fromConfig.ts) and carried to every rollout of it.
 */
import type { TaskItem } from '../../data/tasks';
import type { ReplyToolCall, TaskContext, ToolSpec } from '../../llm/types';

/** What one function call did: the line the trajectory records and what the model is sent back. */
export interface ToolObservation {
  cmd: string;
  obs: string;
}

export interface ItemTools {
  /** Runs one function call of the model's; never throws for a bad call (the observation says what was wrong). */
  run(call: ReplyToolCall): ToolObservation;
}

/** A refinement turn's request, as each reference benchmark sends it. */
export interface RefineStyle {
  /** The reference benchmark whose turns these are (for notices). */
  name: string;
  /** Resend the task and the previous reply (DocVQA), or only the system prompt and the refinement (SearchQA, LiveMath). */
  history: boolean;
  /** A first reply that already has an answer ends the item (DocVQA, LiveMath); SearchQA always refines once. */
  stopOnFirstAnswer: boolean;
  /** The refinement message, given the previous reply and the answer tag. */
  prompt(previous: string, tag: string): string;
}

export interface TargetTurns {
  /** The item's task message instead of the plain one (OfficeQA: question, oracle pages, files). */
  taskMessage?(item: TaskItem): string;
  /** Appended to our default system prompt (not to a user's env.target_system_prompt). */
  systemNote?: string;
  /** A tool loop of at most `maxTurns` model calls. */
  tools?: { specs: readonly ToolSpec[]; maxTurns: number; forItem(item: TaskItem): ItemTools };
  /** Folders an agent target gets read-only in its workspace (OfficeQA's documents under `docs/`). */
  agentFolders?: NonNullable<TaskContext['folders']>;
  /** Refinement turns: at most `maxTurns` model calls. */
  refine?: { maxTurns: number; style: RefineStyle };
}

/** Whether items need more than one call each (a provider batch cannot send them). */
/** The most target calls one item makes under this plan (1 without turns). */
export function maxTargetCalls(turns: TargetTurns | undefined): number {
  return Math.max(1, turns?.tools?.maxTurns ?? 1, turns?.refine?.maxTurns ?? 1);
}

export function multiTurn(turns: TargetTurns | undefined): boolean {
  return !!turns && (!!turns.tools || (turns.refine?.maxTurns ?? 1) > 1);
}
