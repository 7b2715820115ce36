/** The bench result file's shape, the verdict against the targets, and the terminal tables. */
import { batchSection, type BatchBenchResult } from './batchBench';
import { cacheSection, type CacheResult } from './cacheBench';
import type { FootprintResult } from './footprint';
import type { MachineInfo } from './machine';
import { neutralSection } from './neutral/report';
import type { NeutralResult } from './neutral/run';
import { ENGINE_OWN, type OverheadResult } from './overhead';
import { CPU_CATEGORIES } from './profile';
import type { SpeedResult } from './speed';
import { spendSection, type SpendResult } from './spendBench';
import { fmt, fmtSpread, table } from './stats';
import type { TokensResult } from './tokens';

export const TARGETS = { ratio: 1.1, overheadMsPerStep: 50 } as const;

export interface Verdict {
  ratio?: { median: number; target: number; met: boolean };
  overhead?: { median: number; target: number; met: boolean; measure: string };
  /** Where the time goes when a target is missed, in plain sentences. */
  notes: string[];
}

export interface BenchResult {
  schema: 1;
  startedAt: string;
  durationS: number;
  command: string;
  quick: boolean;
  machine: MachineInfo;
  server: { latencyMs: number; jitterMs: number; concurrency: number; reps: number };
  /** Issue 15's neutral workload, one result per variant (default, speculate, early stop). */
  neutral?: NeutralResult[];
  speed?: SpeedResult;
  /** One run with jitter (full runs only): how far from the bound jitter alone puts a run. */
  speedWithJitter?: SpeedResult;
  overhead?: OverheadResult;
  tokens?: TokensResult;
  cache?: CacheResult;
  /** Eval-only dollars one by one and through the batch API (issue 14). */
  batch?: BatchBenchResult;
  /** Dollars per run at list prices, prompt caching off and on (issue 14). */
  spend?: SpendResult;
  footprint?: FootprintResult;
  verdict: Verdict;
}

const s1 = (ms: number): string => fmt(ms / 1000, 2);

/** Which stages hold the ratio and the overhead back, from the measured figures. */
export function verdictOf(speed: SpeedResult | undefined, overhead: OverheadResult | undefined): Verdict {
  const notes: string[] = [];
  const v: Verdict = { notes };
  if (speed && speed.ratio.n > 0) {
    v.ratio = { median: speed.ratio.median, target: TARGETS.ratio, met: speed.ratio.median <= TARGETS.ratio };
    const totalOver = speed.byStage.reduce((n, s) => n + Math.max(0, s.overheadMs.median), 0);
    const gap = speed.wallMs.median - speed.boundMs.median;
    const worst = [...speed.byStage].sort((a, b) => b.overheadMs.median - a.overheadMs.median).slice(0, 3);
    if (gap > 0) {
      notes.push(
        `wall − bound = ${s1(gap)} s: engine time between and around calls ${s1(totalOver)} s, ` +
          `overlap the algorithm allows but the engine does not use ${s1(speed.unusedOverlapMs.median)} s.`,
      );
      notes.push(
        `Largest engine time by stage: ${worst
          .map((w) => `${w.stage} ${s1(w.overheadMs.median)} s over ${fmt(w.calls.median)} calls`)
          .join('; ')}.`,
      );
    }
  }
  if (overhead && overhead.cpuPerStepMs.n > 0) {
    const own = overhead.profile?.engineOwnPerStepMs;
    const value = own ?? overhead.cpuPerStepMs.median;
    v.overhead = {
      median: value,
      target: TARGETS.overheadMsPerStep,
      met: value < TARGETS.overheadMsPerStep,
      measure: own !== undefined ? "engine's own CPU per step" : 'process CPU per step',
    };
    const p = overhead.profile;
    if (p && !v.overhead.met) {
      const parts = CPU_CATEGORIES.filter((c) => c !== 'idle' && p.perStepMs[c] >= 1)
        .sort((a, b) => p.perStepMs[b] - p.perStepMs[a])
        .map((c) => `${c} ${fmt(p.perStepMs[c])} ms`);
      notes.push(`CPU per step at zero latency: ${parts.join(', ')}.`);
    }
    const fsCalls = overhead.fsCallsPerStep;
    if (fsCalls && !v.overhead.met) {
      const total = Object.values(fsCalls).reduce((a, b) => a + (b ?? 0), 0);
      notes.push(
        `The run folder and cache cost ${fmt(total)} file-system calls per step ` +
          `(${Object.entries(fsCalls)
            .map(([k, n]) => `${k} ${fmt(n ?? 0)}`)
            .join(', ')}), all on the engine's one thread.`,
      );
    }
    const tiers = overhead.clientTiers;
    const bare = tiers.find((t) => t.name === 'node:http')?.cpuPerCallMs.median;
    const sdk = tiers.find((t) => t.name === 'engine backend')?.cpuPerCallMs.median;
    const client = tiers.find((t) => t.name === 'engine client')?.cpuPerCallMs.median;
    if (bare !== undefined && sdk !== undefined && client !== undefined) {
      notes.push(
        `One target call costs this process ${fmt(client, 2)} ms CPU through the engine client, ` +
          `${fmt(sdk, 2)} ms of it in the OpenAI backend (SDK + fetch); a bare node:http call costs ${fmt(bare, 2)} ms.`,
      );
    }
  }
  return v;
}

