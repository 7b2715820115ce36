/** The run's scorer when the tasks carry their own assertions: env.scorer for the others, the judge for expectations. */
import type { TaskItem } from '../data/tasks';
import type { Logger } from '../log';
import type { ModelSetup } from '../models';
import { withAssertions } from './assertionScorer';
import { createJudge } from './judge';
import type { Scorer } from './scorers';

export function assertionScorer(
  base: Scorer,
  tasks: readonly TaskItem[],
  models: Pick<ModelSetup, 'judge' | 'accounting'>,
  /** The judge's completion cap: the optimizer's, as it runs on the optimizer's backend. */
  maxTokens: number,
  logger?: Logger,
): Scorer {
  if (!tasks.some((t) => t.assertions?.length)) return base;
  const judge = models.judge
    ? createJudge(models.judge, { accounting: models.accounting, maxTokens, ...(logger ? { logger } : {}) })
    : undefined;
  return withAssertions(base, judge);
}
