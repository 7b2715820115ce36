/** A parsed YAML document's value, with an alias bomb refused rather than expanded or thrown as a trace. */
import type { Document } from 'yaml';

/** What to say of an alias bomb, and what to do instead (shared by every YAML file SkillOpt reads). */
export const ALIAS_BOMB = {
  problem:
    'the YAML expands its aliases (*name) into more copies than any real file needs (an alias bomb, "billion laughs"), so it is not read',
  fix: 'write the repeated values out instead of through &anchors and *aliases (or remove the alias chain)',
} as const;

/**
 * `doc.toJS()`, or `undefined` when the document's aliases expand past the yaml library's limit
 * (`maxAliasCount`, which stops a few kilobytes from becoming gigabytes); callers refuse the file.
 */
export function yamlValue(doc: Document.Parsed): { value: unknown } | undefined {
  try {
    return { value: doc.toJS() };
  } catch (err) {
    // The library's words for it: "Excessive alias count indicates a resource exhaustion attack".
    if (err instanceof ReferenceError && /alias/i.test(err.message)) return undefined;
    throw err;
  }
}
