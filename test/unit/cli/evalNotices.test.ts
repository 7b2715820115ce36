import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliInProcess } from '../../support/cliInProcess';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');

/** `eval` shows the config's notices as `train` and `validate` do: a mapped key is never dropped unsaid. */
describe('skillopt eval: the notices of mapped keys', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-eval-notices-'));
    cpSync(example, dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // --steps_per_epoch is one of the reference's flags that has no effect (steps are derived).
  const argv = (more: string[]): string[] => [
    'eval',
    join(dir, 'skillopt.yaml'),
    '--skill',
    join(dir, 'SKILL.md'),
    '--split',
    'val',
    '--out',
    join(dir, 'eval'),
    '--steps_per_epoch',
    '9',
    '--cfg-options',
    'cache.enabled=false',
    ...more,
  ];

  it('prints each notice as a warning line', async () => {
    const r = await cliInProcess(argv([]));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^warning: --steps_per_epoch \(train\.steps_per_epoch\): .*ignored/m);
    assert.match(r.stdout, /val: hard \d\.\d{4}/);
    // --split was given: the reference's different default is nobody's surprise.
    assert.doesNotMatch(r.stdout, /no --split given/);
  });

  it("says which split it scores when --split is left out (the reference's eval_only.py scores all)", async () => {
    const args = argv([]);
    args.splice(args.indexOf('--split'), 2);
    const r = await cliInProcess(args);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^warning: no --split given: scoring the test split .*pass --split all/m);
    assert.match(r.stdout, /test: hard \d\.\d{4}/);
  });

  it('with --json, puts them in the one summary object as warnings', async () => {
    const r = await cliInProcess(argv(['--json']));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout);
    const summary = JSON.parse(lines[0]) as { split: string; warnings?: string[] };
    assert.equal(summary.split, 'val');
    assert.ok(
      summary.warnings?.some((w) => w.startsWith('--steps_per_epoch (train.steps_per_epoch)')),
      lines[0],
    );
  });

  it('says that evaluation.test_env_num does not cap --split all (nor does the reference), counting every item', async () => {
    const args = argv(['--test_env_num', '2']);
    args[args.indexOf('--split') + 1] = 'all';
    const r = await cliInProcess(args);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /^warning: evaluation\.test_env_num \(2\) caps a single split only: --split all scores every item/m,
    );
    assert.match(r.stdout, /^all: hard \d\.\d{4}, soft \d\.\d{4} over 62 answered items/m);
  });
});
