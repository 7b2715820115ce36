import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliProcess } from '../../support/cliProcess';

const root = join(__dirname, '..', '..', '..');
function cli(args: string[]): { code: number | null; out: string } {
  const r = cliProcess(args);
  return { code: r.code, out: r.stdout + r.stderr };
}

// The README: `validate --out DIR` checks the run folder a train would use. A folder holding a run
// under another config is one `train --out DIR` refuses, so validate refuses it too, writing nothing.
describe('skillopt validate --out', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'skillopt-validate-out-')), 'house-style');
    cpSync(join(root, 'examples', 'house-style'), dir, { recursive: true });
    const trained = cli([
      'train',
      join(dir, 'skillopt.yaml'),
      '--out',
      join(dir, 'run'),
      '--cfg-options',
      'train.num_epochs=1',
    ]);
    assert.equal(trained.code, 0, trained.out);
  });
  after(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('passes for the config the run was started with', () => {
    const r = cli([
      'validate',
      join(dir, 'skillopt.yaml'),
      '--out',
      join(dir, 'run'),
      '--cfg-options',
      'train.num_epochs=1',
    ]);
    assert.equal(r.code, 0, r.out);
  });

  it('refuses another config, naming the difference, as train does', () => {
    const args = ['--out', join(dir, 'run'), '--cfg-options', 'train.num_epochs=1', 'train.seed=7'];
    const v = cli(['validate', join(dir, 'skillopt.yaml'), ...args]);
    assert.equal(v.code, 1, v.out);
    assert.match(v.out, /started with a different config \(seed: 42 → 7\)/);
    const t = cli(['train', join(dir, 'skillopt.yaml'), ...args]);
    assert.equal(t.code, 1, t.out);
    assert.match(t.out, /started with a different config \(seed: 42 → 7\)/);
  });

  it('refuses task data that changed since the run started, naming the item, as train does', () => {
    const tasks = join(dir, 'tasks.jsonl');
    const before = readFileSync(tasks, 'utf8');
    const [first, ...rest] = before.split('\n');
    const item = JSON.parse(first) as { id: string; answer?: unknown };
    writeFileSync(tasks, [JSON.stringify({ ...item, answer: 'something else' }), ...rest].join('\n'));
    try {
      const args = ['--out', join(dir, 'run'), '--cfg-options', 'train.num_epochs=1'];
      const v = cli(['validate', join(dir, 'skillopt.yaml'), ...args]);
      assert.equal(v.code, 1, v.out);
      assert.match(
        v.out,
        new RegExp(`the task data changed since this run started: .*item ${item.id} changed`),
      );
      const t = cli(['train', join(dir, 'skillopt.yaml'), ...args]);
      assert.equal(t.code, 1, t.out);
      assert.match(t.out, /the task data changed since this run started/);
    } finally {
      writeFileSync(tasks, before);
    }
  });

  it('says nothing about a folder without a run', () => {
    const r = cli([
      'validate',
      join(dir, 'skillopt.yaml'),
      '--out',
      join(dir, 'empty'),
      '--cfg-options',
      'train.seed=7',
    ]);
    assert.equal(r.code, 0, r.out);
  });
});
