/**
 * OfficeQA's scoring rule: exact match after OfficeQA's own normaliser (numbers keep their sign,
 * decimal point and percent; thousands commas and money words go), token F1 as partial credit.
 */
import { extractFirstTagged } from './extract';
import { collapseWhitespace, overlapF1, pyStrip, wholeWords } from './normalize';
import type { Scorer } from './scorers';
import { expected, quote, result, syncScorer } from './syncScorer';

// Python's string.punctuation minus what a number is written with ("0123456789.-") and "%".
const dropped = new Set('!"#$&\'()*+,/:;<=>?@[\\]^_`{|}~');
const scaleWords = wholeWords(['million', 'millions', 'billion', 'billions', 'dollars', 'dollar', 'nominal']);

export function normalizeOfficeQa(text: string): string {
  const t = Array.from(pyStrip(text.toLowerCase()))
    .filter((ch) => !dropped.has(ch))
    .join('');
  return collapseWhitespace(t.replace(scaleWords, ' '));
}

function tokens(text: string): string[] {
  const n = normalizeOfficeQa(text);
  return n === '' ? [] : n.split(' ');
}

/** Hard: the normalised answer equals a normalised gold; soft: the best token F1. */
export function officeQaScorer(o: { name?: string }): Scorer {
  const scorer = syncScorer(o.name ?? 'officeqa', (prediction, item) => {
    const pred = normalizeOfficeQa(prediction);
    const em = item.answers.some((g) => normalizeOfficeQa(g) === pred);
    const f1 = item.answers.reduce((best, g) => Math.max(best, overlapF1(tokens(prediction), tokens(g))), 0);
    return em
      ? result(true, f1, `EM=1: predicted ${quote(prediction)}`)
      : result(
          false,
          f1,
          `EM=0: predicted ${quote(prediction)} (read as ${quote(pred)}) but expected ${expected(item.answers)} (F1=${f1.toFixed(2)})`,
        );
  });
  return { ...scorer, extract: extractFirstTagged };
}
