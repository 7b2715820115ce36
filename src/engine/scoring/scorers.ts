/** The scorer registry: the config's `scorer` value → a Scorer, its options checked per type. */
import { z } from 'zod';
import { SkillOptError } from '../errors';
import type { TaskItem } from '../data/tasks';
import {
  anlsScorer,
  containsScorer,
  exactScorer,
  f1Scorer,
  normalizedExactScorer,
  regexScorer,
} from './textScorers';
import { officeQaScorer } from './officeqa';
import type { ExtractedAnswer } from './extract';
import { createCommandScorer, createModuleScorer } from './userScorer';
import { choiceScorer, jsonScorer, numericScorer } from './valueScorers';

/** `hard` is the pass/fail the gate counts; `soft` is partial credit in 0..1; `reason` is shown to the analyst. */
export interface ScoreResult {
  hard: 0 | 1;
  soft: number;
  reason: string;
}

export interface Scorer {
  name: string;
  /** How this scorer's benchmark reads the final answer out of a reply; default extractAnswer. */
  extract?: (response: string, tag: string) => ExtractedAnswer;
  /** `reply` is what `prediction` was read from (the judge grades it; checks read `prediction`). */
  score(prediction: string, item: TaskItem, signal?: AbortSignal, reply?: ScoredReply): Promise<ScoreResult>;
}

/** The whole reply, and for an agent target what its event stream says it did (skill loaded, tools). */
export interface ScoredReply {
  text: string;
  activity?: string;
}

export type ScorerSpec = string | ({ type: string } & Record<string, unknown>);

export interface ScorerContext {
  /** Folder of the config file: module paths and command working folders resolve against it. */
  baseDir: string;
}

export const scorerTypes = [
  'exact',
  'normalized_exact',
  'f1',
  'contains',
  'regex',
  'numeric',
  'choice',
  'anls',
  'officeqa',
  'json',
  'module',
  'command',
] as const;
export type ScorerType = (typeof scorerTypes)[number];

const named = { name: z.string().min(1).optional() };
const unit = z.number().min(0).max(1);
const optionSchemas = {
  exact: z.strictObject({ ...named }),
  normalized_exact: z.strictObject({ ...named }),
  f1: z.strictObject({ ...named, threshold: unit.optional() }),
  contains: z.strictObject({ ...named }),
  regex: z.strictObject({
    ...named,
    pattern: z.string().min(1).optional(),
    flags: z.string().optional(),
    full_match: z.boolean().optional(),
  }),
  numeric: z.strictObject({
    ...named,
    abs_tol: z.number().min(0).optional(),
    rel_tol: z.number().min(0).optional(),
  }),
  choice: z.strictObject({ ...named }),
  anls: z.strictObject({ ...named }),
  officeqa: z.strictObject({ ...named }),
  json: z.strictObject({ ...named }),
  module: z.strictObject({ ...named, path: z.string().min(1), export: z.string().min(1).optional() }),
  command: z.strictObject({
    ...named,
    command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
    timeout_s: z.number().positive().optional(),
  }),
} satisfies Record<ScorerType, z.ZodType>;

/**
 * Build a scorer from the config's `scorer` value: a type name (`"normalized_exact"`) or an object
 * `{type, ...options}`. Options are checked strictly so a misspelt key fails at load time, not after a
 * run has scored everything with defaults.
 */
export function createScorer(spec: ScorerSpec, ctx: ScorerContext): Scorer {
  const { type, ...options } = typeof spec === 'string' ? { type: spec } : spec;
  if (!isScorerType(type)) {
    throw new SkillOptError('config', `Unknown scorer type "${type}"`, {
      key: 'scorer.type',
      fix: `use one of ${scorerTypes.join(', ')}`,
    });
  }
  switch (type) {
    case 'exact':
      return exactScorer(parseOptions('exact', options));
    case 'normalized_exact':
      return normalizedExactScorer(parseOptions('normalized_exact', options));
    case 'f1':
      return f1Scorer(parseOptions('f1', options));
    case 'contains':
      return containsScorer(parseOptions('contains', options));
    case 'regex':
      return regexScorer(parseOptions('regex', options));
    case 'numeric':
      return numericScorer(parseOptions('numeric', options));
    case 'choice':
      return choiceScorer(parseOptions('choice', options));
    case 'anls':
      return anlsScorer(parseOptions('anls', options));
    case 'officeqa':
      return officeQaScorer(parseOptions('officeqa', options));
    case 'json':
      return jsonScorer(parseOptions('json', options));
    case 'module':
      return createModuleScorer(parseOptions('module', options), ctx);
    case 'command':
      return createCommandScorer(parseOptions('command', options), ctx);
  }
}

function isScorerType(type: string): type is ScorerType {
  return (scorerTypes as readonly string[]).includes(type);
}

function parseOptions<T extends ScorerType>(
  type: T,
  options: Record<string, unknown>,
): z.infer<(typeof optionSchemas)[T]> {
  const result = optionSchemas[type].safeParse(options);
  if (result.success) return result.data as z.infer<(typeof optionSchemas)[T]>;
  const issue = result.error.issues[0];
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const key = ['scorer', ...(keys.length ? [keys[0]] : issue.path.map(String))].join('.');
  const allowed = Object.keys(optionSchemas[type].shape).join(', ');
  throw new SkillOptError('config', `Scorer "${type}": ${issue.message}`, {
    key,
    fix: `the ${type} scorer accepts ${allowed}`,
  });
}
