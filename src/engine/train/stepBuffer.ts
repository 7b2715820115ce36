import type { RawPatch } from './reflect';
import { isFailure } from './rollout';
import type { FailurePattern, RolloutResult, StepBufferEntry } from '../../protocol/records';
import { isRejected, type StepAction } from '../../protocol/vocabulary';

/**
 * Failures grouped by the prefix of their fail reason. The reference pairs these groups with
 * analyst descriptions by position, which pairs unrelated things; we keep the analysts' findings
 * as their own list instead.
 */
export function failurePatterns(results: readonly RolloutResult[]): FailurePattern[] {
  const groups = new Map<string, string[]>();
  for (const r of results) {
    if (!isFailure(r)) continue;
    const reason = (r.fail_reason ?? 'unknown').trim();
    const colon = reason.indexOf(':');
    const key = (colon >= 0 ? reason.slice(0, colon) : reason).trim() || 'unknown';
    const ids = groups.get(key) ?? [];
    ids.push(r.id);
    groups.set(key, ids);
  }
  return [...groups.entries()]
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
    .map(([pattern, ids]) => ({ pattern, count: ids.length, task_ids: ids }));
}

export function analystFindings(raw: readonly RawPatch[]): string[] {
  const out: string[] = [];
  for (const p of raw) {
    for (const f of p.failure_summary ?? []) {
      const line = [f.failure_type, f.description].filter(Boolean).join(': ');
      if (line && !out.includes(line)) out.push(line);
    }
  }
  return out;
}

export function buildBufferEntry(args: {
  step: number;
  action: StepAction;
  results: readonly RolloutResult[];
  raw: readonly RawPatch[];
  scoreBefore?: number;
  scoreAfter?: number;
  rejected?: Array<Record<string, unknown>>;
}): StepBufferEntry & { analyst_findings?: string[] } {
  const patterns = failurePatterns(args.results);
  const entry: StepBufferEntry & { analyst_findings?: string[] } = {
    step: args.step,
    action: args.action,
    n_total: args.results.length,
    n_fail: args.results.filter(isFailure).length,
    failure_patterns: patterns,
  };
  const findings = analystFindings(args.raw);
  if (findings.length) entry.analyst_findings = findings;
  if (isRejected(args.action)) {
    if (args.scoreBefore !== undefined) entry.score_before = args.scoreBefore;
    if (args.scoreAfter !== undefined) entry.score_after = args.scoreAfter;
    entry.rejected_edits = args.rejected ?? [];
  } else if (args.rejected?.length) {
    // Accepted step, but the person turned some edits down before the gate.
    entry.rejected_edits = args.rejected;
  }
  return entry;
}

/** Compact summaries of rejected items, per update mode (§4.4). */
export function compactRejected(
  items: ReadonlyArray<Record<string, unknown>>,
): Array<Record<string, unknown>> {
  return items.map((it) => {
    if ('op' in it) return { op: it.op, content: it.content ?? '', target: it.target ?? '' };
    if ('new_skill' in it)
      return {
        title: it.title ?? '',
        change_summary: it.change_summary ?? [],
        source_type: it.source_type ?? '',
      };
    return { type: it.type ?? '', title: it.title ?? '', instruction: it.instruction ?? '' };
  });
}

export function renderStepBuffer(
  entries: ReadonlyArray<StepBufferEntry & { analyst_findings?: string[] }>,
): string {
  if (entries.length === 0) return '';
  const lines = [
    'Earlier steps of this epoch. Do not propose again what was rejected; prefer patterns that are still failing.',
  ];
  for (const e of entries) {
    lines.push('', `### Step ${e.step}: ${e.action.toUpperCase()} (${e.n_fail}/${e.n_total} failed)`);
    for (const p of e.failure_patterns.slice(0, 8)) {
      const ids = p.task_ids.slice(0, 6).join(', ') + (p.task_ids.length > 6 ? ', …' : '');
      lines.push(`- ${p.pattern}: ${p.count} (${ids})`);
    }
    for (const f of (e.analyst_findings ?? []).slice(0, 5)) lines.push(`- analyst: ${f}`);
    if (e.rejected_edits) {
      lines.push(
        isRejected(e.action)
          ? `Rejected: selection score would have gone ${fmt(e.score_before)} → ${fmt(e.score_after)}. Rejected changes:`
          : 'Changes the person turned down before the gate:',
      );
      e.rejected_edits.forEach((r, i) => {
        const text =
          'op' in r
            ? `[${String(r.op)}] target=${JSON.stringify(r.target ?? '')} → ${JSON.stringify(r.content ?? '')}`
            : `[${typeof r.type === 'string' ? r.type : 'rewrite'}] ${JSON.stringify(r.title ?? '')} → ${JSON.stringify(r.instruction ?? r.change_summary ?? '')}`;
        const who = r.human
          ? ` (turned down by the person${typeof r.reason === 'string' ? `: ${r.reason}` : ''})`
          : '';
        lines.push(`  ${i + 1}. ${text}${who}`);
      });
    }
  }
  return lines.join('\n');
}

function fmt(n: number | undefined): string {
  return n === undefined ? '?' : n.toFixed(4);
}
