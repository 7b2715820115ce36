/**
 * How to run this CLI again from the shell it was started in, for the resume line it prints: the
 * README runs it through `npx skillopt`, where a bare `skillopt` is not on PATH.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

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

/** The words that start this CLI again: `skillopt`, `npx skillopt`, or `npm run skillopt --`. */
export function invokedAs(env: NodeJS.ProcessEnv = process.env): string {
  if (onPath(env)) return 'skillopt';
  // `npm run skillopt -- …` in this repository; any other npm script or npx goes through npx.
  if (env.npm_command === 'run-script' && env.npm_lifecycle_event === 'skillopt')
    return 'npm run skillopt --';
  return 'npx skillopt';
}
