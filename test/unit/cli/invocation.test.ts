import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { invokedAs } from '../../../src/cli/invocation';
import { tempDir } from '../train/helpers';

/** The resume line starts the CLI the way that works in the user's shell. */
describe('cli: how to run skillopt again', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-invocation-');
  });
  afterEach(() => dir.cleanup());

  const program = (folder: string): string => {
    mkdirSync(folder, { recursive: true });
    const path = join(folder, process.platform === 'win32' ? 'skillopt.cmd' : 'skillopt');
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o755);
    return folder;
  };

  it('says skillopt when a skillopt program is on PATH (installed with -g or npm link)', () => {
    const bin = program(join(dir.path, 'global', 'bin'));
    assert.equal(invokedAs({ PATH: [join(dir.path, 'empty'), bin].join(delimiter) }), 'skillopt');
  });

  it('says npx skillopt when only npx put it on PATH, or nothing did', () => {
    const local = program(join(dir.path, 'project', 'node_modules', '.bin'));
    assert.equal(invokedAs({ PATH: local, npm_command: 'exec' }), 'npx skillopt');
    assert.equal(invokedAs({ PATH: join(dir.path, 'empty') }), 'npx skillopt');
    assert.equal(invokedAs({}), 'npx skillopt');
  });

  it('says node <the CLI script> where npx would not find skillopt (a folder outside any project using it)', () => {
    const outside = join(dir.path, 'data', 'my runs');
    mkdirSync(outside, { recursive: true });
    const script = join(dir.path, 'checkout', 'dist', 'cli.js');
    const env = { PATH: join(dir.path, 'empty') };
    assert.equal(invokedAs(env, outside, script), `node ${script}`);
    // Quoted for the shell when the path needs it.
    const spaced = join(dir.path, 'my checkout', 'dist', 'cli.js');
    assert.equal(invokedAs(env, outside, spaced), `node '${spaced}'`);
    // The TypeScript entry does not run under plain node: npx is the better guess then.
    assert.equal(invokedAs(env, outside, join(dir.path, 'src', 'cli', 'main.ts')), 'npx skillopt');
  });

  it('says npx skillopt where npm finds the package: a project that installed it, or this repository', () => {
    const env = { PATH: join(dir.path, 'empty') };
    const script = join(dir.path, 'checkout', 'dist', 'cli.js');
    const project = join(dir.path, 'project');
    program(join(project, 'node_modules', '.bin'));
    writeFileSync(join(project, 'package.json'), '{"name": "mine"}');
    mkdirSync(join(project, 'evals', 'a'), { recursive: true });
    assert.equal(invokedAs(env, join(project, 'evals', 'a'), script), 'npx skillopt');
    const checkout = join(dir.path, 'checkout');
    mkdirSync(join(checkout, 'examples'), { recursive: true });
    writeFileSync(
      join(checkout, 'package.json'),
      '{"name": "skillopt", "bin": {"skillopt": "./dist/cli.js"}}',
    );
    assert.equal(invokedAs(env, join(checkout, 'examples'), script), 'npx skillopt');
    // A project without it: npm would ask the registry.
    const other = join(dir.path, 'other');
    mkdirSync(join(other, 'node_modules'), { recursive: true });
    writeFileSync(join(other, 'package.json'), '{"name": "other"}');
    assert.equal(invokedAs(env, other, script), `node ${script}`);
  });

  it("says npm run skillopt -- under this repository's skillopt script, npx under another script", () => {
    const env = { PATH: join(dir.path, 'empty'), npm_command: 'run-script' };
    assert.equal(invokedAs({ ...env, npm_lifecycle_event: 'skillopt' }), 'npm run skillopt --');
    assert.equal(invokedAs({ ...env, npm_lifecycle_event: 'demo' }), 'npx skillopt');
  });
});