function speedSection(s: SpeedResult): string[] {
  const out: string[] = [];
  out.push(
    `Loop speed: ${s.settings.reps} runs, latency ${s.settings.latencyMs} ms + up to ${s.settings.jitterMs} ms jitter, ` +
      `${s.settings.concurrency} concurrent calls per role (min / median / max)`,
  );
  out.push(
    table(
      ['figure', 'value'],
      [
        ['wall ÷ bound (headline)', fmtSpread(s.ratio, 3)],
        ['wall ÷ engine-order bound', fmtSpread(s.engineOrderRatio, 3)],
        [
          'wall, s',
          fmtSpread(
            {
              ...s.wallMs,
              min: s.wallMs.min / 1000,
              median: s.wallMs.median / 1000,
              max: s.wallMs.max / 1000,
            },
            2,
          ),
        ],
        [
          'bound, s',
          fmtSpread(
            {
              ...s.boundMs,
              min: s.boundMs.min / 1000,
              median: s.boundMs.median / 1000,
              max: s.boundMs.max / 1000,
            },
            2,
          ),
        ],
        ['engine time per step, ms', fmtSpread(s.overheadPerStepMs)],
        ['unused overlap, ms', fmtSpread(s.unusedOverlapMs)],
      ],
    ),
  );
  out.push(
    '',
    'Per stage, whole run (medians): wall, calls, bound (waves × latency), engine time = wall − bound',
  );
  out.push(
    table(
      ['stage', 'calls', 'wall ms', 'bound ms', 'engine ms', 'engine ms / call'],
      s.byStage.map((b) => [
        b.stage,
        fmt(b.calls.median),
        fmt(b.wallMs.median),
        fmt(b.boundMs.median),
        fmt(b.overheadMs.median),
        b.calls.median > 0 ? fmt(b.overheadMs.median / b.calls.median, 1) : '–',
      ]),
    ),
  );
  const ok = s.reps.filter((r) => r.status === 'finished');
  const mid = [...ok].sort((a, b) => a.ratio - b.ratio)[Math.floor(ok.length / 2)];
  if (mid) {
    out.push('', `Per step (run ${mid.rep}, the median one):`);
    out.push(
      table(
        ['step', 'calls', 'cached', 'wall ms', 'bound ms', 'engine ms', 'wall ÷ bound'],
        mid.steps.map((r) => [
          String(r.step),
          String(r.calls),
          String(r.cached),
          fmt(r.wallMs),
          fmt(r.boundMs),
          fmt(r.overheadMs),
          r.boundMs > 0 ? fmt(r.wallMs / r.boundMs, 3) : '–',
        ]),
      ),
    );
    const dup = Object.entries(mid.duplicateCalls);
    if (dup.length)
      out.push(`Identical requests sent twice in one run: ${dup.map(([k, n]) => `${k} ${n}`).join(', ')}.`);
    const chk = mid.serviceCheck;
    if (Math.abs(chk.serverMs - chk.recordedMs) > 0.01 * Math.max(1, chk.serverMs))
      out.push(`WARNING: server service time ${fmt(chk.serverMs)} ms ≠ recorded ${fmt(chk.recordedMs)} ms.`);
  }
  return out;
}

