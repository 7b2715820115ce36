import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_FILE } from '../../../src/engine/store/layout';

const root = join(__dirname, '..', '..', '..');
const entry = ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];

/** `skillopt train … --json | head -1`: the reader leaves; the run stops cleanly, no EPIPE stack. */
describe('skillopt train: a reader that stops reading', function () {
  this.timeout(90_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-closed-out-'));
    cpSync(join(root, 'examples', 'house-style'), dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stops at a safe point as on Ctrl-C (exit 130), without a stack trace', async () => {
    const out = join(dir, 'run');
    const argv = ['train', join(dir, 'skillopt.yaml'), '--out', out, '--json'];
    // A slow simulated run, so it has plenty left to write when the reader leaves.
    const env = { ...process.env, NO_COLOR: '1', SKILLOPT_SIM_LATENCY_MS: '20' };
    const child = spawn(process.execPath, [...entry, ...argv], { cwd: root, env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Read the first line, then close the pipe as `head -1` does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 130, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Unhandled|\n\s+at /, stderr);
    assert.ok(existsSync(join(out, RUN_FILE.config)));
  });
});
