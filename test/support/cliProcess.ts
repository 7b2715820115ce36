/** The `skillopt` CLI started from source in a child process, as a user starts it, output captured. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(__dirname, '..', '..');

/**
 * The node arguments that start the CLI from source: tsx by file URL (a run started in a temporary
 * folder would not resolve a bare 'tsx') and the version esbuild would define (version.ts).
 */
export const cliEntry: readonly string[] = [
  '--import',
  pathToFileURL(require.resolve('tsx')).href,
  '--import',
  pathToFileURL(join(root, 'test', 'support', 'version.ts')).href,
  join(root, 'src', 'cli', 'main.ts'),
];

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `skillopt <args>` to its end (in the repo root unless `cwd` is given), without colour. */
export function cliProcess(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): CliRun {
  const r = spawnSync(process.execPath, [...cliEntry, ...args], {
    cwd: opts.cwd ?? root,
    encoding: 'utf8',
    env: { ...(opts.env ?? process.env), NO_COLOR: '1' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