function jitterLine(s: SpeedResult): string[] {
  return [
    '',
    `With ${s.settings.jitterMs} ms jitter (1 run): wall ÷ bound ${fmtSpread(s.ratio, 3)}, engine time per step ` +
      `${fmtSpread(s.overheadPerStepMs)} ms. With jitter the bound is still a lower bound, but no schedule reaches it.`,
  ];
}

function overheadSection(o: OverheadResult): string[] {
  const out: string[] = [];
  out.push(`Engine overhead at zero latency: ${o.reps.length} runs after a warm-up run (min / median / max)`);
  out.push(
    table(
      ['figure', 'value'],
      [
        ['process CPU per step, ms', fmtSpread(o.cpuPerStepMs)],
        ['wall per step, ms', fmtSpread(o.wallPerStepMs)],
        ['whole-run CPU ÷ steps, ms', fmtSpread(o.runCpuPerStepMs)],
        ['server calls per step', fmtSpread(o.callsPerStep)],
      ],
    ),
  );
  if (o.profile) {
    const p = o.profile;
    out.push(
      '',
      'Where a step’s CPU goes (shares from a sampled profile, applied to the median CPU per step):',
    );
    out.push(
      table(
        ['category', 'share', 'ms per step', 'engine’s own'],
        CPU_CATEGORIES.filter((c) => c !== 'idle').map((c) => [
          c,
          `${fmt(p.share[c] * 100)}%`,
          fmt(p.perStepMs[c]),
          ENGINE_OWN.includes(c) ? 'yes' : '',
        ]),
      ),
    );
  }
  if (o.fsCallsPerStep) {
    const entries = Object.entries(o.fsCallsPerStep);
    out.push(
      '',
      `File-system calls per step (median): ${entries.map(([k, n]) => `${k} ${fmt(n)}`).join(', ')}; ` +
        `${fmt(entries.reduce((a, [, n]) => a + n, 0))} in all.`,
    );
  }
  out.push('', 'One target call, CPU of this process per layer:');
  out.push(
    table(
      ['layer', 'ms per call', 'what'],
      o.clientTiers.map((t) => [t.name, fmtSpread(t.cpuPerCallMs, 2), t.what]),
    ),
  );
  return out;
}

function tokensSection(t: TokensResult): string[] {
  const out: string[] = [];
  out.push('Tokens per step (median over steps):');
  out.push(
    table(
      ['stage', 'calls', 'prompt tokens', 'completion tokens'],
      t.medianPerStep.map((r) => [r.stage, fmt(r.calls), fmt(r.promptTokens), fmt(r.completionTokens)]),
    ),
  );
  out.push('', 'Analyst prompt per step (characters, mean per call; the step buffer grows within an epoch):');
  out.push(
    table(
      ['step', 'epoch', 'chars'],
      t.analystPromptByStep.map((r) => [String(r.step), String(r.epoch), fmt(r.meanChars)]),
    ),
  );
  out.push(
    '',
    `Analyst prompt vs skill length: ${fmt(t.skillGrowth.bytesPerSkillByte, 2)} prompt bytes per skill byte (R² ${fmt(t.skillGrowth.r2, 3)})`,
  );
  out.push(
    table(
      ['skill chars', 'analyst prompt chars', 'max', 'merge prompt chars'],
      t.skillGrowth.points.map((p) => [
        fmt(p.x),
        fmt(p.analystPromptChars.mean),
        fmt(p.analystPromptChars.max),
        fmt(p.mergePromptChars),
      ]),
    ),
  );
  out.push(
    '',
    `Analyst prompt vs target reply length: ${t.trajectoryGrowth.bounded ? 'bounded' : 'NOT bounded'} ` +
      `(${fmt(t.trajectoryGrowth.tailBytesPerReplyByte, 4)} prompt bytes per reply byte between the two longest)`,
  );
  out.push(
    table(
      ['reply chars', 'analyst prompt chars', 'max'],
      t.trajectoryGrowth.points.map((p) => [
        fmt(p.x),
        fmt(p.analystPromptChars.mean),
        fmt(p.analystPromptChars.max),
      ]),
    ),
  );
  return out;
}

