/** The neutral workload's tables (issue 15): wall against the wave bound, leads and tails per stage. */
import { fmt, fmtSpread, table } from '../stats';
import type { NeutralResult } from './run';

const s2 = (ms: number): string => fmt(ms / 1000, 2);

export function neutralSection(results: readonly NeutralResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    const ok = r.reps.filter((x) => x.exitCode === 0).length;
    out.push(
      `${r.variant}: ${ok}/${r.reps.length} runs finished, ${r.latencyMs} ms per call, bound ${s2(r.boundMs)} s (15 waves); load ${fmtSpread(r.load, 2)}`,
      table(
        ['measure', 'min / median / max'],
        [
          ['whole run, s (launch → exit)', fmtSpread({ ...r.wallMs, ...scale(r.wallMs) }, 2)],
          ['whole run ÷ 15-wave bound', fmtSpread(r.ratio, 3)],
          ['step wall, s', fmtSpread({ ...r.stepWallMs, ...scale(r.stepWallMs) }, 2)],
          ['step ÷ 6 waves', fmtSpread(r.stepRatio, 3)],
          ['step ÷ the waves it sent', fmtSpread(r.stepOwnRatio, 3)],
          ['first request after launch, ms', fmtSpread(r.firstRequestMs)],
        ],
      ),
      '',
      table(
        ['stage', 'windows', 'lead ms (sum)', 'tail ms (sum)'],
        r.edges.map((e) => [e.stage, String(e.windows), fmtSpread(e.leadMs), fmtSpread(e.tailMs)]),
      ),
    );
    const extra = r.reps.map((x) => x.summary).filter((x): x is Record<string, unknown> => !!x);
    if (extra.length) out.push(`run summary (speed): ${JSON.stringify(extra[0])}`);
    out.push('');
  }
  return out;
}

function scale(s: { min: number; median: number; max: number }): {
  min: number;
  median: number;
  max: number;
} {
  return { min: s.min / 1000, median: s.median / 1000, max: s.max / 1000 };
}
