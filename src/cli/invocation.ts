/**
 * How to run this CLI again from the shell it was started in, for the resume line it prints: the
 * README runs it through `npx skillopt`, where a bare `skillopt` is not on PATH, and `npx skillopt`
 * works only where npm finds this package (elsewhere it asks the registry, which has no such package).
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { shellQuote } from './commands/common';

/** `skillopt` when a `skillopt` program is on PATH (an install with -g or npm link). */
function onPath(env: NodeJS.ProcessEnv): boolean {
  const names = process.platform === 'win32' ? ['skillopt.cmd', 'skillopt.exe', 'skillopt'] : ['skillopt'];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    // Under npx and npm run, node_modules/.bin is on PATH only for that one command.
    if (!dir || /[\\/]node_modules[\\/]\.bin$/.test(dir)) continue;
    for (const name of names) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return true;
      } catch {
        // Not here.
      }
    }
  }
  return false;
}

/**
 * Whether `npx skillopt` run in `cwd` finds this package's program: npm looks in its local prefix
 * (the nearest folder with a package.json or node_modules, else `cwd`), in its node_modules/.bin or
 * at the package itself (this repository).
 */
function npxFinds(cwd: string): boolean {
  let prefix = resolve(cwd);
  for (let dir = prefix; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) || existsSync(join(dir, 'node_modules'))) {
      prefix = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  const names = process.platform === 'win32' ? ['skillopt.cmd', 'skillopt'] : ['skillopt'];
  if (names.some((n) => existsSync(join(prefix, 'node_modules', '.bin', n)))) return true;
  try {
    const pkg = JSON.parse(readFileSync(join(prefix, 'package.json'), 'utf8')) as {
      name?: unknown;
      bin?: unknown;
    };
    const bin = pkg.bin;
    return typeof bin === 'string'
      ? pkg.name === 'skillopt'
      : !!bin && typeof bin === 'object' && 'skillopt' in bin;
  } catch {
    return false;
  }
}

/**
 * The words that start this CLI again: `skillopt`, `npm run skillopt --`, `npx skillopt` where npm
 * finds it, else `node <the CLI script>` (started as `node /path/dist/cli.js` from another folder).
 */
export function invokedAs(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  script: string | undefined = process.argv[1],
): string {
  if (onPath(env)) return 'skillopt';
  // `npm run skillopt -- …` in this repository; any other npm script or npx goes through npx.
  if (env.npm_command === 'run-script' && env.npm_lifecycle_event === 'skillopt')
    return 'npm run skillopt --';
  // Only a JavaScript file runs under plain node (not the TypeScript entry the tests start).
  if (!npxFinds(cwd) && script && /\.[cm]?js$/.test(script)) return `node ${shellQuote(resolve(script))}`;
  return 'npx skillopt';
}
