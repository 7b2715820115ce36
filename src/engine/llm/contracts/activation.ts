/** The contract of the activation track's optimizer call: a new skill description. */
import { z } from 'zod';
import { hostChars } from '../../skill/lint';
import { type Contract, nonEmptyText, reasoning } from './contract';

export interface DescribeReply {
  reasoning: string;
  description: string;
  [key: string]: unknown;
}

/**
 * A description the hosts accept: one line (YAML folds it anyway), within `maxChars`, no XML tags
 * (Claude's skill rules refuse them). A reply that breaks a rule is asked again with the reason.
 */
export function describeContract(maxChars: number): Contract<DescribeReply> {
  const description = nonEmptyText()
    .transform((s) => s.replace(/\s+/g, ' ').trim())
    .refine((s) => hostChars(s) <= maxChars, { message: `must be at most ${maxChars} characters` })
    .refine((s) => !/<\/?[A-Za-z][^>]*>/.test(s), { message: 'must not contain XML tags' });
  return {
    name: 'describe',
    stage: 'describe',
    schema: z.looseObject({ reasoning: reasoning(), description }),
    describe: () => `{"reasoning": string, "description": string  // at most ${maxChars} characters}`,
  };
}
