import assert from 'node:assert/strict';
import type * as Counts from '../../../scripts/testCounts.mjs' with { 'resolution-mode': 'import' };

// The module is ESM and this test compiles to CommonJS: load it with import().
let counts: typeof Counts;
before(async () => {
  counts = await import('../../../scripts/testCounts.mjs');
});

const results = (passed: number, failed: number, failures: string[] = []): string =>
  JSON.stringify({ passed, failed, failures });

describe('npm test counting: results files', () => {
  it('reads the counts and the failure names', () => {
    assert.deepEqual(counts.parseResults(results(30, 1, ['suite test'])), {
      passed: 30,
      failed: 1,
      failures: ['suite test'],
    });
  });

  it('refuses text that is not a results file', () => {
    assert.throws(() => counts.parseResults('30 passed, 0 failed'), /not JSON/);
    assert.throws(() => counts.parseResults('{"passed": 3}'), /passed\/failed/);
    assert.throws(() => counts.parseResults('{"passed": -1, "failed": 0, "failures": []}'), /passed\/failed/);
    assert.throws(
      () => counts.parseResults('{"passed": 1.5, "failed": 0, "failures": []}'),
      /passed\/failed/,
    );
    assert.throws(() => counts.parseResults('{"passed": 1, "failed": 0}'), /failure names/);
    assert.throws(() => counts.parseResults('null'), /passed\/failed/);
  });

  it('counts every named failure even when the stage counted fewer', () => {
    assert.equal(counts.parseResults(results(2, 0, ['a', 'b'])).failed, 2);
  });
});

describe('npm test counting: the tally', () => {
  it('counts a check as one test and an infrastructure stage only when it fails', () => {
    const t = new counts.Tally();
    t.check('lint', 0);
    t.check('format', 1);
    t.infra('build', 0);
    t.infra('package .vsix', 2);
    assert.deepEqual(t.lines(), ['Failed: format (exit 1); package .vsix (exit 2)', '1 passed, 2 failed']);
  });

  it('adds each test of a counted stage and names its failures', () => {
    const t = new counts.Tally();
    t.stage('integration', 1, results(32, 1, ['[trusted] training stops a run']));
    t.stage('browser', 0, results(12, 0));
    assert.deepEqual(t.lines(), [
      'Failed: integration: [trusted] training stops a run',
      '44 passed, 1 failed',
    ]);
  });

  it('counts a stage that crashed before writing its results as one failure', () => {
    const t = new counts.Tally();
    t.stage('screenshots', 134, undefined);
    t.stage('walk', 1, '{"passed": 3');
    assert.equal(t.passed, 0);
    assert.equal(t.failed, 2);
    assert.match(
      t.failures[0]!,
      /^screenshots: ended without reporting its tests \(no results file, exit 134\)$/,
    );
    assert.match(
      t.failures[1]!,
      /^walk: ended without reporting its tests \(results file is not JSON, exit 1\)$/,
    );
  });

  it('adds a failure when a stage exits non-zero although every test passed', () => {
    const t = new counts.Tally();
    t.stage('unit', 1, results(688, 0));
    assert.deepEqual(t.lines(), [
      'Failed: unit: exited with 1 although no test failed',
      '688 passed, 1 failed',
    ]);
  });

  it('does not add one when the stage reported its failures', () => {
    const t = new counts.Tally();
    t.stage('unit', 1, results(687, 1, ['x']));
    assert.equal(t.failed, 1);
  });

  it('counts a stage that ran no tests as a failure, even when it exits 0', () => {
    const t = new counts.Tally();
    t.stage('integration', 0, results(0, 0));
    assert.deepEqual(t.lines(), ['Failed: integration: ran no tests (exit 0)', '0 passed, 1 failed']);
  });

  it('names failures a stage counted without naming them', () => {
    const t = new counts.Tally();
    t.stage('unit', 1, results(5, 3, ['a']));
    assert.equal(t.failed, 3);
    assert.deepEqual(t.failures, ['unit: a', 'unit: 2 unnamed failure(s)']);
  });

  it('prints only the count when nothing failed', () => {
    const t = new counts.Tally();
    t.check('typecheck', 0);
    assert.deepEqual(t.lines(), ['1 passed, 0 failed']);
  });
});
