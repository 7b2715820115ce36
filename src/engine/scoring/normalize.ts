/** Text normalisation and overlap metrics shared by the built-in scorers (SQuAD EM/F1, DocVQA ANLS). */

// Python's string.punctuation: the SQuAD script removes exactly these ASCII characters.
const punctuation = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
/** Python's `\b(w1|w2)\b`: Python's is Unicode-aware, JS `\b` is ASCII-only, so spell the boundary out. */
export function wholeWords(words: readonly string[]): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${words.join('|')})(?![\\p{L}\\p{N}_])`, 'gu');
}
const articles = wholeWords(['a', 'an', 'the']);

// What Python's str.split() and str.strip() treat as whitespace (str.isspace): JS `\s` lacks
// \x1c-\x1f and \x85 and adds \ufeff, and the reference splits and strips the Python way.
const pySpace =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const pySpaceRun = new RegExp(`[${pySpace}]+`, 'u');
const pyEdges = new RegExp(`^[${pySpace}]+|[${pySpace}]+$`, 'gu');

/** Python's `text.split()`: runs of whitespace separate, no empty pieces. */
export function pySplit(text: string): string[] {
  return text.split(pySpaceRun).filter((t) => t !== '');
}

/** Python's `text.strip()`. */
export function pyStrip(text: string): string {
  return text.replace(pyEdges, '');
}

/** SQuAD normalisation: lower-case, drop ASCII punctuation, drop a/an/the, collapse whitespace. */
export function normalizeAnswer(text: string): string {
  let t = text.toLowerCase();
  t = Array.from(t)
    .filter((ch) => !punctuation.has(ch))
    .join('');
  t = t.replace(articles, ' ');
  return collapseWhitespace(t);
}

/** Python's `" ".join(text.split())`. */
export function collapseWhitespace(text: string): string {
  return pySplit(text).join(' ');
}

/** SQuAD exact match after normalisation. */
export function exactMatch(prediction: string, gold: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(gold);
}

/**
 * SQuAD token F1 over normalised tokens (bag-of-words overlap). Two empty answers score 1 and one
 * empty answer scores 0, so F1 agrees with exact match at the edges.
 */
export function tokenF1(prediction: string, gold: string): number {
  return overlapF1(tokens(prediction), tokens(gold));
}

/** Bag-of-words F1 of two token lists; both empty is 1, one empty is 0. */
export function overlapF1(pred: readonly string[], ref: readonly string[]): number {
  if (pred.length === 0 || ref.length === 0) return pred.length === ref.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of ref) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of pred) {
    const left = counts.get(t) ?? 0;
    if (left > 0) {
      same++;
      counts.set(t, left - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / pred.length;
  const recall = same / ref.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Best F1 over several acceptable answers (0 when there are none). */
export function maxTokenF1(prediction: string, golds: readonly string[]): number {
  return golds.reduce((best, g) => Math.max(best, tokenF1(prediction, g)), 0);
}

function tokens(text: string): string[] {
  const n = normalizeAnswer(text);
  return n === '' ? [] : n.split(' ');
}

/** Edit distance over Unicode code points (insert, delete, substitute cost 1). */
export function levenshtein(a: string, b: string): number {
  const s = Array.from(a);
  const t = Array.from(b);
  if (s.length === 0) return t.length;
  if (t.length === 0) return s.length;
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  let curr = new Array<number>(t.length + 1).fill(0);
  for (let i = 1; i <= s.length; i++) {
    curr[0] = i;
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      curr[j] = Math.min(prev[j] + 1, curr[j - 1] + 1, prev[j - 1] + cost);
    }
    [prev, curr] = [curr, prev];
  }
  return prev[t.length];
}

/**
 * Average Normalised Levenshtein Similarity (DocVQA): both sides lower-cased, trimmed and
 * whitespace-collapsed; similarity is 1 − distance / longer length, or 0 once the normalised distance
 * reaches `threshold` (0.5). The best gold counts.
 */
export function anls(prediction: string, golds: readonly string[], threshold = 0.5): number {
  const pred = collapseWhitespace(prediction.toLowerCase());
  let best = 0;
  for (const gold of golds) {
    const ref = collapseWhitespace(gold.toLowerCase());
    const length = Math.max(Array.from(ref).length, Array.from(pred).length);
    const distance = length === 0 ? 0 : levenshtein(ref, pred) / length;
    const score = distance < threshold ? 1 - distance : 0;
    if (score > best) best = score;
  }
  return best;
}
