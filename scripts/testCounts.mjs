// How `npm test` counts, for its closing `N passed, N failed` line (scripts/test.mjs and
// scripts/test-vscode.mjs). Every test counts once, where it runs:
//   - a counted stage (mocha, the VS Code suites, the browser checks) writes its results to the file
//     named by SKILLOPT_TEST_RESULTS: {"passed": n, "failed": n, "failures": ["name", ...]};
//   - a check (typecheck, lint, format) counts as one test;
//   - an infrastructure stage (install, build, package) counts only when it fails.
// A counted stage that leaves no readable results (it crashed) or reports no tests counts as one
// failure, and so does one that exits non-zero while reporting none.

export const RESULTS_ENV = 'SKILLOPT_TEST_RESULTS';

const isCount = (n) => Number.isInteger(n) && n >= 0;

/** A stage's results file, checked; throws with the reason when it cannot be trusted. */
export function parseResults(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error('results file is not JSON');
  }
  const { passed, failed, failures } = data ?? {};
  if (!isCount(passed) || !isCount(failed)) throw new Error('results file has no passed/failed counts');
  if (!Array.isArray(failures) || !failures.every((f) => typeof f === 'string'))
    throw new Error('results file has no list of failure names');
  // A stage that names more failures than it counts has miscounted: trust the names.
  return { passed, failed: Math.max(failed, failures.length), failures };
}

export class Tally {
  passed = 0;
  failed = 0;
  /** One entry per failure, or per group of failures a stage did not name one by one. */
  failures = [];

  /** A check that is one test: it passes when its command exits 0. */
  check(name, exitCode) {
    if (exitCode === 0) this.passed += 1;
    else this.#fail(`${name} (exit ${exitCode})`);
  }

  /** Install, build, package: not tests, so never a pass, but a failure when they fail. */
  infra(name, exitCode) {
    if (exitCode !== 0) this.#fail(`${name} (exit ${exitCode})`);
  }

  /** A counted stage: its exit code and the text of its results file (undefined: none written). */
  stage(name, exitCode, resultsText) {
    let results;
    try {
      if (resultsText === undefined) throw new Error('no results file');
      results = parseResults(resultsText);
    } catch (err) {
      this.#fail(`${name}: ended without reporting its tests (${err.message}, exit ${exitCode})`);
      return;
    }
    this.passed += results.passed;
    this.failed += results.failed;
    for (const f of results.failures) this.failures.push(`${name}: ${f}`);
    const unnamed = results.failed - results.failures.length;
    if (unnamed > 0) this.failures.push(`${name}: ${unnamed} unnamed failure(s)`);
    if (results.passed + results.failed === 0) this.#fail(`${name}: ran no tests (exit ${exitCode})`);
    else if (exitCode !== 0 && results.failed === 0)
      this.#fail(`${name}: exited with ${exitCode} although no test failed`);
  }

  /** The closing lines: the failures by name, then the count CI reads last. */
  lines() {
    const out = [];
    if (this.failures.length) out.push(`Failed: ${this.failures.join('; ')}`);
    out.push(`${this.passed} passed, ${this.failed} failed`);
    return out;
  }

  #fail(name) {
    this.failed += 1;
    this.failures.push(name);
  }
}
