/** Field builders of the config schema: each carries the human description used in error messages. */
import { z } from 'zod';

export function text(def: string): z.ZodDefault<z.ZodString> {
  return z.string().default(def).describe('a string');
}
export function nonEmpty(def: string): z.ZodDefault<z.ZodString> {
  return z.string().trim().min(1).default(def).describe('a non-empty string');
}
export function int(def: number, min: number): z.ZodDefault<z.ZodNumber> {
  return z.number().int().min(min).default(def).describe(`an integer ≥ ${min}`);
}
export function num(def: number, min: number): z.ZodDefault<z.ZodNumber> {
  return z.number().min(min).default(def).describe(`a number ≥ ${min}`);
}
export function positive(def: number): z.ZodDefault<z.ZodNumber> {
  return z.number().positive().default(def).describe('a number > 0');
}
export function flag(def: boolean): z.ZodDefault<z.ZodBoolean> {
  return z.boolean().default(def).describe('true or false');
}
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, def: T[number]) {
  return z
    .enum(values)
    .default(def)
    .describe(`one of: ${values.join(', ')}`);
}
/** A key whose blank value means "the program's default"; any other value must be one of `values`. */
export function blankOr<const T extends readonly [string, ...string[]]>(values: T, def: '' | T[number]) {
  return z
    .union([z.literal(''), z.enum(values)])
    .default(def)
    .describe(`one of: ${values.join(', ')} (or blank for the default)`);
}
/** Reference keys whose YAML value may be a string, a number, a boolean or null (env-var style). */
const looseValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export function loose(def: string | number | boolean | null) {
  return looseValue.default(def).describe('a string, number, true/false or null');
}
export function optionalLoose() {
  return looseValue.optional().describe('a string, number, true/false or null');
}
export function optionalText() {
  return z.string().optional().describe('a string');
}
export function nullableFlag() {
  return z.boolean().nullable().default(null).describe('true, false or null');
}
