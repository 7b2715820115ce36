import { SkillOptError } from '../../errors';
import { fieldSchema, isSectionName, SECTION_FIELDS, SECTION_NAMES } from './index';
import type { FieldSection } from './index';

/**
 * Warnings, problems and suggestions: where a config value came from, how a warning reads, one
 * error for all problems, and "did you mean" for an unknown key.
 */

/** Where a config value came from: a file and line, or a command-line source. */
export interface ConfigOrigin {
  /** File as the user wrote it, or `--cfg-options` / `--<flag>` for command-line values. */
  file: string;
  /** 1-based line, for values read from a file. */
  line?: number;
  /** Absolute directory of the file, used to resolve relative paths it sets. */
  dir?: string;
}

export interface ConfigWarning {
  message: string;
  file?: string;
  line?: number;
  key?: string;
}

export interface ConfigProblem {
  key: string;
  problem: string;
  fix: string;
  file?: string;
  line?: number;
}

export function formatConfigWarning(w: ConfigWarning): string {
  let where = w.file ?? '';
  if (w.file && w.line !== undefined) where += `:${w.line}`;
  if (w.key) where = where ? `${where} (${w.key})` : w.key;
  return where ? `${where}: ${w.message}` : w.message;
}

/** One error for all problems: the first is spelled out, the rest counted. */
export function problemsToError(problems: readonly ConfigProblem[]): SkillOptError {
  const [first] = problems;
  if (!first) return new SkillOptError('internal', 'problemsToError called without problems');
  const more = problems.length - 1;
  const suffix = more > 0 ? ` (and ${more} more problem${more === 1 ? '' : 's'})` : '';
  return new SkillOptError('config', first.problem + suffix, {
    file: first.file,
    line: first.line,
    key: first.key,
    fix: first.fix,
  });
}

/** Edits between two words, a swap of neighbours counting as one (`trian` is one typo from `train`). */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** Closest candidate within a typo-sized distance, or undefined. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 4));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** Sections whose declared fields include `key`. */
function sectionsWithField(key: string): FieldSection[] {
  return (Object.keys(SECTION_FIELDS) as FieldSection[]).filter((s) => fieldSchema(s, key) !== undefined);
}

/**
 * The fields that `key` is the tail of: the pair set per role (`base_url` → optimizer_base_url and
 * target_base_url), or its count (`epochs` → num_epochs). Those keys are what a
 * user writes from other tools' docs, and ignoring one sends a run to the wrong endpoint or length.
 */
function longerName(key: string, fields: readonly string[]): string[] | undefined {
  const perRole = [`optimizer_${key}`, `target_${key}`];
  if (perRole.every((f) => fields.includes(f))) return perRole;
  return fields.includes(`num_${key}`) ? [`num_${key}`] : undefined;
}

/** "did you mean" text for an unknown key in `section` (or at top level when section is undefined). */
export function suggestKey(
  key: string,
  section: string | undefined,
  flatNames?: ReadonlyMap<string, string>,
): string {
  const flatTwin = flatNames?.get(key);
  if (flatTwin && flatTwin !== `${section}.${key}`) return `; did you mean ${flatTwin}?`;
  const elsewhere = sectionsWithField(key).filter((s) => s !== section);
  if (elsewhere.length > 0) return `; did you mean ${elsewhere[0]}.${key}?`;
  if (section === undefined) {
    const near = closest(key, SECTION_NAMES);
    return near ? `; did you mean ${near}?` : '';
  }
  if (!isSectionName(section) || section === 'prices') return '';
  const fields = Object.keys(SECTION_FIELDS[section]);
  const near = closest(key, fields);
  if (near) return `; did you mean ${section}.${near}?`;
  const longer = longerName(key, fields);
  if (longer) return `; did you mean ${longer.map((f) => `${section}.${f}`).join(' and ')}?`;
  // A flat name (a legacy flag, a bare --cfg-options key) that is not mapped lands in env.
  const flatNear = section === 'env' && flatNames ? closest(key, flatNames.keys()) : undefined;
  return flatNear ? `; did you mean ${flatNames?.get(flatNear)}?` : '';
}
