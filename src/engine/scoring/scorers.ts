import { z } from 'zod';
import { SkillOptError } from '../errors';
import type { TaskItem } from '../data/tasks';
import { extractAnswer } from './extract';
import { anls, exactMatch, maxTokenF1, normalizeAnswer } from './normalize';
import { createCommandScorer, createModuleScorer } from './userScorer';

/** `hard` is the pass/fail the gate counts; `soft` is partial credit in 0..1; `reason` is shown to the analyst. */
export interface ScoreResult {
  hard: 0 | 1;
  soft: number;
  reason: string;
}

export interface Scorer {
  name: string;
  score(prediction: string, item: TaskItem, signal?: AbortSignal): Promise<ScoreResult>;
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

/** Wraps a synchronous check as a Scorer. */
function syncScorer(name: string, check: (prediction: string, item: TaskItem) => ScoreResult): Scorer {
  return {
    name,
    // No signal: a synchronous check has nothing to cancel, and a reply that arrived as the run
    // stopped must still be scored and kept, so that a resumed run does not pay for it again.
    score(prediction: string, item: TaskItem): Promise<ScoreResult> {
      try {
        return Promise.resolve(check(prediction, item));
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}

function result(pass: boolean, soft: number, reason: string): ScoreResult {
  return { hard: pass ? 1 : 0, soft: Math.min(1, Math.max(0, soft)), reason };
}

function exactScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'exact', (prediction, item) => {
    const pred = prediction.trim();
    const hit = item.answers.find((g) => g.trim() === pred);
    return hit !== undefined
      ? result(true, 1, `EXACT=1: predicted ${quote(pred)}`)
      : result(false, 0, `EXACT=0: predicted ${quote(pred)} but expected ${expected(item.answers)}`);
  });
}

/** SearchQA's scoring: hard = SQuAD exact match against any gold, soft = best token F1. */
function normalizedExactScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'normalized_exact', (prediction, item) => {
    const f1 = maxTokenF1(prediction, item.answers);
    const em = item.answers.some((g) => exactMatch(prediction, g));
    return em
      ? result(true, f1, `EM=1: predicted ${quote(prediction)}`)
      : result(
          false,
          f1,
          `EM=0: predicted ${quote(prediction)} but expected ${expected(item.answers)} (F1=${f1.toFixed(2)})`,
        );
  });
}

function f1Scorer(o: { name?: string; threshold?: number }): Scorer {
  const threshold = o.threshold ?? 1;
  return syncScorer(o.name ?? 'f1', (prediction, item) => {
    const f1 = maxTokenF1(prediction, item.answers);
    return f1 >= threshold
      ? result(true, f1, `F1=${f1.toFixed(2)}: predicted ${quote(prediction)}`)
      : result(
          false,
          f1,
          `F1=${f1.toFixed(2)} < ${threshold.toFixed(2)}: predicted ${quote(prediction)} but expected ${expected(item.answers)}`,
        );
  });
}

function containsScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'contains', (prediction, item) => {
    const pred = normalizeAnswer(prediction);
    // A gold that normalises to nothing ("the") would be "contained" in anything; it only matches an empty answer.
    const hit = item.answers.some((g) => {
      const gold = normalizeAnswer(g);
      return gold === '' ? pred === '' : pred.includes(gold);
    });
    return hit
      ? result(true, 1, `CONTAINS=1: predicted ${quote(prediction)}`)
      : result(
          false,
          0,
          `CONTAINS=0: predicted ${quote(prediction)} does not contain ${expected(item.answers)}`,
        );
  });
}

