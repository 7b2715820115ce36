/**
 * The neutral workload of issue 15: the reference's SearchQA shape (40 train / 20 selection items,
 * 2 epochs, batch 40, minibatch 8, slow update and meta skill on, response cache off) run by the
 * built CLI as its own process against the neutral server (bench/neutral/server.ts: 300 ms per
 * call, no cap, Nagle off). Times run from the process launch, as a user sees them, and each run is
 * measured against the dependency bound in waves (15 for the run, 6 for a step).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as esbuild from 'esbuild';
import { loadSplitDir } from '../../src/engine/data/splits';
import type { TaskItem } from '../../src/engine/data/tasks';
import { scriptedOptimizerModel, scriptedTargetModel } from '../../test/support/loopback/scriptedModels';
import { generateBenchTasks, writeBenchTasks } from '../fixtures/generate';
import { UsageError } from '../args';
import { repoRoot } from '../harness';
import { spread, type Spread } from '../stats';
import { analyzeRun, windowsOf, type NeutralRun } from './analyze';
import { startNeutralServer, type NeutralSplit } from './server';

/** The issue's figures: 15 waves of calls on the run's critical chain, 6 in a step. */
export const NEUTRAL_BOUND_WAVES = 15;
export const NEUTRAL_STEP_WAVES = 6;
export const NEUTRAL_SIZES = { train: 40, val: 20, test: 20 } as const;

export const NEUTRAL_CONFIG = `# issue 15's neutral workload: the reference's SearchQA shape
model:
  optimizer_backend: openai_compatible
  target_backend: openai
  optimizer: ${scriptedOptimizerModel}
  target: ${scriptedTargetModel}
train:
  num_epochs: 2
  batch_size: 40
  seed: 7
gradient:
  minibatch_size: 8
  merge_batch_size: 8
  analyst_workers: 64
optimizer:
  learning_rate: 4
  min_learning_rate: 2
  use_slow_update: true
  slow_update_samples: 20
  use_meta_skill: true
evaluation:
  gate_metric: hard
  eval_test: false
limits:
  optimizer_concurrency: 256
  target_concurrency: 256
cache:
  enabled: false
env:
  name: neutral
  skill_init: SKILL.md
  split_mode: split_dir
  split_dir: tasks
  scorer: exact
`;

export interface NeutralVariant {
  name: string;
  /** Extra `--cfg-options` (e.g. `speed.speculate=true`). */
  overrides: string[];
}

export interface NeutralRep extends NeutralRun {
  rep: number;
  exitCode: number | null;
  /** 1-minute load average when the rep started (the machine is shared). */
  load: number;
  /** What the run's summary says about extra and saved calls, when it says anything. */
  summary?: Record<string, unknown>;
}

export interface EdgeSummary {
  stage: string;
  /** Per rep: the stage's leads (or tails) summed over its windows; spread over reps. */
  leadMs: Spread;
  tailMs: Spread;
  windows: number;
}

export interface NeutralResult {
  variant: string;
  latencyMs: number;
  boundMs: number;
  reps: NeutralRep[];
  wallMs: Spread;
  ratio: Spread;
  stepRatio: Spread;
  /** Each step ÷ the waves it sent. */
  stepOwnRatio: Spread;
  stepWallMs: Spread;
  firstRequestMs: Spread;
  edges: EdgeSummary[];
  load: Spread;
}

/**
 * Bundle the CLI of `root` as `npm run package:build` does (minified), into the scratch folder: the
 * launcher and the bundle it runs through the code cache, or the one bundle of a checkout before it.
 */
export async function buildCli(outDir: string, root = repoRoot): Promise<string> {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const launcher = join(root, 'src/cli/launch.ts');
  const bundles: Array<[string, string]> = existsSync(launcher)
    ? [
        [launcher, 'cli.js'],
        [join(root, 'src/cli/main.ts'), 'cli-main.js'],
      ]
    : [[join(root, 'src/cli/main.ts'), 'cli.js']];
  for (const [entry, name] of bundles)
    await esbuild.build({
      entryPoints: [entry],
      outfile: join(outDir, name),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      minify: true,
      logLevel: 'silent',
      define: { __SKILLOPT_VERSION__: JSON.stringify(version) },
    });
  return join(outDir, 'cli.js');
}

/** The workload's folder: config, skill and SearchQA-sized splits. */
export function writeNeutralWorkload(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeBenchTasks(dir, generateBenchTasks(7, NEUTRAL_SIZES));
  copyFileSync(join(repoRoot, 'bench/fixtures/SKILL.md'), join(dir, 'SKILL.md'));
  const config = join(dir, 'neutral.yaml');
  writeFileSync(config, NEUTRAL_CONFIG);
  return config;
}

const now = (): number => performance.timeOrigin + performance.now();

