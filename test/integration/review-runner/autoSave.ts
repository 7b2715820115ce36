/**
 * Auto-save during a review in Chromium, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: a human-first `sim` run started from the palette on the
 * house-style example with `files.autoSave: afterDelay`; the review's lines are shown and the first
 * auto-save warns, once, that the file on disk holds them, offering to hold auto-save while lines are
 * undecided (then the lines are marked as problems) or to turn it off. Each check is named; prints
 * `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/autoSave.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/auto-save-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { runThemes, themeSession, trainHouseStyle } from './ui';
import type { Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'auto-save-screenshots'));
const WARNING = 'auto-save is on';

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-auto-save', out, {
    'files.autoSave': 'afterDelay',
    'files.autoSaveDelay': 500,
    'skillopt.reviewMode': 'human-first',
  });
  const { tag, sandbox, checks, p } = s;
  const ws = join(sandbox, 'house-style');
  const notice = (): ReturnType<ReturnType<typeof p>['locator']> =>
    p().locator('.notifications-center .notification-list-item', { hasText: WARNING }).first();
  try {
    await checks.step(`${tag} a human-first run waits with the review's lines in SKILL.md`, async () => {
      const { server, page } = await s.launch();
      await trainHouseStyle(page, server, ws);
      await p().locator('.codelens-decoration', { hasText: 'Accept' }).first().waitFor({ timeout: 90_000 });
    });

    await checks.step(`${tag} the first auto-save warns once, with a way to turn it off`, async () => {
      await p().waitForTimeout(2000);
      await palette(p(), 'Notifications: Show Notifications');
      await notice().waitFor({ timeout: 20_000 });
      await p().mouse.move(5, 5);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `auto-save-${theme}.png`), `${tag} auto-save`);
    await checks.check(
      `${tag} the warning says what is on disk and offers to turn auto-save off`,
      async () => {
        const text = (await notice().innerText()).replace(/\s+/g, ' ');
        assert.match(text, /SKILL\.md on disk holds the \d+ undecided lines? of step \d+/);
        assert.match(text, /Turn Off Auto-Save turns it off in this workspace/);
        assert.match(text, /Hold Auto-Save skips the file while lines are undecided/);
        assert.equal(
          await p().locator('.notifications-center .notification-list-item', { hasText: WARNING }).count(),
          1,
          'told more than once',
        );
        // What the warning says is so: the file on disk holds the review's lines.
        assert.notEqual(
          readFileSync(join(ws, 'SKILL.md'), 'utf8'),
          readFileSync(join(repoRoot, 'examples', 'house-style', 'SKILL.md'), 'utf8'),
        );
      },
    );

    await checks.step(`${tag} "Hold Auto-Save" marks the undecided lines as problems`, async () => {
      await notice()
        .locator('.monaco-button', { hasText: /^Hold Auto-Save$/ })
        .click();
      await palette(p(), 'View: Focus Problems (Errors, Warnings, Infos)');
      await p()
        .locator('.markers-panel .monaco-list-row', { hasText: 'undecided line' })
        .first()
        .waitFor({ timeout: 20_000 });
      await p().mouse.move(5, 5);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `auto-save-held-${theme}.png`), `${tag} auto-save held`);
    await checks.check(`${tag} the marks say why auto-save waits`, async () => {
      const row = p().locator('.markers-panel .monaco-list-row', { hasText: 'undecided line' }).first();
      assert.match(
        (await row.innerText()).replace(/\s+/g, ' '),
        /accept or reject\. Auto-save leaves SKILL\.md alone/,
      );
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
