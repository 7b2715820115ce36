import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliInProcess } from '../../support/cliInProcess';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');

/** An evaluation stopped by a spend cap exits 3, as documented, with or without --json. */
describe('skillopt eval: the exit code of a stop on a cap', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-eval-stop-'));
    cpSync(example, dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const argv = (out: string, more: string[]): string[] => [
    'eval',
    join(dir, 'skillopt.yaml'),
    '--skill',
    join(dir, 'SKILL.md'),
    '--split',
    'all',
    '--out',
    join(dir, out),
    '--cfg-options',
    'cache.enabled=false',
    'limits.max_tokens=300',
    ...more,
  ];

  it('exits 3 and says how to continue', async () => {
    const r = await cliInProcess(argv('text', []));
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.match(r.stdout, /Stopped: token budget of 300 reached .* continue with:\n {2}cd /s);
  });

  it('with --json, exits 3 too, the error being one object with reason budget', async () => {
    const r = await cliInProcess(argv('json', ['--json']));
    assert.equal(r.code, 3, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout);
    const body = JSON.parse(lines[0]) as { error: { reason: string; message: string } };
    assert.equal(body.error.reason, 'budget');
    assert.match(body.error.message, /token budget of 300 reached/);
  });
});
