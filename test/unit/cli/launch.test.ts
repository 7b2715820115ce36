import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBundle } from '../../../src/cli/launch';

describe('the CLI launcher (code cache)', () => {
  let dir: string;
  let savedTmp: string | undefined;
  const cacheDir = (): string => join(dir, 'tmp', `skillopt-code-cache-${process.getuid?.() ?? ''}`);
  const bundle = (name: string, body: string): string => {
    const file = join(dir, name);
    writeFileSync(file, body);
    return file;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-launch-'));
    savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = join(dir, 'tmp');
  });
  afterEach(() => {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a CommonJS bundle as require would, with its own require and file names', () => {
    const file = bundle(
      'b.js',
      "exports.answer = () => 42; module.exports.base = require('node:path').basename(__filename);",
    );
    const b = runBundle(file, 'train');
    assert.equal((b.exports.answer as () => number)(), 42);
    assert.equal(b.exports.base, 'b.js');
    assert.equal(b.fromCache, false);
  });

  it('compiles from the cache on the next start, per command', () => {
    const file = bundle('b.js', 'exports.f = function () { return [1, 2, 3].map((x) => x * 2); };');
    const first = runBundle(file, 'train');
    (first.exports.f as () => number[])();
    first.saveCache();
    assert.equal(readdirSync(cacheDir()).length, 1);
    const second = runBundle(file, 'train');
    assert.equal(second.fromCache, true);
    assert.deepEqual((second.exports.f as () => number[])(), [2, 4, 6]);
    assert.equal(runBundle(file, 'validate').fromCache, false, 'another command has its own cache');
  });

  it('never serves one bundle the cache of another of the same length', () => {
    const file = bundle('b.js', 'exports.v = "a";');
    runBundle(file, 'train').saveCache();
    bundle('b.js', 'exports.v = "b";');
    const changed = runBundle(file, 'train');
    assert.equal(changed.fromCache, false);
    assert.equal(changed.exports.v, 'b');
  });

  it('keeps no cache for --help and --version starts', () => {
    const file = bundle('b.js', 'exports.v = 1;');
    runBundle(file, '--version').saveCache();
    runBundle(file, undefined).saveCache();
    assert.equal(existsSync(join(dir, 'tmp')), false);
  });

  if (process.getuid)
    it('uses no cache folder that others can write to', () => {
      const file = bundle('b.js', 'exports.v = 1;');
      runBundle(file, 'train').saveCache();
      chmodSync(cacheDir(), 0o777);
      assert.equal(runBundle(file, 'train').fromCache, false);
    });
});
