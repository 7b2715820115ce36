/** Command-line options of `npm run bench` and `npm run bench:server`, parsed without side effects. */

export class UsageError extends Error {}

type Raw = Map<string, string | true>;

function rawOptions(argv: readonly string[], flags: ReadonlySet<string>, values: ReadonlySet<string>): Raw {
  const out: Raw = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!flags.has(name) && !values.has(name)) throw new UsageError(`unknown option --${name}`);
    if (flags.has(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      out.set(name, true);
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--')))
      throw new UsageError(`--${name} needs a value`);
    out.set(name, value);
  }
  return out;
}

function num(raw: Raw, name: string, fallback: number, min: number, integer = true): number {
  const v = raw.get(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v === true || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
    throw new UsageError(
      `--${name} must be ${integer ? 'an integer' : 'a number'} ≥ ${min}, got "${String(v)}"`,
    );
  return n;
}

function str(raw: Raw, name: string): string | undefined {
  const v = raw.get(name);
  return typeof v === 'string' ? v : undefined;
}

export interface ServerArgs {
  port: number;
  latencyMs: number;
  jitterMs: number;
  optimizerConcurrency: number;
  targetConcurrency: number;
  seed: number;
  /** Task folder (train/ val/ test/) or task file the scripted target answers from; default the bench fixture. */
  tasks?: string;
  busy: boolean;
  /** One JSON line on stdout when listening (for the bench runner), instead of the human banner. */
  json: boolean;
}

export const SERVER_USAGE = `npm run bench:server -- [--port P] [--latency-ms L] [--jitter-ms J] [--concurrency C]
    [--optimizer-concurrency C] [--target-concurrency C] [--seed S] [--tasks DIR|FILE] [--no-busy] [--json]`;

export function parseServerArgs(argv: readonly string[]): ServerArgs {
  const raw = rawOptions(
    argv,
    new Set(['no-busy', 'json', 'help']),
    new Set([
      'port',
      'latency-ms',
      'jitter-ms',
      'concurrency',
      'optimizer-concurrency',
      'target-concurrency',
      'seed',
      'tasks',
    ]),
  );
  if (raw.has('help')) throw new UsageError(SERVER_USAGE);
  const both = num(raw, 'concurrency', 16, 1);
  const tasks = str(raw, 'tasks');
  return {
    port: num(raw, 'port', 8399, 0),
    latencyMs: num(raw, 'latency-ms', 300, 0, false),
    jitterMs: num(raw, 'jitter-ms', 0, 0, false),
    optimizerConcurrency: num(raw, 'optimizer-concurrency', both, 1),
    targetConcurrency: num(raw, 'target-concurrency', both, 1),
    seed: num(raw, 'seed', 1, 0),
    ...(tasks ? { tasks } : {}),
    busy: !raw.has('no-busy'),
    json: raw.has('json'),
  };
}

export interface RunArgs {
  quick: boolean;
  /** Repetitions of each timed run. */
  reps: number;
  latencyMs: number;
  /** The neutral workload's latency: 300 ms (issue 15) unless --latency-ms says otherwise. */
  neutralLatencyMs: number;
  jitterMs: number;
  concurrency: number;
  /** Sections to run; all by default. */
  only: Section[];
  /** Result file; default bench/results/<timestamp>.json. */
  out?: string;
  /** Neutral workload variants to run (default, early_stop, batch20, batch20+speculate); all by default. */
  variants?: string[];
  /** Build the neutral workload's CLI from this checkout instead (to compare with another branch). */
  cliRoot?: string;
}

export const SECTIONS = [
  'neutral',
  'speed',
  'jitter',
  'overhead',
  'tokens',
  'cache',
  'batch',
  'spend',
  'footprint',
] as const;
export type Section = (typeof SECTIONS)[number];

export const RUN_USAGE = `npm run bench -- [--quick] [--reps N] [--latency-ms L] [--jitter-ms J] [--concurrency C]
    [--only ${SECTIONS.join(',')}] [--variants NAME,...] [--cli-root DIR] [--out FILE]`;

export function parseRunArgs(argv: readonly string[]): RunArgs {
  const raw = rawOptions(
    argv,
    new Set(['quick', 'help']),
    new Set(['reps', 'latency-ms', 'jitter-ms', 'concurrency', 'only', 'out', 'variants', 'cli-root']),
  );
  if (raw.has('help')) throw new UsageError(RUN_USAGE);
  const quick = raw.has('quick');
  // The jitter sensitivity run is part of a full run only.
  const only = (str(raw, 'only') ?? SECTIONS.filter((x) => !quick || x !== 'jitter').join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of only) {
    if (!(SECTIONS as readonly string[]).includes(s))
      throw new UsageError(`--only: unknown section "${s}" (known: ${SECTIONS.join(', ')})`);
  }
  const out = str(raw, 'out');
  const variants = str(raw, 'variants')
    ?.split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  return {
    quick,
    reps: num(raw, 'reps', quick ? 2 : 5, 1),
    latencyMs: num(raw, 'latency-ms', quick ? 100 : 300, 0, false),
    neutralLatencyMs: num(raw, 'latency-ms', 300, 0, false),
    jitterMs: num(raw, 'jitter-ms', 0, 0, false),
    concurrency: num(raw, 'concurrency', 16, 1),
    only: only as Section[],
    ...(out ? { out } : {}),
    ...(variants ? { variants } : {}),
    ...(str(raw, 'cli-root') ? { cliRoot: str(raw, 'cli-root') } : {}),
  };
}