function footprintSection(f: FootprintResult): string[] {
  const out: string[] = [];
  const dev = f.builds.find((b) => b.mode === 'development');
  const prod = f.builds.find((b) => b.mode === 'production');
  const entries = [...new Set(f.builds.flatMap((b) => b.bundles.map((x) => x.entry)))];
  out.push('Bundles (esbuild metafiles):');
  out.push(
    table(
      ['entry', 'dev KiB', 'prod KiB', 'prod gzip KiB', 'largest in prod'],
      entries.map((e) => {
        const d = dev?.bundles.find((x) => x.entry === e);
        const p = prod?.bundles.find((x) => x.entry === e);
        return [
          e,
          d ? fmt(d.bytes / 1024, 1) : '–',
          p ? fmt(p.bytes / 1024, 1) : '–',
          p ? fmt(p.gzipBytes / 1024, 1) : '–',
          (p ?? d)?.largest
            .slice(0, 3)
            .map((l) => `${l.source} ${fmt(l.bytes / 1024)}K`)
            .join(', ') ?? '',
        ];
      }),
    ),
  );
  for (const b of f.builds) if (!b.ok) out.push(`${b.mode} build failed: ${b.error ?? ''}`);
  for (const v of f.vscode) {
    out.push(
      v.measured && v.ms
        ? v.what.startsWith('gate-history')
          ? `${v.what}: ${fmtSpread(v.ms)} ms (the production page in headless Chromium, ${v.ms.n} loads)`
          : `${v.what}: ${fmtSpread(v.ms)} ms (VS Code, ${v.ms.n} sessions${f.vscodeSessions?.skillLines ? `, ${f.vscodeSessions.skillLines}-line skill` : ''})`
        : `${v.what}: not measured — ${v.reason ?? ''}.`,
    );
  }
  return out;
}

export function renderReport(r: BenchResult): string {
  const m = r.machine;
  const out: string[] = [
    `SkillOpt bench ${r.quick ? '(quick) ' : ''}— ${r.startedAt}, ${fmt(r.durationS)} s`,
    `${m.cpuModel} × ${m.cpus}, ${m.memoryGiB} GiB, ${m.platform} ${m.release}, Node ${m.node}, commit ${m.commit}` +
      `${m.uncommittedFiles ? ` (+${m.uncommittedFiles} uncommitted files)` : ''}, load ${m.loadAverage}, write+rename ${m.writeRenameUs} µs`,
  ];
  const sections: Array<[string, string[] | undefined]> = [
    ['0. Neutral workload (issue 15)', r.neutral && neutralSection(r.neutral)],
    [
      '1. Speed',
      r.speed && [...speedSection(r.speed), ...(r.speedWithJitter ? jitterLine(r.speedWithJitter) : [])],
    ],
    ['2. Overhead', r.overhead && overheadSection(r.overhead)],
    [
      '3. Tokens and cache',
      [
        ...(r.tokens ? tokensSection(r.tokens) : []),
        ...(r.cache ? ['', ...cacheSection(r.cache)] : []),
        ...(r.batch ? ['', ...batchSection(r.batch)] : []),
      ],
    ],
    ['4. Footprint', r.footprint && footprintSection(r.footprint)],
    ['5. Spend', r.spend && spendSection(r.spend)],
  ];
  for (const [title, lines] of sections) {
    if (!lines || lines.length === 0) continue;
    out.push('', `── ${title} ${'─'.repeat(Math.max(0, 60 - title.length))}`, ...lines);
  }
  const v = r.verdict;
  out.push('', '── Verdict ' + '─'.repeat(55));
  if (v.ratio)
    out.push(
      `wall ÷ bound ${fmt(v.ratio.median, 3)} (target ≤ ${v.ratio.target}): ${v.ratio.met ? 'met' : 'MISSED'}`,
    );
  if (v.overhead)
    out.push(
      `${v.overhead.measure} ${fmt(v.overhead.median)} ms (target < ${v.overhead.target} ms): ${v.overhead.met ? 'met' : 'MISSED'}`,
    );
  for (const n of v.notes) out.push(`- ${n}`);
  return out.join('\n');
}
