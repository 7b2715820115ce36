import type { Item } from './aggregate';

/**
 * Two merged edits that pull the same rule in opposite directions. Found by cheap, explainable
 * rules rather than a model call; flagged in merged_patch.json so ranking, the review UI and the
 * person see both sides.
 */
export interface Conflict {
  a: string;
  b: string;
  kind: 'delete_vs_change' | 'competing_replacements' | 'opposite_polarity';
  detail: string;
}

const negative = /\b(never|don't|do not|avoid|no longer|must not|should not|stop|omit|without)\b/i;
const stop = new Set([
  'the',
  'a',
  'an',
  'and',
  'or',
  'to',
  'of',
  'in',
  'for',
  'with',
  'on',
  'is',
  'are',
  'be',
  'it',
  'as',
  'by',
  'at',
]);
const polarity = new Set([
  'never',
  'always',
  'dont',
  'do',
  'not',
  'avoid',
  'must',
  'should',
  'no',
  'longer',
  'stop',
  'omit',
  'without',
  'ensure',
  'include',
  'prefer',
  'use',
]);

function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text
    .toLowerCase()
    .replace(/[^a-z0-9\s]/g, ' ')
    .split(/\s+/)) {
    if (w.length > 1 && !stop.has(w) && !polarity.has(w)) out.add(w);
  }
  return out;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let inter = 0;
  for (const w of a) if (b.has(w)) inter++;
  return inter / (a.size + b.size - inter);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function overlaps(x: string, y: string): boolean {
  return !!x && !!y && (x.includes(y) || y.includes(x));
}

/** Pairwise check of a merged patch's edits (patch mode); items need `id`. */
export function detectConflicts(items: readonly Item[]): Conflict[] {
  const out: Conflict[] = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i];
      const b = items[j];
      const ida = str(a.id);
      const idb = str(b.id);
      const ta = str(a.target);
      const tb = str(b.target);
      const ca = str(a.content);
      const cb = str(b.content);
      if (overlaps(ta, tb) && (a.op === 'delete') !== (b.op === 'delete')) {
        out.push({
          a: ida,
          b: idb,
          kind: 'delete_vs_change',
          detail: `one deletes "${ta.slice(0, 60)}", the other changes it`,
        });
        continue;
      }
      if (a.op === 'replace' && b.op === 'replace' && overlaps(ta, tb) && ca.trim() !== cb.trim()) {
        out.push({
          a: ida,
          b: idb,
          kind: 'competing_replacements',
          detail: `both rewrite "${ta.slice(0, 60)}" differently`,
        });
        continue;
      }
      const deletesRule = (x: Item, otherContent: string): boolean =>
        x.op === 'delete' && jaccard(words(str(x.target)), words(otherContent)) >= 0.5;
      if (deletesRule(a, cb) || deletesRule(b, ca)) {
        out.push({
          a: ida,
          b: idb,
          kind: 'delete_vs_change',
          detail: 'one removes a rule the other adds or strengthens',
        });
        continue;
      }
      if (ca && cb && jaccard(words(ca), words(cb)) >= 0.5) {
        if (negative.test(ca) !== negative.test(cb))
          out.push({
            a: ida,
            b: idb,
            kind: 'opposite_polarity',
            detail: 'same subject, opposite instructions',
          });
      }
    }
  }
  return out;
}

/** `conflicts_with` limited to edits the candidate kept: ranking may have dropped the other side. */
export function conflictsWithin(
  ids: unknown,
  kept: ReadonlyArray<{ id?: unknown }>,
): { conflicts_with?: string[] } {
  if (!Array.isArray(ids)) return {};
  const present = new Set(kept.map((k) => String(k.id)));
  const within = ids.map(String).filter((id) => present.has(id));
  return within.length ? { conflicts_with: within } : {};
}
