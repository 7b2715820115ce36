/**
 * Contracts of the step's later stages: merge (aggregate), ranking and the autonomous learning rate
 * (select), the rewrite (update).
 */
import { z } from 'zod';
import { payloadKey, type UpdateMode } from '../../prompts/modes';
import { type Contract, integer, mustBe, nonEmptyText, reasoning, stringList, text } from './contract';
import { itemShape, patchBodySchema, type PatchBody } from './payload';

export function mergeContract(mode: UpdateMode): Contract<PatchBody> {
  const key = payloadKey(mode);
  return {
    name: 'merge',
    stage: 'merge',
    schema: patchBodySchema(mode),
    describe: () =>
      [
        '{',
        '  "reasoning": string,',
        `  "${key}": [  // each item may also carry "support_count": int and "source_type": failure|success`,
        `    ${itemShape(mode)}`,
        '  ]',
        '}',
      ].join('\n'),
  };
}

export interface RankingReply {
  reasoning: string;
  selected_indices: number[];
  [key: string]: unknown;
}

export function rankingContract(): Contract<RankingReply> {
  return {
    name: 'ranking',
    stage: 'ranking',
    schema: z.looseObject({
      reasoning: reasoning(),
      selected_indices: z.preprocess(
        (v) => (typeof v === 'number' || typeof v === 'string' ? [v] : v),
        z
          .array(integer('an integer index'), { error: mustBe('a list of integer indices') })
          .min(1, { message: 'select at least one index' }),
      ),
    }),
    describe: () => '{"reasoning": string, "selected_indices": [int, ...]  // 0-based, most important first}',
  };
}

export interface RewriteReply {
  reasoning: string;
  change_summary: string[];
  new_skill: string;
  [key: string]: unknown;
}

export function rewriteContract(): Contract<RewriteReply> {
  return {
    name: 'rewrite',
    stage: 'rewrite',
    schema: z.looseObject({
      reasoning: reasoning(),
      change_summary: stringList(),
      new_skill: nonEmptyText(),
    }),
    describe: () =>
      '{"reasoning": string, "change_summary": [string], "new_skill": string  // the complete new skill document}',
  };
}

/**
 * The reference's lenient learning-rate parse (§3.4): booleans refused; integers and integral
 * floats taken as is; in a string, the first integer; negative values become 0.
 */
export function parseLearningRate(v: unknown): number | null {
  let n: number | null = null;
  if (typeof v === 'number' && Number.isInteger(v)) n = v;
  else if (typeof v === 'string') {
    const m = /-?\d+/.exec(v);
    n = m ? Number(m[0]) : null;
  }
  return n === null ? null : Math.max(0, n);
}

export interface LrAutonomousReply {
  learning_rate: number;
  reasoning: string;
  confidence: string;
  risk_notes: string[];
  [key: string]: unknown;
}

export function lrAutonomousContract(): Contract<LrAutonomousReply> {
  return {
    name: 'lr_autonomous',
    stage: 'lr_autonomous',
    schema: z.looseObject({
      learning_rate: z.preprocess(
        (v) => parseLearningRate(v) ?? v,
        z.number({ error: mustBe('a whole number ≥ 0') }).int({ message: 'expected a whole number ≥ 0' }),
      ),
      reasoning: reasoning(),
      confidence: z.preprocess((v) => (typeof v === 'number' ? String(v) : (v ?? '')), text()),
      risk_notes: stringList(),
    }),
    describe: () =>
      '{"learning_rate": int  // how many items to apply now, ≥ 0\n "reasoning": string, "confidence": string, "risk_notes": [string]}',
  };
}
