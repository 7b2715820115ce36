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

  it("says npm run skillopt -- under this repository's skillopt script, npx under another script", () => {
    const env = { PATH: join(dir.path, 'empty'), npm_command: 'run-script' };
    assert.equal(invokedAs({ ...env, npm_lifecycle_event: 'skillopt' }), 'npm run skillopt --');
    assert.equal(invokedAs({ ...env, npm_lifecycle_event: 'demo' }), 'npx skillopt');
  });
});
