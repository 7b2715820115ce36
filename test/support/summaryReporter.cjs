// Mocha's spec reporter, plus a machine-readable count for scripts/test.mjs, which prints the
// suite-wide `N passed, N failed` line that CI reads last.
const fs = require('node:fs');
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once('end', () => {
      const out = process.env.SKILLOPT_TEST_COUNTS;
      const { passes, failures, pending } = this.stats;
      if (out) fs.writeFileSync(out, JSON.stringify({ passes, failures, pending }));
      else process.stdout.write(`${passes} passed, ${failures} failed\n`);
    });
  }
}

module.exports = SummaryReporter;
