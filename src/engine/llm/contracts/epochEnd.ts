/** Contracts of the epoch-end calls: slow update, meta skill, appendix consolidation. */
import { z } from 'zod';
import { type Contract, nonEmptyText, reasoning } from './contract';
import { notesList } from './payload';

export interface SlowUpdateReply {
  reasoning: string;
  slow_update_content: string;
  [key: string]: unknown;
}

export function slowUpdateContract(): Contract<SlowUpdateReply> {
  return {
    name: 'slow_update',
    stage: 'slow_update',
    schema: z.looseObject({ reasoning: reasoning(), slow_update_content: nonEmptyText() }),
    describe: () =>
      '{"reasoning": string, "slow_update_content": string  // the new guidance for the protected block}',
  };
}

export interface MetaSkillReply {
  reasoning: string;
  meta_skill_content: string;
  [key: string]: unknown;
}

export function metaSkillContract(): Contract<MetaSkillReply> {
  return {
    name: 'meta_skill',
    stage: 'meta_skill',
    schema: z.looseObject({ reasoning: reasoning(), meta_skill_content: nonEmptyText() }),
    describe: () => '{"reasoning": string, "meta_skill_content": string  // the optimizer memory}',
  };
}

export interface AppendixConsolidateReply {
  appendix_notes: string[];
  [key: string]: unknown;
}

export function appendixConsolidateContract(): Contract<AppendixConsolidateReply> {
  return {
    name: 'appendix_consolidate',
    stage: 'appendix_consolidate',
    schema: z.looseObject({ appendix_notes: notesList() }),
    describe: () => '{"appendix_notes": [string]  // the consolidated notes, shortest faithful list}',
  };
}
