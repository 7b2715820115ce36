import { SECTION_FIELDS } from '../engine/config/schema';
import {
  CODEX_ALIASES,
  DERIVED_FLAT_KEYS,
  LEGACY_TO_PATH,
  REFERENCE_JUDGE_FLAGS,
} from '../engine/config/flat';
import { editDistance } from '../engine/config/schema/problems';
import { UsageError } from './exit';

export interface FlagSpec {
  name: string;
  type: 'string' | 'boolean';
  /** Placeholder for the value in help, e.g. DIR. */
  value?: string;
  help: string;
}

export interface CommandSpec {
  name: string;
  usage: string;
  summary: string;
  flags: readonly FlagSpec[];
  /** Whether the reference's legacy `--batch_size 40` flags are accepted (train, eval, validate). */
  legacy: boolean;
  examples: readonly string[];
  /** Extra help text after the flags (e.g. a file format). */
  notes?: string;
}

/** Flags every command takes. */
export const jsonFlag: FlagSpec = {
  name: 'json',
  type: 'boolean',
  help: 'machine-readable output on stdout; an error is one {"error": {...}} object',
};
export const helpFlag: FlagSpec = { name: 'help', type: 'boolean', help: 'print this help (also -h)' };

/** `--help` or `-h` anywhere asks for help, so a half-typed command line never starts a run. */
export function wantsHelp(args: readonly string[]): boolean {
  return args.some((a) => a === '--help' || a === '-h');
}

/** `--json` anywhere: errors are then written as JSON even when parsing fails. */
export function wantsJson(args: readonly string[]): boolean {
  return args.some((a) => a === '--json' || a === '--json=true');
}

export function renderHelp(spec: CommandSpec): string {
  const flags = [...spec.flags, helpFlag];
  const left = flags.map((f) => `--${f.name}${f.value ? ` ${f.value}` : ''}`);
  const width = Math.max(...left.map((l) => l.length)) + 2;
  const lines = [
    `skillopt ${spec.name}: ${spec.summary}`,
    '',
    `Usage: ${spec.usage}`,
    '',
    'Options:',
    ...flags.map((f, i) => `  ${left[i].padEnd(width)}${f.help}`),
  ];
  if (spec.legacy)
    lines.push(
      `  ${'--<key> VALUE'.padEnd(width)}the reference SkillOpt's legacy flags (e.g. --batch_size 40, --edit_budget 3)`,
    );
  if (spec.notes) lines.push('', spec.notes);
  lines.push('', spec.examples.length > 1 ? 'Examples:' : 'Example:', ...spec.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}

/**
 * Flag names the reference's scripts accept (`-` read as `_`, as the config loader does):
 * mapped keys, env keys, Codex aliases, and the retired or derived names it still tolerates.
 * The reference sends any other name to env.<name>; we refuse it instead, since that is
 * nearly always a typo that would otherwise be silently ignored.
 */
const referenceNames: ReadonlySet<string> = new Set([
  ...LEGACY_TO_PATH.keys(),
  ...Object.keys(SECTION_FIELDS.env),
  ...CODEX_ALIASES.flatMap(([canonical, aliases]) => [canonical, ...aliases]),
  ...DERIVED_FLAT_KEYS,
  ...REFERENCE_JUDGE_FLAGS.keys(),
  'max_analyst_rounds',
]);

export function isReferenceFlag(name: string): boolean {
  return referenceNames.has(name.replace(/-/g, '_'));
}

/** The one-line refusal of an unknown flag, with the nearest known one when it is a likely typo. */
export function unknownFlag(spec: CommandSpec, flag: string): UsageError {
  const name = flag.replace(/^-+/, '').split('=')[0];
  // --config and --cfg-options are read only by the commands that take the reference's flags.
  const ours = [...spec.flags, helpFlag]
    .map((f) => f.name)
    .concat(spec.legacy ? ['config', 'cfg-options'] : []);
  const more = `see skillopt ${spec.name} --help`;
  if (name === 'cfg-options' && !spec.legacy)
    return new UsageError(
      `skillopt ${spec.name} does not take --cfg-options`,
      `set the keys in the config file it reads, or remove the flag (${more})`,
    );
  const near = nearest(name, spec.legacy ? [...ours, ...referenceNames] : ours);
  if (near) return new UsageError(`unknown flag --${name}`, `did you mean --${near}? (${more})`);
  return new UsageError(
    `unknown flag --${name}`,
    spec.legacy
      ? `remove it, or set a config key with --cfg-options section.key=value (${more})`
      : `remove it (${more})`,
  );
}

/** Closest name within a typo-sized distance (1, or 2 for names of 5+ letters). */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase().replace(/-/g, '_');
  const limit = w.length >= 5 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase().replace(/-/g, '_'));
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= limit ? best : undefined;
}

export const verboseFlag: FlagSpec = {
  name: 'verbose',
  type: 'boolean',
  help: 'log engine debug lines to stderr',
};
export const cfgOptionsFlag: FlagSpec = {
  name: 'cfg-options',
  type: 'string',
  value: 'k=v ...',
  help: 'override config keys, e.g. train.num_epochs=2 optimizer.learning_rate=3',
};
export const configFlag: FlagSpec = {
  name: 'config',
  type: 'string',
  value: 'FILE',
  help: 'the config file, as the reference spells it (same as the first argument)',
};