export async function runNeutral(
  workDir: string,
  opts: { reps: number; latencyMs: number; variants: NeutralVariant[]; cliRoot?: string },
  log: (line: string) => void,
): Promise<NeutralResult[]> {
  const dir = join(workDir, 'neutral');
  const config = writeNeutralWorkload(dir);
  const cli = await buildCli(dir, opts.cliRoot);
  const splits = loadSplitDir({ splitDir: join(dir, 'tasks') });
  const tagged = (items: readonly TaskItem[], split: NeutralSplit) => items.map((t) => ({ ...t, split }));
  const tasks = [
    ...tagged(splits.train, 'train'),
    ...tagged(splits.val, 'val'),
    ...tagged(splits.test.unsealForEvaluation(), 'test'),
  ];
  const server = await startNeutralServer({ latencyMs: opts.latencyMs, tasks });
  const results: NeutralResult[] = [];
  try {
    for (const variant of opts.variants) {
      const reps: NeutralRep[] = [];
      for (let rep = 1; rep <= opts.reps; rep++) {
        server.reset();
        const out = join(dir, 'runs', `${variant.name}-${rep}`);
        const load = loadavg()[0];
        const events: Array<{ at: number; e: Record<string, unknown> }> = [];
        const launchedAt = now();
        const child = spawn(
          process.execPath,
          [
            cli,
            'train',
            config,
            '--out',
            out,
            '--json',
            '--cfg-options',
            `model.optimizer_base_url=${server.url}`,
            `model.target_base_url=${server.url}`,
            ...variant.overrides,
          ],
          { cwd: dir, env: { ...process.env, OPENAI_API_KEY: 'neutral-bench' } },
        );
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        createInterface({ input: child.stdout }).on('line', (line) => {
          const at = now();
          try {
            events.push({ at, e: JSON.parse(line) as Record<string, unknown> });
          } catch {
            // Not an event line.
          }
        });
        const exitCode = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
        const exitedAt = now();
        const run = analyzeRun({
          launchedAt,
          exitedAt,
          windows: windowsOf(events),
          requests: server.log(),
          latencyMs: opts.latencyMs,
          boundWaves: NEUTRAL_BOUND_WAVES,
          stepWaves: NEUTRAL_STEP_WAVES,
        });
        let summary: Record<string, unknown> | undefined;
        try {
          summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Record<string, unknown>;
        } catch {
          summary = undefined;
        }
        const speedFigures = summary?.speed as Record<string, unknown> | undefined;
        reps.push({ rep, exitCode, load, ...run, ...(speedFigures ? { summary: speedFigures } : {}) });
        log(
          `  neutral ${variant.name} ${rep}/${opts.reps}: wall ${(run.wallMs / 1000).toFixed(2)} s = ${run.ratio.toFixed(3)} × bound, ` +
            `first request ${run.firstRequestMs.toFixed(0)} ms, steps ${run.steps.map((s) => `${s.ratio.toFixed(3)} × 6 waves (${s.ownRatio.toFixed(3)} × its ${s.waves})`).join(', ')}, load ${load.toFixed(2)}` +
            (exitCode === 0 ? '' : ` — exit ${exitCode}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`),
        );
      }
      results.push(summarize(variant.name, opts.latencyMs, reps));
    }
  } finally {
    await server.close();
  }
  return results;
}

export function summarize(variant: string, latencyMs: number, reps: NeutralRep[]): NeutralResult {
  const ok = reps.filter((r) => r.exitCode === 0);
  const stages = [...new Set(ok.flatMap((r) => r.edges.map((e) => e.stage)))];
  const sum = (r: NeutralRep, stage: string, k: 'leadMs' | 'tailMs'): number =>
    r.edges.filter((e) => e.stage === stage).reduce((n, e) => n + (e[k] ?? 0), 0);
  return {
    variant,
    latencyMs,
    boundMs: NEUTRAL_BOUND_WAVES * latencyMs,
    reps,
    wallMs: spread(ok.map((r) => r.wallMs)),
    ratio: spread(ok.map((r) => r.ratio)),
    stepRatio: spread(ok.flatMap((r) => r.steps.map((s) => s.ratio))),
    stepOwnRatio: spread(ok.flatMap((r) => r.steps.map((s) => s.ownRatio))),
    stepWallMs: spread(ok.flatMap((r) => r.steps.map((s) => s.wallMs))),
    firstRequestMs: spread(ok.map((r) => r.firstRequestMs)),
    edges: stages.map((stage) => ({
      stage,
      leadMs: spread(ok.map((r) => sum(r, stage, 'leadMs'))),
      tailMs: spread(ok.map((r) => sum(r, stage, 'tailMs'))),
      windows: ok[0]?.edges.filter((e) => e.stage === stage).length ?? 0,
    })),
    load: spread(reps.map((r) => r.load)),
  };
}

/**
 * What `npm run bench` measures on the neutral workload: the run as configured, with early stop
 * (calls saved; none without a concurrency cap, since every item is sent at once), and the same run
 * with batch 20 (two steps per epoch, so a step has a next one to speculate on) without and with
 * speculation.
 */
export const NEUTRAL_VARIANTS: NeutralVariant[] = [
  { name: 'default', overrides: [] },
  { name: 'early_stop', overrides: ['evaluation.early_stop=true'] },
  { name: 'batch20', overrides: ['train.batch_size=20'] },
  { name: 'batch20+speculate', overrides: ['train.batch_size=20', 'speed.speculate=true'] },
];

/** The variants `--variants` names (all when none), refusing an unknown name. */
export function neutralVariants(names?: readonly string[]): NeutralVariant[] {
  if (!names) return NEUTRAL_VARIANTS;
  return names.map((n) => {
    const v = NEUTRAL_VARIANTS.find((x) => x.name === n);
    if (!v)
      throw new UsageError(
        `--variants: unknown variant "${n}" (known: ${NEUTRAL_VARIANTS.map((x) => x.name).join(', ')})`,
      );
    return v;
  });
}
