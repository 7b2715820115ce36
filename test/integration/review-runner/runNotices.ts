/**
 * What a run says while it goes, in Chromium, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: a run stopped at its token cap (from the CLI) is resumed
 * from the Runs view after its SKILL.md was edited, and the engine's warning that it goes on from
 * its own copy of the skill reaches the person as a notification; then a new run with the paired
 * gate (auto review drawn in the file) shows a verdict the gate could not tell from noise as such,
 * not as a rejection. Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/runNotices.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/run-notices-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RUN_FILE, RunLayout } from '../../../src/engine/store/layout';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { closeEditors, openSkillOpt, quickOpen, runThemes, themeSession, widenSideBar } from './ui';
import type { Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'run-notices-screenshots'));
const RUN = 'house-style_capped';
const WARNING = 'the skill file changed since this run started';

/**
 * The example with one step and the paired gate at an alpha no 19-item gain can reach (so its
 * verdict is inconclusive), trained from the CLI until its token cap stops it after the baseline.
 */
function cappedRun(ws: string): { skill: string; original: string } {
  cpSync(join(repoRoot, 'examples', 'house-style'), ws, { recursive: true });
  const config = join(ws, 'skillopt.yaml');
  const yaml = readFileSync(config, 'utf8')
    .replace('num_epochs: 2', 'num_epochs: 1')
    .replace('batch_size: 8', 'batch_size: 24')
    .replace('  gate_metric: hard', '  gate_metric: hard\n  gate_test: paired\n  alpha: 0.0001')
    .replace('  learning_rate: 3', '  learning_rate: 3\n  use_slow_update: false\n  use_meta_skill: false');
  writeFileSync(config, yaml);
  const run = join(ws, '.skillopt', 'runs', RUN);
  const r = spawnSync(
    process.execPath,
    [
      join(repoRoot, 'dist', 'cli.js'),
      'train',
      config,
      '--out',
      run,
      '--cfg-options',
      'limits.max_tokens=500',
    ],
    { encoding: 'utf8' },
  );
  const layout = new RunLayout(run);
  if (!existsSync(layout.file(RUN_FILE.state)) || existsSync(layout.file(RUN_FILE.summary)))
    throw new Error(`the capped run did not stop at its cap (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  const skill = join(ws, 'SKILL.md');
  return { skill, original: readFileSync(skill, 'utf8') };
}

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-run-notices', out, {
    'skillopt.reviewMode': 'auto',
    'skillopt.followRun': true,
  });
  const { tag, sandbox, checks, p } = s;
  const ws = join(sandbox, 'house-style');
  // Toasts hide after a while; the notifications center keeps them.
  const notice = (text: string): ReturnType<ReturnType<typeof p>['locator']> =>
    p().locator('.notifications-center .notification-list-item', { hasText: text }).first();
  let skill = { skill: '', original: '' };
  try {
    await checks.step(`${tag} Resume Run on a run whose SKILL.md was edited since`, async () => {
      skill = cappedRun(ws);
      appendFileSync(skill.skill, '\n- A rule the person added while the run was stopped.\n');
      const { server, page } = await s.launch();
      await page.setViewportSize({ width: 1280, height: 720 });
      await openSkillOpt(page, server, ws, 'SKILL.md');
      await widenSideBar(page);
      const row = p().locator('.monaco-list-row', { hasText: RUN }).first();
      await row.waitFor({ timeout: 60_000 });
      // Resume is the row's inline action.
      await row.hover();
      await row.locator('.action-label[aria-label*="Resume"]').first().click({ timeout: 10_000 });
      const confirm = p().locator('.monaco-dialog-box .monaco-button', {
        hasText: 'Resume With This Config',
      });
      if (
        await confirm
          .first()
          .isVisible({ timeout: 5_000 })
          .catch(() => false)
      )
        await confirm.first().click();
      await p()
        .locator('.monaco-list-row', { hasText: RUN })
        .first()
        .locator('.label-description', { hasText: /finished/ })
        .waitFor({ timeout: 90_000 });
      await palette(p(), 'Notifications: Show Notifications');
      await notice(WARNING).waitFor({ timeout: 20_000 });
      await p().mouse.move(640, 300);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `run-warning-${theme}.png`), `${tag} run warning`);
    await checks.check(
      `${tag} the warning names the run and what it goes on from, with Show Log`,
      async () => {
        const text = (await notice(WARNING).innerText()).replace(/\s+/g, ' ');
        assert.match(text, new RegExp(`SkillOpt: ${RUN}: ${WARNING}; the run goes on from its own copy`));
        assert.ok((await notice(WARNING).locator('.monaco-button', { hasText: 'Show Log' }).count()) > 0);
      },
    );

    await checks.step(`${tag} a new run's inconclusive step, drawn in the skill`, async () => {
      await palette(p(), 'Notifications: Hide Notifications');
      writeFileSync(skill.skill, skill.original);
      await closeEditors(p());
      await quickOpen(p(), 'SKILL.md');
      // The editor's title bar action (the Runs view lists a run, so it shows no welcome button).
      await p()
        .locator('.editor-actions .action-label[aria-label*="Optimize This Skill"]')
        .first()
        .click({ timeout: 60_000 });
      const dialog = p().locator('.monaco-dialog-box', { hasText: 'model calls' });
      await dialog.locator('.monaco-button', { hasText: 'Start Training' }).click({ timeout: 60_000 });
      await p()
        .locator('.codelens-decoration', { hasText: 'could not tell' })
        .first()
        .waitFor({ timeout: 90_000 });
      await p().mouse.move(1200, 700);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(
      s.page(),
      join(out, `inconclusive-lens-${theme}.png`),
      `${tag} inconclusive lens`,
    );
    await checks.check(`${tag} the lens says the gate could not tell, not that it rejected`, async () => {
      const lenses = (await p().locator('.codelens-decoration').allInnerTexts()).join(' | ');
      assert.match(lenses, /The gate could not tell .* from noise \(.* against .*\); not kept/);
      assert.match(lenses, /Accept Anyway/);
      assert.doesNotMatch(lenses, /Gate rejected/);
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
