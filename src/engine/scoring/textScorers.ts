/**
 * Built-in scorers that compare the answer's text with the golds: exact, normalized_exact, f1,
 * contains, regex, anls.
 */
import { SkillOptError } from '../errors';
import { extractLastOpenClose } from './extract';
import { anls, exactMatch, maxTokenF1, normalizeAnswer } from './normalize';
import type { Scorer } from './scorers';
import { expected, quote, result, syncScorer } from './syncScorer';

export function exactScorer(o: { name?: string }): Scorer {
  return syncScorer(o.name ?? 'exact', (prediction, item) => {
    const pred = prediction.trim();
    const hit = item.answers.find((g) => g.trim() === pred);
    return hit !== undefined
      ? result(true, 1, `EXACT=1: predicted ${quote(pred)}`)
      : result(false, 0, `EXACT=0: predicted ${quote(pred)} but expected ${expected(item.answers)}`);
  });
}

/** SearchQA's scoring: hard = SQuAD exact match against any gold, soft = best token F1. */
export function normalizedExactScorer(o: { name?: string }): Scorer {
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

export function f1Scorer(o: { name?: string; threshold?: number }): Scorer {
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

export function containsScorer(o: { name?: string }): Scorer {
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

export function regexScorer(o: {
  name?: string;
  pattern?: string;
  flags?: string;
  full_match?: boolean;
}): Scorer {
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

/** DocVQA's ANLS, reading the answer out of a reply as DocVQA does (extractLastOpenClose). */
export function anlsScorer(o: { name?: string }): Scorer {
  const scorer = syncScorer(o.name ?? 'anls', (prediction, item) => {
    const score = anls(prediction, item.answers);
    return score >= 0.999
      ? result(true, score, `ANLS=${score.toFixed(3)}: predicted ${quote(prediction)}`)
      : result(
          false,
          score,
          `ANLS=${score.toFixed(3)}: predicted ${quote(prediction)} but expected ${expected(item.answers)}`,
        );
  });
  return { ...scorer, extract: extractLastOpenClose };
}
