import { z } from 'zod';
import {
  activationFields,
  cacheFields,
  envFields,
  evaluationFields,
  gradientFields,
  limitsFields,
  modelFields,
  optimizerFields,
  priceSchema,
  reviewFields,
  speedFields,
  trainFields,
} from './sections';

/**
 * The sectioned configuration: every key the SkillOpt reference reads (so its YAML files load
 * unchanged) plus this port's own keys, assembled from the section fields (sections.ts) into one
 * zod schema, with the config type and the lookups messages need.
 */

/** Field schemas per section; `prices` is a map and has no fixed fields. */
export const SECTION_FIELDS = {
  model: modelFields,
  train: trainFields,
  gradient: gradientFields,
  optimizer: optimizerFields,
  evaluation: evaluationFields,
  env: envFields,
  limits: limitsFields,
  cache: cacheFields,
  review: reviewFields,
  activation: activationFields,
  speed: speedFields,
} as const;

// zod compiles a fast path for each object schema on its first parse (about 10 ms for the config
// alone, before a run's first request); the engine parses each schema a few times per run, so the
// interpreted path is faster overall. Global to zod: set where the config schema is built.
z.config({ jitless: true });

export type FieldSection = keyof typeof SECTION_FIELDS;
export const SECTION_NAMES = [...(Object.keys(SECTION_FIELDS) as FieldSection[]), 'prices'] as const;
export type SectionName = FieldSection | 'prices';

export const configSchema = z.object({
  model: z.object(modelFields).prefault({}),
  train: z.object(trainFields).prefault({}),
  gradient: z.object(gradientFields).prefault({}),
  optimizer: z.object(optimizerFields).prefault({}),
  evaluation: z.object(evaluationFields).prefault({}),
  // Every env key a benchmark reads is a field (envFields.ts); validate refuses any other.
  env: z.object(envFields).prefault({}),
  limits: z.object(limitsFields).prefault({}),
  cache: z.object(cacheFields).prefault({}),
  prices: z.record(z.string(), priceSchema).default({}),
  review: z.object(reviewFields).prefault({}),
  activation: z.object(activationFields).prefault({}),
  speed: z.object(speedFields).prefault({}),
});

export type SkillOptConfig = z.output<typeof configSchema>;

export function defaultConfig(): SkillOptConfig {
  return configSchema.parse({});
}

export function isSectionName(name: string): name is SectionName {
  return (SECTION_NAMES as readonly string[]).includes(name);
}

/** Schema of one `section.key` field, when the key is a declared field. */
export function fieldSchema(section: string, key: string): z.ZodType | undefined {
  if (!isSectionName(section) || section === 'prices') return undefined;
  const fields: Record<string, z.ZodType> = SECTION_FIELDS[section];
  return Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
}

/** Human description of what a config path accepts, for messages. */
export function describeExpected(path: readonly PropertyKey[]): string | undefined {
  const [section, key, third] = path.map(String);
  if (section === 'prices') {
    if (path.length === 1) return 'a mapping of model name to {input_per_mtok, output_per_mtok}';
    if (path.length === 2) return 'a mapping {input_per_mtok: <number>, output_per_mtok: <number>}';
    if (path.length === 3 && (third === 'input_per_mtok' || third === 'output_per_mtok')) {
      return 'a number ≥ 0 (dollars per million tokens)';
    }
    return undefined;
  }
  if (key === undefined) return isSectionName(section) ? 'a mapping of keys' : undefined;
  if (path.length === 2) return fieldSchema(section, key)?.description;
  if (path.length === 3 && section === 'limits' && key === 'provider_concurrency') return 'an integer ≥ 1';
  if (path.length === 3 && section === 'env' && key === 'scorer' && third === 'type')
    return 'a non-empty string';
  return undefined;
}
