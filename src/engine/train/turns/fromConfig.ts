/**
 * The run's turn plan from its config: OfficeQA's document tools (data/officeqa/env.ts), or the
 * reference's refinement turns when env.max_turns is above 1, each benchmark's as it sends them.
 */
import type { SkillOptConfig } from '../../config/schema';
import { officeQaTurns } from '../../data/officeqa/env';
import { SkillOptError } from '../../errors';
import type { ModelClient } from '../../llm/types';
import type { RefineStyle, TargetTurns } from './types';

/** SearchQA's (and a plain task file's): the system prompt and the previous reply only; always one refinement. */
const SEARCHQA: RefineStyle = {
  name: 'searchqa',
  history: false,
  stopOnFirstAnswer: false,
  prompt: (previous, tag) =>
    `This was your previous answer:\n${previous}\n\nCheck it against the task. If it is right, give it again; if not, give the corrected answer. Put the final answer in <${tag}>...</${tag}>.`,
};

/** LiveMathematicianBench's: the previous reply only; a first reply with an answer ends the item. */
const LIVEMATH: RefineStyle = {
  name: 'livemathematicianbench',
  history: false,
  stopOnFirstAnswer: true,
  prompt: (previous, tag) =>
    `This was your previous answer:\n${previous}\n\nCheck it against the exact wording of the options and correct it if needed. Give only the label of your final choice in <${tag}>...</${tag}>.`,
};

/** DocVQA's: the task (with its image) and the previous reply resent; a first reply with an answer ends the item. */
const DOCVQA: RefineStyle = {
  name: 'docvqa',
  history: true,
  stopOnFirstAnswer: true,
  prompt: (_previous, tag) =>
    `Look at the same image again carefully and answer once more, with the final answer in <${tag}>...</${tag}>.`,
};

const STYLES: Record<string, RefineStyle> = {
  searchqa: SEARCHQA,
  livemathematicianbench: LIVEMATH,
  docvqa: DOCVQA,
};

/** The refinement turns of a reference benchmark; SearchQA's for a plain task file. */
export function refineStyleFor(benchmark: string | undefined): RefineStyle {
  return STYLES[benchmark ?? ''] ?? SEARCHQA;
}

/**
 * How the target answers each item beyond one call, with the notices to show; undefined turns =
 * one call per item. An agent target runs its own loop (env.max_turns is said not to bound it in
 * modelNotices.ts).
 */
export function turnsFor(
  cfg: SkillOptConfig,
  benchmark: string | undefined,
  target: Pick<ModelClient, 'backend' | 'acceptsTools'>,
): { turns?: TargetTurns; notices: string[] } {
  const maxTurns = cfg.env.max_turns;
  if (benchmark === 'officeqa') {
    if (maxTurns > 1) {
      throw new SkillOptError(
        'config',
        `env.max_turns is ${maxTurns}, but OfficeQA's turns are its document tool turns`,
        {
          key: 'env.max_turns',
          fix: 'set env.max_turns to 1 and env.max_tool_turns to the number of calls an item may take',
        },
      );
    }
    return officeQaTurns(cfg.env, target);
  }
  const notices: string[] = [];
  if (maxTurns <= 1 || target.backend === 'command') return { notices };
  const style = refineStyleFor(benchmark);
  return {
    turns: { refine: { maxTurns, style } },
    notices: [
      ...notices,
      `env.max_turns ${maxTurns}: up to ${maxTurns} target calls per item, each later one asking the target to check its reply, as the reference's ${style.name} rollout does (${style.history ? 'with the task and the previous reply' : 'with the previous reply only, not the task'}); the call estimate counts all of them, the cost range one call per item at its low end`,
    ],
  };
}
