/**
 * Built-in scorers that read a value out of the answer and compare values, not text: numeric (a
 * number), choice (a choice label), json (a JSON value).
 */
import type { TaskItem } from '../data/tasks';
import { SkillOptError } from '../errors';
import { pySplit, pyStrip } from './normalize';
import type { Scorer } from './scorers';
import { expected, quote, result, syncScorer } from './syncScorer';

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

export function numericScorer(o: { name?: string; abs_tol?: number; rel_tol?: number }): Scorer {
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

/** The reference's label normalisation: stripped, upper-cased, trailing ".", ")" and ":" dropped. */
export function normalizeLabel(text: string): string {
  return pyStrip(text)
    .toUpperCase()
    .replace(/[.):]+$/, '');
}

/**
 * Multiple choice exactly as LiveMathematicianBench scores it: the answer read as a label when it is
 * one of the choices' labels, else the choice whose text it repeats (case-insensitive), else its first
 * word read as a label; "(B)" or "Option B" are not labels there, and are not here. The gold is a
 * label, or a choice text mapped to its label.
 */
export function choiceScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'choice', (prediction, item) => {
    const labels = choiceLabels(item);
    const gold = new Set<string>();
    for (const g of item.answers) {
      const l = goldLabel(g, item, labels);
      if (l) gold.add(l);
    }
    if (gold.size === 0) {
      throw new SkillOptError('tasks', `Task "${item.id}" has no expected choice label`, {
        fix: `give the expected answer as a label (${labels.slice(0, 4).join(', ')}, ...) or as the exact text of one of the choices`,
      });
    }
    const predicted = predictedLabel(prediction, item, labels);
    const want = [...gold].join(' or ');
    if (gold.has(predicted)) return result(true, 1, `CHOICE=1: predicted ${predicted}`);
    return predicted !== '' && (labels.length === 0 || labels.includes(predicted))
      ? result(false, 0, `CHOICE=0: predicted ${predicted} but expected ${want}`)
      : result(false, 0, `CHOICE=0: no choice label in predicted ${quote(prediction)}, expected ${want}`);
  });
}

/** The labels of the item's choices as the data names them, else A, B, C… by position. */
export function choiceLabels(item: TaskItem): string[] {
  if (item.choiceLabels?.length) return item.choiceLabels.map(normalizeLabel);
  return (item.choices ?? []).map((_, i) => String.fromCharCode(65 + i));
}

function goldLabel(text: string, item: TaskItem, labels: readonly string[]): string | undefined {
  const label = normalizeLabel(text);
  if (labels.includes(label)) return label;
  const byText = choiceTextLabel(text, item, labels);
  if (byText) return byText;
  // Without choices the reference compares labels as written.
  return labels.length === 0 && label !== '' ? label : undefined;
}

function choiceTextLabel(text: string, item: TaskItem, labels: readonly string[]): string | undefined {
  const want = pyStrip(text).toLowerCase();
  if (want === '' || !item.choices) return undefined;
  const idx = item.choices.findIndex((c) => {
    const t = pyStrip(c);
    return t !== '' && t.toLowerCase() === want;
  });
  return idx >= 0 ? labels[idx] : undefined;
}

/** The label the answer names, or the normalised answer itself (which then matches no gold). */
function predictedLabel(prediction: string, item: TaskItem, labels: readonly string[]): string {
  const label = normalizeLabel(prediction);
  if (labels.includes(label)) return label;
  const byText = choiceTextLabel(prediction, item, labels);
  if (byText) return byText;
  const first = normalizeLabel(pySplit(prediction)[0] ?? '');
  return labels.includes(first) ? first : label;
}

export function jsonScorer(o: { name?: string }): Scorer {
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
