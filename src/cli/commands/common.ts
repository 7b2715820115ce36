import { parseArgs } from 'node:util';
import type { Logger } from '../../engine/log';
import type { LogLevel } from '../../protocol/vocabulary';
import { levelAtLeast } from '../../engine/log';
import { redactOverride } from '../../engine/config/flat';
import { SkillOptError, messageOf } from '../../engine/errors';
import { readRegularFile } from '../../engine/regularFile';
import { UsageError } from '../exit';
import { type CommandSpec, type FlagSpec, helpFlag, isReferenceFlag, jsonFlag, unknownFlag } from '../args';

export interface CommonArgs {
  config: string;
  overrides: string[];
  legacyArgs: string[];
  json: boolean;
  values: Record<string, string | boolean | string[] | undefined>;
}

/**
 * Parse `<config> [options] [--cfg-options k=v ...] [legacy --flags]` (`--config FILE` as the
 * reference spells it stands for the positional). Our flags are parsed strictly; anything after
 * `--cfg-options` up to the next `--flag` are overrides; the reference's own `--x v` flags go to
 * the config loader; any other flag is refused (a typo would otherwise be silently ignored).
 */
export function parseCommon(args: readonly string[], spec: CommandSpec): CommonArgs {
  const { mine, overrides, legacy, configFlag } = splitArgs(args, spec);
  const parsed = strictParse(mine, spec);
  if (configFlag !== undefined && parsed.positionals.length > 0)
    throw new UsageError(
      `the config is given twice ("${parsed.positionals[0]}" and --config ${configFlag})`,
      'give it once, as the first argument or with --config',
    );
  const config = configFlag ?? parsed.positionals[0];
  if (!config) throw new UsageError('missing the config file', `e.g. skillopt ${spec.name} skillopt.yaml`);
  if (parsed.positionals.length > 1)
    throw new UsageError(
      `unexpected argument "${parsed.positionals[1]}"`,
      `see skillopt ${spec.name} --help`,
    );
  return {
    config,
    overrides,
    legacyArgs: legacy,
    json: parsed.values.json === true,
    values: parsed.values as CommonArgs['values'],
  };
}

/** Flags only, no config (apply-edits): every flag must be ours, and no bare argument is allowed. */
export function parseFlags(args: readonly string[], spec: CommandSpec): CommonArgs['values'] {
  const parsed = strictParse(splitArgs(args, spec).mine, spec);
  if (parsed.positionals.length)
    throw new UsageError(
      `unexpected argument "${parsed.positionals[0]}"`,
      `see skillopt ${spec.name} --help`,
    );
  return parsed.values as CommonArgs['values'];
}

/** Sort the words into ours, --cfg-options items, the reference's legacy flags and --config. */
function splitArgs(
  args: readonly string[],
  spec: CommandSpec,
): { mine: string[]; overrides: string[]; legacy: string[]; configFlag?: string } {
  const known = knownFlags(spec);
  const mine: string[] = [];
  const overrides: string[] = [];
  const legacy: string[] = [];
  let configFlag: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    // argparse's nargs="+": `--cfg-options k=v …` or `--cfg-options=k=v …`, at least one.
    if (spec.legacy && (a === '--cfg-options' || a.startsWith('--cfg-options='))) {
      const before = overrides.length;
      if (a.includes('=') && a.length > '--cfg-options='.length) overrides.push(a.slice(a.indexOf('=') + 1));
      while (i + 1 < args.length && !args[i + 1].startsWith('--')) overrides.push(args[++i]);
      if (overrides.length === before)
        throw new UsageError(
          '--cfg-options needs at least one key=value',
          'write --cfg-options section.key=value ..., e.g. --cfg-options train.num_epochs=2',
        );
      continue;
    }
    if (spec.legacy && (a === '--config' || a.startsWith('--config='))) {
      const value = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      if (!value || value.startsWith('-'))
        throw new UsageError('--config needs a file', `write --config skillopt.yaml`);
      configFlag = value;
      continue;
    }
    if (a.startsWith('--')) {
      const name = a.slice(2).split('=')[0];
      if (known.has(name)) {
        mine.push(a);
        if (!a.includes('=') && known.get(name)?.type === 'string' && i + 1 < args.length)
          mine.push(args[++i]);
        continue;
      }
      if (!spec.legacy || !isReferenceFlag(name)) throw unknownFlag(spec, a);
      legacy.push(a);
      if (!a.includes('=') && i + 1 < args.length && !args[i + 1].startsWith('--')) legacy.push(args[++i]);
      continue;
    }
    if (a.length > 1 && a.startsWith('-')) throw unknownFlag(spec, a);
    mine.push(a);
  }
  return { mine, overrides, legacy, ...(configFlag !== undefined ? { configFlag } : {}) };
}

