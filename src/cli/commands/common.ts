import { parseArgs } from 'node:util';
import type { Logger } from '../../engine/log';
import type { LogLevel } from '../../protocol/vocabulary';
import { levelAtLeast } from '../../engine/log';
import { UsageError } from '../exit';

export interface CommonArgs {
  config: string;
  overrides: string[];
  legacyArgs: string[];
  json: boolean;
  values: Record<string, string | boolean | string[] | undefined>;
}

/**
 * Parse `<config> [options] [--cfg-options k=v ...] [legacy --flags]`. Options we know are parsed
 * strictly; anything after `--cfg-options` up to the next `--flag` are overrides; other `--x v`
 * pairs are the reference's legacy flags, handed to the config loader.
 */
export function parseCommon(
  args: readonly string[],
  known: Record<string, { type: 'string' | 'boolean'; short?: string }>,
): CommonArgs {
  const mine: string[] = [];
  const overrides: string[] = [];
  const legacy: string[] = [];
  const knownNames = new Set(Object.keys(known).concat(['json', 'help', 'verbose']));
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--cfg-options') {
      while (i + 1 < args.length && !args[i + 1].startsWith('--')) overrides.push(args[++i]);
      continue;
    }
    if (a.startsWith('--')) {
      const name = a.slice(2).split('=')[0];
      if (knownNames.has(name)) {
        mine.push(a);
        if (!a.includes('=') && known[name]?.type === 'string' && i + 1 < args.length) mine.push(args[++i]);
        continue;
      }
      legacy.push(a);
      if (!a.includes('=') && i + 1 < args.length && !args[i + 1].startsWith('--')) legacy.push(args[++i]);
      continue;
    }
    mine.push(a);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: mine,
      options: {
        ...known,
        json: { type: 'boolean' },
        help: { type: 'boolean' },
        verbose: { type: 'boolean' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const config = parsed.positionals[0];
  if (!config) throw new UsageError('missing the config file (e.g. skillopt.yaml)');
  if (parsed.positionals.length > 1) throw new UsageError(`unexpected argument "${parsed.positionals[1]}"`);
  return {
    config,
    overrides,
    legacyArgs: legacy,
    json: parsed.values.json === true,
    values: parsed.values as CommonArgs['values'],
  };
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
