/**
 * A new user's first run, in Chromium against a clean code-server with the packaged .vsix
 * installed: open the Runs view, open a SKILL.md that has no config, run Optimize This Skill, walk
 * the guided setup, confirm the estimate, watch the tree and the status bar fill, open a step's
 * diff. Each of these is a named check, counted by `npm test`; after a failed step the rest fail
 * without running. Screenshots go to .cache/e2e-screenshots/ (or SKILLOPT_SHOTS); look at them.
 *
 *   node --import tsx test/e2e/newUser.ts path/to/skillopt.vsix
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { Checks, report } from '../integration/harness/checks';
import {
  elapsed,
  installVsCode,
  installVsix,
  launchBrowser,
  makeSandbox,
  makeWorkspace,
  removeDir,
  repoRoot,
  startCodeServer,
  palette,
  type Server,
} from '../integration/harness/host';

const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const vsix = resolve(process.argv[2] ?? join(repoRoot, `skillopt-${version}.vsix`));
const shots = resolve(process.env.SKILLOPT_SHOTS ?? join(repoRoot, '.cache', 'e2e-screenshots'));

function row(page: Page, text: string | RegExp): ReturnType<Page['locator']> {
  return page.locator('.monaco-list-row', { hasText: text }).first();
}

/** A tree row by its label alone (the description follows the label without a space). */
function labelled(page: Page, label: string): ReturnType<Page['locator']> {
  return page
    .locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${label}$`) }) })
    .first();
}

/** Waits for the quick pick whose title contains `title`, then picks the row matching `label`. */
async function pick(page: Page, title: string, label: string | RegExp): Promise<void> {
  await page
    .locator('.quick-input-widget .quick-input-title', { hasText: title })
    .waitFor({ timeout: 30_000 });
  await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().click();
}

async function main(): Promise<number> {
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  const sandbox = makeSandbox('skillopt-e2e-');
  let server: Server | undefined;
  let browser: BrowserContext | undefined;
  let page: Page | undefined;
  const checks = new Checks(async () => {
    await page?.screenshot({ path: join(shots, '99-failure.png') });
  });
  // Let fade-in animations (quick input, dialogs) finish before a screenshot.
  const shot = async (name: string): Promise<void> => {
    await page?.waitForTimeout(300);
    await checks.screenshot(page, join(shots, name), name);
  };
  try {
    await checks.step('the packaged .vsix installs into a clean code-server', async () => {
      const install = installVsCode();
      const ws = makeWorkspace(sandbox, undefined);
      console.log(installVsix(install, sandbox, vsix));
      // Slow the simulated models down (the engine process inherits this), so the run is still going
      // when the tree and the status bar are checked mid-run.
      process.env.SKILLOPT_SIM_LATENCY_MS = '400';
      server = await startCodeServer(install, sandbox);
      console.log(`code-server on ${server.url} (${elapsed()})`);
      browser = await launchBrowser(sandbox);
      page = browser.pages()[0] ?? (await browser.newPage());
      await page.goto(`${server.url}/?folder=${encodeURIComponent(ws)}`);
    });
    const p = (): Page => page!;

    await checks.step('the workbench opens the folder', async () => {
      await p()
        .locator('.explorer-folders-view .monaco-list-row', { hasText: 'new-skill' })
        .waitFor({ timeout: 90_000 });
    });
    await checks.step('the SkillOpt view lists the runs already in the workspace', async () => {
      await p().locator('.activitybar .action-item a[aria-label^="SkillOpt"]').first().click();
      await row(p(), 'searchqa_mini').waitFor({ timeout: 60_000 });
    });
    await shot('01-runs-view.png');

    await checks.step(
      'Optimize This Skill on a SKILL.md without a config starts the guided setup',
      async () => {
        await p().keyboard.press('Control+P');
        await p().locator('.quick-input-widget input').fill('new-skill/SKILL.md');
        await p().locator('.quick-input-list .monaco-list-row', { hasText: 'SKILL.md' }).first().waitFor();
        await p().keyboard.press('Enter');
        await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).waitFor();
        await palette(p(), 'SkillOpt: Optimize This Skill');
        await p()
          .locator('.quick-input-widget .quick-input-title', { hasText: 'SkillOpt setup (1/5)' })
          .waitFor({ timeout: 30_000 });
      },
    );
    await shot('02-setup-tasks.png');

    await checks.step('the guided setup writes skillopt.yaml and asks to confirm the estimate', async () => {
      await pick(p(), '(1/5)', 'tasks.jsonl');
      await pick(p(), '(2/5)', /^exact/);
      await pick(p(), '(3/5)', 'Simulated models');
      await pick(p(), '(4/5)', 'Same as the target');
      await p().locator('.quick-input-widget .quick-input-title', { hasText: '(5/5)' }).waitFor();
      await p().locator('.quick-input-widget input').fill('1');
      await p().keyboard.press('Enter');
      await p().locator('.tabs-container .tab', { hasText: 'skillopt.yaml' }).waitFor({ timeout: 30_000 });
      await p().locator('.monaco-dialog-box', { hasText: 'model calls' }).waitFor({ timeout: 60_000 });
    });
    await shot('03-confirm-estimate.png');
    await checks.check(
      'the estimate says what the gate can detect and what the no-skill baseline costs',
      async () => {
        const text = await p().locator('.monaco-dialog-box', { hasText: 'model calls' }).innerText();
        assert.match(
          text,
          /Gate: strict; \d+ items × 1 repeat: only Δ ≥ 0\.\d+ can be told from noise at alpha 0\.05/,
        );
        assert.match(text, /The target alone \(no skill\) is scored at the end: \d+ of those calls\./);
      },
    );

    await checks.step('Start Training puts the new run in the Runs tree', async () => {
      const dialog = p().locator('.monaco-dialog-box', { hasText: 'model calls' });
      await dialog.locator('.monaco-button', { hasText: 'Start Training' }).click();
      await row(p(), /new-skill_\d{8}_\d{6}/).waitFor({ timeout: 60_000 });
    });
    // Mid-run: the status bar counts steps with a spinner, and the run's row says it is running. Both
    // are watched from the start, and so is the finished status (it lingers 15 s only): on a loaded
    // machine one wait may take as long as the rest of the run.
    const watch = (what: Promise<void>): Promise<Error | undefined> =>
      what.then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      );
    const midStatus = watch(
      p()
        .locator('.statusbar-item', { hasText: /SkillOpt step \d+\/\d+ · best/ })
        .first()
        .waitFor({ timeout: 60_000 }),
    );
    const midRow = watch(row(p(), /new-skill_\d{8}_\d{6}.*running/).waitFor({ timeout: 60_000 }));
    const finishedStatus = watch(
      p().locator('.statusbar-item', { hasText: 'SkillOpt finished' }).first().waitFor({ timeout: 180_000 }),
    );
    const settled = async (watched: Promise<Error | undefined>): Promise<void> => {
      const error = await watched;
      if (error) throw error;
    };
    await checks.check('mid-run, the status bar counts steps and shows the best score', () =>
      settled(midStatus),
    );
    await checks.check("mid-run, the run's row says running", () => settled(midRow));
    await checks.check('mid-run, the tree shows Epoch 1', async () => {
      await labelled(p(), 'Epoch 1').waitFor({ timeout: 30_000 });
    });
    await shot('04-training.png');

    const run = (): ReturnType<Page['locator']> => row(p(), /new-skill_\d{8}_\d{6}.*finished/);
    await checks.step('the run finishes and its row says so', async () => {
      await run().waitFor({ timeout: 120_000 });
    });
    await checks.check('the status bar says SkillOpt finished', () => settled(finishedStatus));
    await shot('05-finished.png');

    await checks.step("a step's Candidate diff opens in the diff editor", async () => {
      // Drill down to a step (a live run's rows start expanded).
      const epoch = labelled(p(), 'Epoch 1');
      const step = labelled(p(), 'Step 1');
      if (!(await epoch.isVisible())) await run().click();
      if (!(await step.isVisible())) await epoch.click();
      await step.click();
      await row(p(), 'Candidate diff').click();
      await p().locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
      await p().locator('.tabs-container .tab', { hasText: 'Step 1' }).waitFor();
    });
    await shot('06-step-diff.png');
  } finally {
    if (checks.results().failed && server) console.error(`--- code-server log ---\n${server.log()}`);
    await browser?.close().catch(() => undefined);
    server?.stop();
    removeDir(sandbox);
  }
  return report(checks.results());
}

void main().then((code) => process.exit(code));