function knownFlags(spec: CommandSpec): Map<string, FlagSpec> {
  return new Map([...spec.flags, jsonFlag, helpFlag].map((f) => [f.name, f]));
}

/**
 * node's complaint as one line: it names a flag with no value in several sentences ("Did you
 * forget…", "To specify an option argument starting with a dash…").
 */
function parseArgsError(err: unknown, spec: CommandSpec): UsageError {
  const help = `see skillopt ${spec.name} --help`;
  const message = messageOf(err);
  const flag = /^Option '(--?[\w-]+)/.exec(message)?.[1];
  if ((err as { code?: string }).code !== 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || !flag)
    return new UsageError(message.split('\n')[0].replace(/\.$/, ''), help);
  return new UsageError(
    `${flag} has no value`,
    `give ${flag} a value; one that starts with "-" is written ${flag}=VALUE (${help})`,
  );
}

/** node's parser for our own flags; its complaints (a missing value…) become usage errors. */
function strictParse(mine: string[], spec: CommandSpec): ReturnType<typeof parseArgs> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: mine,
      options: Object.fromEntries([...knownFlags(spec)].map(([name, f]) => [name, { type: f.type }])),
      allowPositionals: true,
    });
  } catch (err) {
    throw parseArgsError(err, spec);
  }
  // `--out "$DIR"` with DIR unset: taken as no --out, the run would go to the default folder.
  for (const [name, value] of Object.entries(parsed.values))
    if (value === '')
      throw new UsageError(`--${name} was given an empty value`, `give --${name} a value, or leave it out`);
  return parsed;
}

/** Engine logs to stderr, so stdout stays clean for `--json` and for piping the skill. */
export function stderrLogger(min: LogLevel): Logger {
  return {
    log(level, component, message) {
      if (levelAtLeast(level, min)) process.stderr.write(`[${level}] ${component}: ${message}\n`);
    },
  };
}

/**
 * Model settings every CLI command shares. The person running the CLI chose this config and the
 * agent command in it; there is no workspace-trust prompt to wait for, so the `command` target may run.
 */
export const cliModels = { trustedWorkspace: true } as const;

/** Read a file the user named on the command line; a missing one is one line naming it, exit 1. */
export function readInputFile(path: string, what: string, flag: string): string {
  let problem: string;
  try {
    // A FIFO or a device is refused, not read: it would hang the command.
    const read = readRegularFile(path);
    if (!('kind' in read)) return read.bytes.toString('utf8');
    problem = `${what} is ${read.kind}, not a file`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problem =
      code === 'ENOENT'
        ? `${what} not found`
        : code === 'EISDIR'
          ? `${what} is a folder, not a file`
          : `cannot read the ${what} (${code ?? String(err)})`;
  }
  throw new SkillOptError('io', problem, { file: path, fix: `check the path given to ${flag}` });
}

/**
 * A command line to print (a resume command): secrets in overrides are masked (pass them again,
 * or use the environment variable), and arguments are quoted so the line can be pasted into a shell.
 * It starts with `cd` to the folder the command ran in: the config, flag values and the reference
 * configs' repo-root paths (skill_init, split_dir) may be relative to it, so it works pasted anywhere.
 */
export function commandLine(
  command: string,
  words: readonly string[],
  a: CommonArgs,
  /** Overrides of ours (no secrets) added after the user's, as they are. */
  added: readonly string[] = [],
  cwd: string = process.cwd(),
): string {
  const overrides = [...a.overrides.map(redactOverride), ...added];
  return [
    'cd',
    shellQuote(cwd),
    '&&',
    command,
    ...words.map(shellQuote),
    ...redactLegacy(a.legacyArgs).map(shellQuote),
    ...(overrides.length ? ['--cfg-options', ...overrides.map(shellQuote)] : []),
  ].join(' ');
}

/** POSIX-shell quoting, only where a word needs it. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Legacy `--flag value` / `--flag=value` arguments with secret values masked, for the resume line. */
function redactLegacy(args: readonly string[]): string[] {
  return args.map((arg, i) => {
    if (arg.startsWith('--')) return arg.includes('=') ? `--${redactOverride(arg.slice(2))}` : arg;
    const flag = args[i - 1];
    if (!flag?.startsWith('--') || flag.includes('=')) return arg;
    const masked = redactOverride(`${flag.slice(2)}=${arg}`);
    return masked.slice(masked.indexOf('=') + 1);
  });
}
