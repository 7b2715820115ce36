/**
 * The `run()` behind each suite's extensionTestsPath: VS Code's extension host `require()`s the
 * bundled index and awaits it; a rejection ends the session with exit code 1. The reporter prints a
 * `FAIL <test>` line per failure and the `N passed, N failed` line the harness counts.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';
import SummaryReporter from '../../support/summaryReporter.cjs';

export function runMochaIn(dir: string): Promise<void> {
  // SKILLOPT_IT_GREP (passed through the server's environment) runs only matching tests.
  const grep = process.env.SKILLOPT_IT_GREP;
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 60_000,
    color: false,
    reporter: SummaryReporter,
    ...(grep ? { grep } : {}),
  });
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.test.js'))
    .sort()) {
    mocha.addFile(join(dir, f));
  }
  return new Promise((resolve, reject) => {
    mocha.run((failures) => {
      if (failures) reject(new Error(`${failures} failure(s)`));
      else resolve();
    });
  });
}
