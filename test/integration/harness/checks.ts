/**
 * Named checks for the browser walks, and the results every VS Code stage reports: each check passes
 * or fails on its own, prints an `ok` or `FAIL` line, and is counted one by one by `npm test`
 * (scripts/testCounts.mjs reads the file named by SKILLOPT_TEST_RESULTS).
 */
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { pngColours } from '../../support/png';
import { elapsed } from './host';

export interface Results {
  passed: number;
  failed: number;
  failures: string[];
}

// Taken out of the environment at once: the VS Code servers started later must not inherit it, or a
// mocha run inside their extension host would write this stage's results.
const resultsFile = process.env.SKILLOPT_TEST_RESULTS;
delete process.env.SKILLOPT_TEST_RESULTS;

export function combine(...all: Results[]): Results {
  return {
    passed: all.reduce((n, r) => n + r.passed, 0),
    failed: all.reduce((n, r) => n + r.failed, 0),
    failures: all.flatMap((r) => r.failures),
  };
}

/** Prints the failures and `N passed, N failed`, writes the results file; returns the exit code. */
export function report(results: Results): number {
  if (results.failures.length) console.log(`\nFailed:\n${results.failures.map((f) => `  ${f}`).join('\n')}`);
  console.log(`${results.passed} passed, ${results.failed} failed`);
  if (resultsFile) writeFileSync(resultsFile, JSON.stringify(results));
  return results.failed === 0 ? 0 : 1;
}

function message(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

export class Checks {
  private readonly passed: string[] = [];
  private readonly failed: string[] = [];
  /** The step whose failure stops the rest: the UI is then in an unknown state. */
  private blocker: string | undefined;

  /** `onFailure` runs after a failed check, e.g. to take a screenshot of the failure. */
  constructor(private readonly onFailure: (name: string) => Promise<void> = () => Promise.resolve()) {}

  /** A step that later checks build on: once one fails, the rest fail without running. */
  step(name: string, fn: () => Promise<void>): Promise<boolean> {
    return this.run(name, fn, true);
  }

  /** A check nothing after it depends on. */
  check(name: string, fn: () => Promise<void> | void): Promise<boolean> {
    return this.run(name, fn, false);
  }

  /**
   * Takes a screenshot (not a check in itself), then checks that it was written and is not blank:
   * more than 98 % of one colour, or under 100 colours, is a page that did not render (a sparse page
   * in a high-contrast theme, black with thin borders and some text, is about 95 % black).
   */
  async screenshot(page: Page | undefined, path: string, label: string): Promise<void> {
    await this.check(`${label}: screenshot written and not blank`, async () => {
      if (!page) throw new Error('no page');
      await page.screenshot({ path });
      console.log(`screenshot ${path} (${elapsed()})`);
      const c = pngColours(await readFile(path));
      if (c.dominantShare > 0.98 || c.distinct < 100)
        throw new Error(
          `${path} looks blank: ${(c.dominantShare * 100).toFixed(1)} % one colour, ${c.distinct} colours`,
        );
    });
  }

  results(): Results {
    return { passed: this.passed.length, failed: this.failed.length, failures: [...this.failed] };
  }

  private async run(name: string, fn: () => Promise<void> | void, blocks: boolean): Promise<boolean> {
    if (this.blocker !== undefined) {
      const notRun = `${name} (not run after a failed step)`;
      this.failed.push(notRun);
      console.log(`FAIL ${notRun}`);
      return false;
    }
    try {
      await fn();
    } catch (err) {
      this.failed.push(name);
      console.log(`FAIL ${name} (${elapsed()})\n     ${message(err).replace(/\n/g, '\n     ')}`);
      if (blocks) this.blocker = name;
      await this.onFailure(name).catch(() => undefined);
      return false;
    }
    this.passed.push(name);
    console.log(`ok   ${name} (${elapsed()})`);
    return true;
  }
}
