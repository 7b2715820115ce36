import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_FILE } from '../../../src/engine/store/layout';
import { cliInProcess as cli } from '../../support/cliInProcess';
import { exampleConfig, tempDir } from '../train/helpers';

/**
 * A run killed before its data record (only its ledger written) is a run: train starts in it
 * (sameRun.ts), so --fresh must clear it too, not leave the old ledger for the new run to carry on.
 */
describe('train --fresh on a run killed before its data record', function () {
  this.timeout(60_000);
  let out: ReturnType<typeof tempDir>;
  beforeEach(() => (out = tempDir('skillopt-fresh-early-')));
  afterEach(() => out.cleanup());

  it('clears the ledger it left, as for any run', async () => {
    const run = join(out.path, 'run');
    mkdirSync(run);
    const ledger = join(run, RUN_FILE.ledger);
    writeFileSync(ledger, 'left by a killed run\n');
    const r = await cli([
      'train',
      exampleConfig,
      '--out',
      run,
      '--fresh',
      '--cfg-options',
      'train.num_epochs=1',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(readFileSync(ledger, 'utf8'), /left by a killed run/);
  });
});
