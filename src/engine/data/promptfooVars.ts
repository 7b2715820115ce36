/**
 * promptfoo's `{{ var }}` placeholders. promptfoo fills a test's vars into its prompt template and
 * into its assertion values (`value: "{{ expected }}"`); both are filled here, plain names only, and
 * the vars neither names are reported, so none is dropped unsaid.
 */
import { SkillOptError, type ErrorPlace } from '../errors';
import { isRecord } from './taskFiles';

const TEMPLATE_VAR = /\{\{\s*([^}]*?)\s*\}\}/g;

/**
 * `text` with every `{{ name }}` replaced by the var's value, each name added to `used`. `what` says
 * where the text is ("the prompt", "assert[1]") and `key` points the error at it.
 */
export function fillVars(
  text: string,
  vars: Record<string, unknown>,
  place: ErrorPlace,
  where: { what: string; key?: string },
  used: Set<string>,
): string {
  const fail = (problem: string, fix: string): never => {
    throw new SkillOptError('tasks', problem, {
      ...place,
      ...(where.key ? { key: place.key ? `${place.key}.${where.key}` : where.key } : {}),
      fix,
    });
  };
  return text.replace(TEMPLATE_VAR, (_, name: string) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      fail(
        `${where.what} uses "{{ ${name} }}", a template expression SkillOpt does not evaluate`,
        'use plain {{ var }} placeholders',
      );
    if (!(name in vars))
      fail(`${where.what} uses {{ ${name} }} but the test has no var "${name}"`, `add vars.${name}`);
    used.add(name);
    return String(vars[name]);
  });
}

/** A promptfoo assertion with the test's vars filled into its value (text, or a list of texts). */
export function fillAssertionVars(
  assertion: unknown,
  vars: Record<string, unknown>,
  place: ErrorPlace,
  key: string,
  used: Set<string>,
): unknown {
  if (!isRecord(assertion)) return assertion;
  const fill = (v: unknown): unknown =>
    typeof v === 'string' ? fillVars(v, vars, place, { what: key, key }, used) : v;
  const value = assertion.value;
  if (typeof value === 'string') return { ...assertion, value: fill(value) };
  if (Array.isArray(value)) return { ...assertion, value: value.map(fill) };
  return assertion;
}

/** One notice per var (per file: notices are a set) that neither the task text nor an assertion names. */
export function noteUnusedVars(
  vars: Record<string, unknown>,
  used: ReadonlySet<string>,
  notices: Set<string>,
  why: string,
): void {
  for (const name of Object.keys(vars))
    if (name !== 'id' && !used.has(name)) notices.add(`promptfoo var "${name}" is not used: ${why}`);
}
