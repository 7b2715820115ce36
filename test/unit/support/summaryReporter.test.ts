import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Mocha from 'mocha';
import SummaryReporter from '../../support/summaryReporter.cjs';

interface Results {
  passed: number;
  failed: number;
  failures: string[];
}

/** Runs a suite built in memory under the reporter, quietly, and returns the results it writes. */
async function resultsOf(build: (root: Mocha.Suite) => void): Promise<Results> {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-reporter-'));
  const file = join(dir, 'results.json');
  const mocha = new Mocha({ reporter: SummaryReporter });
  build(mocha.suite);
  const saved = { env: process.env.SKILLOPT_TEST_RESULTS, log: Mocha.reporters.Base.consoleLog };
  process.env.SKILLOPT_TEST_RESULTS = file;
  Mocha.reporters.Base.consoleLog = () => undefined;
  try {
    await new Promise<void>((resolve) => mocha.run(() => resolve()));
    return JSON.parse(readFileSync(file, 'utf8')) as Results;
  } finally {
    Mocha.reporters.Base.consoleLog = saved.log;
    if (saved.env === undefined) delete process.env.SKILLOPT_TEST_RESULTS;
    else process.env.SKILLOPT_TEST_RESULTS = saved.env;
    rmSync(dir, { recursive: true, force: true });
  }
}

const pass = (): void => undefined;
const boom = (): void => {
  throw new Error('boom');
};

describe('summary reporter', () => {
  it('counts passes and names failed tests', async () => {
    const r = await resultsOf((root) => {
      const s = Mocha.Suite.create(root, 'suite');
      s.addTest(new Mocha.Test('one', pass));
      s.addTest(new Mocha.Test('two', boom));
      s.addTest(new Mocha.Test('skipped'));
    });
    assert.deepEqual(r, { passed: 1, failed: 1, failures: ['suite two'] });
  });

  it('counts the tests a failed hook kept from running as failed', async () => {
    const r = await resultsOf((root) => {
      const broken = Mocha.Suite.create(root, 'broken');
      broken.beforeAll('set up', boom);
      for (const t of ['a', 'b', 'c']) broken.addTest(new Mocha.Test(t, pass));
      Mocha.Suite.create(root, 'fine').addTest(new Mocha.Test('d', pass));
    });
    assert.equal(r.passed, 1);
    assert.equal(r.failed, 3);
    assert.deepEqual(r.failures, [
      'broken "before all" hook: set up for "a"',
      '2 test(s) did not run (after a failed hook, or left out by .only)',
    ]);
  });
});
