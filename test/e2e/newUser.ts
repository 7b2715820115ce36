/**
 * A new user's first run, in Chromium against a clean code-server with the packaged .vsix
 * installed: open the Runs view, open a SKILL.md that has no config, run Optimize This Skill, walk
 * the guided setup, confirm the estimate, watch the tree and the status bar fill, open a step's
 * diff. Screenshots go to .cache/e2e-screenshots/ (or SKILLOPT_SHOTS); look at them.
 *
 *   node --import tsx test/e2e/newUser.ts path/to/skillopt.vsix
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
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

async function main(): Promise<void> {
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  const install = installVsCode();
  const sandbox = makeSandbox('skillopt-e2e-');
  const ws = makeWorkspace(sandbox, undefined);
  console.log(installVsix(install, sandbox, vsix));
  // Slow the simulated models down (the engine process inherits this), so the run is still going
  // when the tree and the status bar are checked mid-run.
  process.env.SKILLOPT_SIM_LATENCY_MS = '120';
  const server = await startCodeServer(install, sandbox);
  console.log(`code-server on ${server.url} (${elapsed()})`);
  const browser = await launchBrowser(sandbox);
  const page = browser.pages()[0] ?? (await browser.newPage());
  const shot = async (name: string): Promise<void> => {
    // Let fade-in animations (quick input, dialogs) finish first.
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(shots, name) });
    console.log(`screenshot ${join(shots, name)} (${elapsed()})`);
  };
  let ok = false;
  try {
    await page.goto(`${server.url}/?folder=${encodeURIComponent(ws)}`);
    await page
      .locator('.explorer-folders-view .monaco-list-row', { hasText: 'new-skill' })
      .waitFor({ timeout: 90_000 });
    console.log(`workbench ready (${elapsed()})`);

    // The SkillOpt activity bar container lists runs already in the workspace.
    await page.locator('.activitybar .action-item a[aria-label^="SkillOpt"]').first().click();
    await row(page, 'searchqa_mini').waitFor({ timeout: 60_000 });
    await shot('01-runs-view.png');

    // Open the new skill (it has no skillopt.yaml) and run the command.
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').fill('new-skill/SKILL.md');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'SKILL.md' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.tabs-container .tab', { hasText: 'SKILL.md' }).waitFor();
    await palette(page, 'SkillOpt: Optimize This Skill');

    // Guided setup: task file, scorer, target, optimizer, epochs.
    await page
      .locator('.quick-input-widget .quick-input-title', { hasText: 'SkillOpt setup (1/5)' })
      .waitFor({ timeout: 30_000 });
    await shot('02-setup-tasks.png');
    await pick(page, '(1/5)', 'tasks.jsonl');
    await pick(page, '(2/5)', /^exact/);
    await pick(page, '(3/5)', 'Simulated models');
    await pick(page, '(4/5)', 'Same as the target');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: '(5/5)' }).waitFor();
    await page.locator('.quick-input-widget input').fill('1');
    await page.keyboard.press('Enter');

    // The config is written and shown; validation ends in the estimate to confirm.
    await page.locator('.tabs-container .tab', { hasText: 'skillopt.yaml' }).waitFor({ timeout: 30_000 });
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'model calls' });
    await dialog.waitFor({ timeout: 60_000 });
    await shot('03-confirm-estimate.png');
    await dialog.locator('.monaco-button', { hasText: 'Start Training' }).click();

    // The run appears in the tree and the status bar reports it.
    await row(page, /new-skill_\d{8}_\d{6}/).waitFor({ timeout: 60_000 });
    // Mid-run: the status bar counts steps with a spinner, and the run's row says it is running.
    await page
      .locator('.statusbar-item', { hasText: /SkillOpt step \d+\/\d+ · best/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await row(page, /new-skill_\d{8}_\d{6}.*running/).waitFor({ timeout: 30_000 });
    await labelled(page, 'Epoch 1').waitFor({ timeout: 30_000 });
    await shot('04-training.png');
    const run = row(page, /new-skill_\d{8}_\d{6}.*finished/);
    await run.waitFor({ timeout: 120_000 });
    await page
      .locator('.statusbar-item', { hasText: 'SkillOpt finished' })
      .first()
      .waitFor({ timeout: 30_000 });
    await shot('05-finished.png');

    // Drill down to a step and open its candidate diff (a live run's rows start expanded).
    const epoch = labelled(page, 'Epoch 1');
    const step = labelled(page, 'Step 1');
    if (!(await epoch.isVisible())) await run.click();
    if (!(await step.isVisible())) await epoch.click();
    await step.click();
    await row(page, 'Candidate diff').click();
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
    await page.locator('.tabs-container .tab', { hasText: 'Step 1' }).waitFor();
    await shot('06-step-diff.png');
    ok = true;
    console.log('1 passed, 0 failed');
  } catch (err) {
    await shot('99-failure.png').catch(() => undefined);
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    console.error(`--- code-server log ---\n${server.log()}`);
    console.log('0 passed, 1 failed');
  } finally {
    await browser.close().catch(() => undefined);
    server.stop();
    removeDir(sandbox);
  }
  process.exit(ok ? 0 : 1);
}

void main();
