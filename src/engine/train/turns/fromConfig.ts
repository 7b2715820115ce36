/**
 * The run's turn plan from its config: OfficeQA's document tools (data/officeqa/env.ts).
 */
import type { SkillOptConfig } from '../../config/schema';
import { officeQaTurns } from '../../data/officeqa/env';
import { SkillOptError } from '../../errors';
import type { ModelClient } from '../../llm/types';
import type { TargetTurns } from './types';

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
  return { notices: [] };
}
