/**
 * Gives the tests the version esbuild puts into every bundle (`define: __SKILLOPT_VERSION__`),
 * read from package.json like the build does. Loaded before any test file (.mocharc `require`);
 * tests that start the CLI or the engine from source pass it to the child with `--import`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};
(globalThis as { __SKILLOPT_VERSION__?: string }).__SKILLOPT_VERSION__ = pkg.version;
