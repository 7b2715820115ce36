import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';

export const evalFixtures = join(__dirname, '..', '..', 'fixtures', 'evals');

/** A fresh folder per test (mocha hooks of the calling suite), and a writer of files into it. */
export function evalTempDir(): { readonly path: string; write(name: string, text: string): string } {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-evalfmt-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return {
    get path() {
      return dir;
    },
    write(name, text) {
      const path = join(dir, name);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
  };
}

/** A tasks error at the given place, with a fix (what to use instead). */
export function refused(
  fn: () => unknown,
  where: { file?: RegExp; line?: number; key?: string },
  message: RegExp,
): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(SkillOptError.is(err, 'tasks'), `expected a tasks error, got ${String(err)}`);
    if (where.file) assert.match(err.place.file ?? '', where.file);
    if (where.line !== undefined) assert.equal(err.place.line, where.line);
    if (where.key !== undefined) assert.equal(err.place.key, where.key);
    assert.match(err.message, message);
    assert.ok(err.place.fix, 'every refusal says what to use instead');
    return true;
  });
}
