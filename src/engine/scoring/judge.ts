/**
 * The judge: a model that grades the natural-language expectations of the user's eval files
 * (skill-creator `expectations`, promptfoo `llm-rubric`) pass or fail, all of one task's in one
 * structured call. Its client is its own (evaluation.judge_model, on the optimizer's backend), never
 * the optimizer client, which refuses test items; its calls go through the model client, so they are
 * cached, retried, paid and recorded in the ledger under the stage `judge`.
 */
import { z } from 'zod';
import { SkillOptError } from '../errors';
import type { TaskItem } from '../data/tasks';
import type { Contract } from '../llm/contracts/contract';
import { integer, mustBe, optionalText } from '../llm/contracts/contract';
import { structuredCall, type FallbackRecorder } from '../llm/structured';
import type { ModelClient } from '../llm/types';
import type { Logger } from '../log';
import type { ScoredReply } from './scorers';
import { JUDGE_SYSTEM, judgeUserMessage } from '../prompts/judge';

export interface Grade {
  passed: boolean;
  evidence: string;
}

export interface Judge {
  readonly model: string;
  grade(
    item: TaskItem,
    reply: ScoredReply,
    expectations: readonly string[],
    signal?: AbortSignal,
  ): Promise<Grade[]>;
}

const passed = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    const t = v.trim().toLowerCase();
    return t === 'true' || t === 'pass' || t === 'passed'
      ? true
      : t === 'false' || t === 'fail' || t === 'failed'
        ? false
        : v;
  },
  z.boolean({ error: mustBe('true or false') }),
);

/** The reply shape for `n` expectations: one grade per expectation, indexed 1..n. */
export function judgeContract(n: number): Contract<Grade[]> {
  const schema = z
    .object({
      grades: z.array(z.object({ index: integer('an integer'), passed, evidence: optionalText() }), {
        error: mustBe('a list of grades'),
      }),
    })
    .superRefine((v, ctx) => {
      const seen = new Set(v.grades.map((g) => g.index));
      const missing = Array.from({ length: n }, (_, i) => i + 1).filter((i) => !seen.has(i));
      if (missing.length)
        ctx.addIssue({
          code: 'custom',
          path: ['grades'],
          message: `no grade for expectation ${missing.join(', ')}`,
        });
      const extra = v.grades.find((g) => g.index < 1 || g.index > n);
      if (extra)
        ctx.addIssue({
          code: 'custom',
          path: ['grades'],
          message: `index ${extra.index} is not between 1 and ${n}`,
        });
    })
    .transform((v) =>
      Array.from({ length: n }, (_, i) => {
        const g = v.grades.find((x) => x.index === i + 1)!;
        return { passed: g.passed, evidence: g.evidence ?? '' };
      }),
    );
  return {
    name: 'judge',
    stage: 'judge',
    schema,
    describe: () =>
      `{"grades": [{"index": <1..${n}>, "passed": true|false, "evidence": "<one sentence>"}]} with exactly ${n} grade(s), one per expectation`,
  };
}

export interface JudgeOptions {
  /** Fallbacks (a reply still unusable after one re-ask) are recorded here, as for every structured call. */
  accounting?: FallbackRecorder;
  logger?: Logger;
  maxTokens?: number;
}

export function createJudge(client: ModelClient, opts: JudgeOptions = {}): Judge {
  return {
    model: `${client.backend} ${client.model}`,
    async grade(item, reply, expectations, signal) {
      const outcome = await structuredCall(
        client,
        {
          role: client.role,
          stage: 'judge',
          messages: [
            { role: 'system', content: JUDGE_SYSTEM },
            {
              role: 'user',
              content: judgeUserMessage(
                item.input,
                reply,
                expectations,
                (item.files ?? []).map((f) => f.name),
              ),
            },
          ],
          ...(opts.maxTokens ? { maxTokens: opts.maxTokens } : {}),
        },
        judgeContract(expectations.length),
        {
          ...(signal ? { signal } : {}),
          ...(opts.accounting ? { accounting: opts.accounting } : {}),
          ...(opts.logger ? { logger: opts.logger } : {}),
        },
      );
      if (outcome.ok) return outcome.value;
      // No grade is not a failed grade: the item is kept out of the scores, like a target that errored.
      throw new SkillOptError(
        'llm',
        `the judge's reply on task "${item.id}" could not be used: ${outcome.error}`,
        {
          fix: 'check evaluation.judge_model (a model that follows JSON instructions); the item is counted as errored',
        },
      );
    },
  };
}