function regexScorer(o: { name?: string; pattern?: string; flags?: string; full_match?: boolean }): Scorer {
  // Global and sticky flags make RegExp.test stateful across calls; matching is per answer, so drop them.
  const flags = (o.flags ?? '').replace(/[gy]/g, '');
  const compile = (pattern: string): RegExp => new RegExp(o.full_match ? `^(?:${pattern})$` : pattern, flags);
  let fixed: RegExp | undefined;
  if (o.pattern !== undefined) {
    try {
      fixed = compile(o.pattern);
    } catch (err) {
      throw new SkillOptError('config', `Scorer regex is invalid: ${(err as Error).message}`, {
        key: o.flags !== undefined && !isValidFlags(flags) ? 'scorer.flags' : 'scorer.pattern',
        fix: 'write a JavaScript regular expression (and flags from "imsu")',
      });
    }
  } else if (!isValidFlags(flags)) {
    throw new SkillOptError('config', `Scorer regex flags "${o.flags}" are invalid`, {
      key: 'scorer.flags',
      fix: 'use JavaScript flags such as "i", "s", "m" or "u"',
    });
  }
  const cache = new Map<string, RegExp>();
  return syncScorer(o.name ?? 'regex', (prediction, item) => {
    let patterns: RegExp[];
    if (fixed) patterns = [fixed];
    else {
      patterns = item.answers.map((p) => {
        let re = cache.get(p);
        if (!re) {
          try {
            re = compile(p);
          } catch (err) {
            throw new SkillOptError(
              'tasks',
              `Task "${item.id}" has an invalid answer pattern: ${(err as Error).message}`,
              {
                fix: 'write the expected answers as JavaScript regular expressions for the regex scorer',
              },
            );
          }
          cache.set(p, re);
        }
        return re;
      });
    }
    const pred = prediction.trim();
    const hit = patterns.some((re) => re.test(pred));
    const shown = patterns.map((re) => re.toString()).join(', ');
    return hit
      ? result(true, 1, `REGEX=1: predicted ${quote(pred)} matches ${shown}`)
      : result(false, 0, `REGEX=0: predicted ${quote(pred)} matches none of ${shown}`);
  });
}

function isValidFlags(flags: string): boolean {
  try {
    new RegExp('', flags);
    return true;
  } catch {
    return false;
  }
}

interface ParsedNumber {
  value: number;
  percent: boolean;
}

// Optional sign (not glued to a preceding word, so "2019-2020" is two positives), optional currency,
// thousands separators, decimals, exponent, optional percent sign.
const numberRe =
  /(?:(?<![\w.])([-+\u2212]))?\s*[$€£¥₹]?\s*((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE]([-+]?\d+))?(\s*%)?/gu;

/** The last number written in the text (answers come last), or undefined when there is none. */
export function parseNumber(text: string): ParsedNumber | undefined {
  let last: ParsedNumber | undefined;
  for (const m of text.matchAll(numberRe)) {
    const sign = m[1] === '-' || m[1] === '\u2212' ? -1 : 1;
    const digits = m[2].replace(/,/g, '');
    const exp = m[3] !== undefined ? `e${m[3]}` : '';
    const value = sign * Number(`${digits}${exp}`);
    if (Number.isFinite(value)) last = { value, percent: m[4] !== undefined };
  }
  return last;
}

function numericScorer(o: { name?: string; abs_tol?: number; rel_tol?: number }): Scorer {
  const absTol = o.abs_tol ?? 0;
  const relTol = o.rel_tol ?? 1e-9;
  // "50%" may be written as 0.5 on the other side, so a percentage also stands for its fraction.
  const readings = (n: ParsedNumber): number[] => (n.percent ? [n.value, n.value / 100] : [n.value]);
  const close = (a: number, b: number): boolean =>
    a === b || Math.abs(a - b) <= Math.max(relTol * Math.max(Math.abs(a), Math.abs(b)), absTol);
  return syncScorer(o.name ?? 'numeric', (prediction, item) => {
    const golds = item.answers.map((g) => {
      const n = parseNumber(g);
      if (!n) {
        throw new SkillOptError('tasks', `Task "${item.id}" expects "${g}", which is not a number`, {
          fix: 'give numeric expected answers for the numeric scorer, or pick another scorer',
        });
      }
      return n;
    });
    const pred = parseNumber(prediction);
    if (!pred)
      return result(
        false,
        0,
        `NUM=0: no number in predicted ${quote(prediction)}, expected ${expected(item.answers)}`,
      );
    const hit = golds.some((g) => readings(pred).some((p) => readings(g).some((v) => close(p, v))));
    return hit
      ? result(true, 1, `NUM=1: predicted ${pred.value}${pred.percent ? '%' : ''}`)
      : result(
          false,
          0,
          `NUM=0: predicted ${pred.value}${pred.percent ? '%' : ''} but expected ${expected(item.answers)} (abs_tol ${absTol}, rel_tol ${relTol})`,
        );
  });
}

const labelRe = /^[([]?([A-Za-z])[)\]]?(?:[.:)]|$)/;

/**
 * Multiple choice as LiveMathematicianBench scores it: the label inside `<answer>` (or the answer itself)
 * when it is a label, else the choice whose text the answer repeats, else the first token when it is a
 * label. The gold is a label, or a choice text mapped to its label.
 */
function choiceScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'choice', (prediction, item) => {
    const labels = labelsFor(item);
    const gold = new Set<string>();
    for (const g of item.answers) {
      const l = toLabel(g, item, labels);
      if (l) gold.add(l);
    }
    if (gold.size === 0) {
      throw new SkillOptError('tasks', `Task "${item.id}" has no expected choice label`, {
        fix: `give the expected answer as a label (${labels.slice(0, 4).join(', ')}, ...) or as the exact text of one of the choices`,
      });
    }
    const predicted = predictedLabel(prediction, item, labels);
    const want = [...gold].join(' or ');
    if (!predicted)
      return result(
        false,
        0,
        `CHOICE=0: no choice label in predicted ${quote(prediction)}, expected ${want}`,
      );
    return gold.has(predicted)
      ? result(true, 1, `CHOICE=1: predicted ${predicted}`)
      : result(false, 0, `CHOICE=0: predicted ${predicted} but expected ${want}`);
  });
}

function labelsFor(item: TaskItem): string[] {
  const n = Math.min(26, Math.max(7, item.choices?.length ?? 0));
  const letters = Array.from({ length: n }, (_, i) => String.fromCharCode(65 + i));
  return item.choices?.length ? letters.slice(0, item.choices.length) : letters;
}

function toLabel(text: string, item: TaskItem, labels: readonly string[]): string | undefined {
  const t = text.trim();
  const m = /^[([]?([A-Za-z])[)\]]?\.?$/.exec(t);
  if (m && labels.includes(m[1].toUpperCase())) return m[1].toUpperCase();
  return choiceTextLabel(t, item, labels);
}

function choiceTextLabel(text: string, item: TaskItem, labels: readonly string[]): string | undefined {
  if (!item.choices) return undefined;
  const want = normalizeAnswer(text);
  if (want === '') return undefined;
  const idx = item.choices.findIndex((c) => normalizeAnswer(c) === want);
  return idx >= 0 ? labels[idx] : undefined;
}

function predictedLabel(prediction: string, item: TaskItem, labels: readonly string[]): string | undefined {
  const tagged = extractAnswer(prediction);
  const text = (tagged.via === 'tag' ? tagged.answer : prediction).trim();
  const m = labelRe.exec(text);
  if (m && labels.includes(m[1].toUpperCase())) return m[1].toUpperCase();
  const byText = choiceTextLabel(text, item, labels);
  if (byText) return byText;
  const first = (text.split(/\s+/)[0] ?? '').replace(/^[^A-Za-z]+|[^A-Za-z]+$/g, '').toUpperCase();
  return first.length === 1 && labels.includes(first) ? first : undefined;
}

function anlsScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'anls', (prediction, item) => {
    const score = anls(prediction, item.answers);
    return score >= 0.999
      ? result(true, score, `ANLS=${score.toFixed(3)}: predicted ${quote(prediction)}`)
      : result(
          false,
          score,
          `ANLS=${score.toFixed(3)}: predicted ${quote(prediction)} but expected ${expected(item.answers)}`,
        );
  });
}

function jsonScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'json', (prediction, item) => {
    const golds = item.answers.map((g) => {
      try {
        return JSON.parse(g) as unknown;
      } catch {
        throw new SkillOptError('tasks', `Task "${item.id}" expects ${quote(g)}, which is not valid JSON`, {
          fix: 'write the expected answer as JSON (an object, array, number, or a quoted string)',
        });
      }
    });
    const text = prediction
      .trim()
      .replace(/^```[a-zA-Z]*\s*\n?/, '')
      .replace(/\n?```\s*$/, '')
      .trim();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return result(
        false,
        0,
        `JSON=0: predicted ${quote(prediction)} is not valid JSON (${(err as Error).message})`,
      );
    }
    return golds.some((g) => deepEqual(value, g))
      ? result(true, 1, 'JSON=1: predicted value equals the expected JSON')
      : result(
          false,
          0,
          `JSON=0: predicted ${quote(JSON.stringify(value))} but expected ${expected(item.answers)}`,
        );
  });
}

/** Structural equality of parsed JSON: object key order is irrelevant, array order matters. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra);
  if (ka.length !== Object.keys(rb).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && deepEqual(ra[k], rb[k]));
}

const reasonCap = 200;

function quote(text: string): string {
  const t = text.length > reasonCap ? `${text.slice(0, reasonCap)}…` : text;
  return JSON.stringify(t);
}

function expected(golds: readonly string[]): string {
  if (golds.length === 0) return 'no answer (the task has none)';
  if (golds.length === 1) return quote(golds[0]);
  const shown = golds.slice(0, 5).map(quote).join(', ');
  return `one of ${shown}${golds.length > 5 ? `, … (${golds.length} in all)` : ''}`;
}
