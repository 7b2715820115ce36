import { fnv1a } from './latency';

/**
 * Keeps the benchmark loop busy. The scripted optimizer (the offline sim's logic) converges within
 * two steps on the bench tasks; after that it proposes the same edits again, every candidate hashes
 * the same, and the gate's selection cache answers without a single call. A real optimizer never
 * repeats itself like that. So each analyst reply gets one extra, harmless note whose wording
 * depends on the request: every step then has a distinct candidate, a ranking (more items than the
 * edit budget) and a real gate evaluation. The scripted target ignores the notes, so they never
 * change a score.
 */
export function withBusyNote(replyText: string, key: string, userMessage: string): string {
  const m = /```json\n([\s\S]*?)\n```/.exec(replyText);
  if (!m) return replyText;
  let value: unknown;
  try {
    value = JSON.parse(m[1]);
  } catch {
    return replyText;
  }
  const patch = (value as { patch?: { edits?: unknown } } | null)?.patch;
  if (!patch || !Array.isArray(patch.edits)) return replyText;
  const budget = Number(/Propose at most (\d+)/.exec(userMessage)?.[1] ?? 0);
  if (patch.edits.length >= budget) return replyText;
  const tag = fnv1a(key).toString(16).padStart(8, '0');
  patch.edits.push({
    op: 'append',
    content: `- Form note ${tag}: answers are pasted into forms as written.`,
  });
  const block = '```json\n' + JSON.stringify(value, null, 2) + '\n```';
  return replyText.slice(0, m.index) + block + replyText.slice(m.index + m[0].length);
}
