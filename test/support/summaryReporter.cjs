// Mocha's spec reporter, plus the results scripts/test.mjs counts (scripts/testCounts.mjs): written
// to the file named by SKILLOPT_TEST_RESULTS when set, else printed as a `FAIL <test>` line per
// failure and a closing `N passed, N failed` (the integration harness reads those from VS Code's
// extension host, whose console, not stdout, reaches it).
const fs = require('node:fs');
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failures = [];
    runner.on('fail', (test) => failures.push(test.fullTitle()));
    runner.once('end', () => {
      const { passes, pending } = this.stats;
      // Tests after a failed hook, or left out by a stray `.only`, never ran: they did not pass.
      const notRun = runner.total - passes - pending - failures.length;
      const failed = failures.length + Math.max(0, notRun);
      if (notRun > 0)
        failures.push(`${notRun} test(s) did not run (after a failed hook, or left out by .only)`);
      const out = process.env.SKILLOPT_TEST_RESULTS;
      if (out) {
        fs.writeFileSync(out, JSON.stringify({ passed: passes, failed, failures }));
        return;
      }
      for (const f of failures) console.log(`FAIL ${f}`);
      console.log(`${passes} passed, ${failed} failed`);
    });
  }
}

module.exports = SummaryReporter;
