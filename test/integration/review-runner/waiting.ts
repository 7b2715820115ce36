/**
 * A run waiting for the person, in Chromium, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: a human-first `sim` run started from the Runs view pauses
 * on a step; the status bar, a notification with Review / Accept / Reject, the view's badge and the
 * run's row say so. SKILL.md reverted and closed without a decision comes back into the pending
 * review by a click on the status bar item, on the step's row and on the run row's bell (nothing
 * unreviewed on disk); the notification's Accept decides the step; the run's right-click Show Gate
 * History opens its panel;
 * after Stop nothing says the run waits any more, and the waiting notice left in the center
 * decides nothing when clicked; the Output channel has the pause, the verdict and the stop; Quick
 * Open leaves the run folder out. Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/waiting.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/waiting-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { pickMenuItem, runThemes, themeSession, trainHouseStyle, webview, widenSideBar } from './ui';
import type { Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'waiting-screenshots'));
const WAITS = /step (\d+) waits for your review/;

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-waiting', out, {
    'files.autoSave': 'off',
    'skillopt.reviewMode': 'human-first',
  });
  const { tag, sandbox, checks, p } = s;
  const ws = join(sandbox, 'house-style');
  const skill = join(ws, 'SKILL.md');
  const original = readFileSync(join(repoRoot, 'examples', 'house-style', 'SKILL.md'), 'utf8');
  const status = (page: Page): ReturnType<Page['locator']> =>
    page.locator('.statusbar-item', { hasText: WAITS }).first();
  const lens = (): ReturnType<Page['locator']> =>
    p().locator('.codelens-decoration', { hasText: 'Accept' }).first();
  const runRow = (): ReturnType<Page['locator']> =>
    p()
      .locator('.monaco-list-row', { hasText: /^house-style_/ })
      .first();
  const notice = (text: string): ReturnType<Page['locator']> =>
    p().locator('.notifications-center .notification-list-item', { hasText: text }).first();
  const badge = (): ReturnType<Page['locator']> =>
    p().locator('.activitybar .action-item', { has: p().locator('.action-label[aria-label*="SkillOpt"]') });
  /** Accepts step `n` from its waiting notice; done once the status bar no longer says it waits. */
  const acceptFromNotice = async (n: string): Promise<void> => {
    const item = notice(`until you review step ${n} (`);
    await item.waitFor({ timeout: 20_000 });
    await item.locator('.monaco-button', { hasText: /^Accept$/ }).click();
    await p()
      .locator('.statusbar-item', { hasText: `step ${n} waits for your review` })
      .waitFor({ state: 'detached', timeout: 60_000 });
  };
  let step = '';
  try {
    await checks.step(`${tag} a human-first run pauses on a step`, async () => {
      process.env.SKILLOPT_SIM_LATENCY_MS = '30';
      const { server, page } = await s.launch();
      await trainHouseStyle(page, server, ws);
      await widenSideBar(page);
      await status(p()).waitFor({ timeout: 90_000 });
      step = WAITS.exec(await status(p()).innerText())![1]!;
      // The server runs with the smoke-test driver, which keeps notifications out of toasts: the
      // center shows the one a person sees as a toast.
      await palette(p(), 'Notifications: Show Notifications');
      await notice(`until you review step ${step}`).waitFor({ timeout: 20_000 });
      await p().mouse.move(5, 5);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `waiting-${theme}.png`), `${tag} waiting`);

    await checks.check(
      `${tag} the status bar says the run waits, in plain words for a screen reader`,
      async () => {
        const name = (await status(p()).locator('[aria-label]').first().getAttribute('aria-label')) ?? '';
        assert.match(name, new RegExp(`paused: step ${step} waits for your review`));
        assert.doesNotMatch(name, /\$\(|\*\*/);
        assert.ok(await status(p()).locator('.codicon-bell').count(), 'the bell icon');
      },
    );
    await checks.check(`${tag} a notification offers Review, Accept and Reject`, async () => {
      const toast = notice(`until you review step ${step}`);
      for (const b of ['Review', 'Accept', 'Reject'])
        assert.equal(await toast.locator('.monaco-button', { hasText: new RegExp(`^${b}$`) }).count(), 1, b);
    });
    await checks.check(`${tag} the SkillOpt view's badge and the run's row say one run waits`, async () => {
      assert.equal((await badge().locator('.badge-content').innerText()).trim(), '1');
      assert.match(await runRow().innerText(), new RegExp(`waiting for your review of step ${step}`));
    });

    await checks.step(`${tag} reverted and closed, the status bar item brings the review back`, async () => {
      await p().keyboard.press('Escape');
      await lens().waitFor({ timeout: 30_000 });
      await palette(p(), 'View: Revert and Close Editor');
      await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).waitFor({ state: 'detached' });
      assert.equal(readFileSync(skill, 'utf8'), original, 'nothing unreviewed on disk');
      await status(p()).click();
      await lens().waitFor({ timeout: 30_000 });
      await p().mouse.move(5, 5);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `waiting-reopened-${theme}.png`), `${tag} reopened`);
    await checks.check(
      `${tag} the lenses speak plain words, the engine's terms left to the hover`,
      async () => {
        const lenses = (await p().locator('.codelens-decoration').allInnerTexts()).join(' | ');
        assert.match(lenses, /(Insert after a line|Add at the end|Replace)[^|]* · from failed tasks/);
        assert.doesNotMatch(lenses, /insert_after|append|support \d|source_type|placeholder/);
      },
    );

    await checks.step(`${tag} reverted and closed again, the waiting step's row brings it back`, async () => {
      await palette(p(), 'View: Revert and Close Editor');
      await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).waitFor({ state: 'detached' });
      assert.equal(readFileSync(skill, 'utf8'), original, 'nothing unreviewed on disk');
      await p()
        // Case-sensitive (a string would also match the run's row, "… of step N").
        .locator('.monaco-list-row', { hasText: new RegExp(`Step ${step}\\s*waiting for your review`) })
        .first()
        .click();
      await lens().waitFor({ timeout: 30_000 });
    });

    await checks.step(`${tag} and the bell on the run's row brings it back`, async () => {
      await palette(p(), 'View: Revert and Close Editor');
      await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).waitFor({ state: 'detached' });
      await runRow().hover();
      const bell = runRow().locator('.action-label[aria-label*="Review the Step the Run Waits For"]');
      await bell.click({ timeout: 10_000 });
      await lens().waitFor({ timeout: 30_000 });
      await runRow().hover();
      await p().waitForTimeout(500);
    });
    await checks.screenshot(s.page(), join(out, `waiting-row-${theme}.png`), `${tag} row action`);

    await checks.step(`${tag} the notification's Accept decides the step`, async () => {
      await palette(p(), 'Notifications: Show Notifications');
      await acceptFromNotice(step);
      await p().keyboard.press('Escape');
    });

    await checks.step(`${tag} right-click on the run, Show Gate History opens its panel`, async () => {
      await runRow().click({ button: 'right' });
      await pickMenuItem(p(), 'Show Gate History');
      await webview(p()).locator('#app h1', { hasText: 'Gate History' }).waitFor({ timeout: 30_000 });
      await p()
        .locator('.tabs-container .tab', { hasText: /Gate History: house-style_/ })
        .waitFor({ timeout: 10_000 });
      await palette(p(), 'Notifications: Show Notifications');
      await p().waitForTimeout(500);
      assert.equal(
        await p()
          .locator('.notifications-center .notification-list-item', { hasText: 'not in this workspace' })
          .count(),
        0,
        'the run was found',
      );
      await p().keyboard.press('Escape');
    });

    await checks.step(`${tag} after Stop nothing says the run waits`, async () => {
      // Out of the webview (it keeps F1 to itself): empty space in the Runs view.
      await p()
        .locator('.part.sidebar')
        .click({ position: { x: 200, y: 290 } });
      await palette(p(), 'SkillOpt: Stop Run');
      await p()
        .locator('.part.sidebar')
        .click({ position: { x: 200, y: 290 } });
      await palette(p(), 'Notifications: Show Notifications');
      await notice('stopped as you asked').waitFor({ timeout: 60_000 });
      await p().waitForTimeout(1500);
      await p().mouse.move(5, 5);
    });
    await checks.screenshot(s.page(), join(out, `stopped-${theme}.png`), `${tag} stopped`);
    await checks.check(`${tag} the status bar, the row and Gate History no longer say it waits`, async () => {
      assert.equal(await p().locator('.statusbar-item', { hasText: 'waits for your review' }).count(), 0);
      assert.doesNotMatch(await runRow().innerText(), /waiting for your review/);
      const history = await webview(p()).locator('#app').innerText();
      assert.doesNotMatch(history, /waiting for your review/, history.slice(0, 600));
      // (The Explorer's badge counts the unsaved SKILL.md: the lines of the accepted step.)
      assert.equal(await badge().locator('.badge-content:visible').count(), 0, 'the badge cleared');
    });
    await checks.step(
      `${tag} the Output channel follows the run: the pause, the verdict, the stop`,
      async () => {
        await p()
          .locator('.part.sidebar')
          .click({ position: { x: 200, y: 290 } });
        await palette(p(), 'Notifications: Hide Notifications');
        await palette(p(), 'SkillOpt: Show Log');
        const lines = p().locator('.part.panel .monaco-editor .view-lines');
        await lines.filter({ hasText: 'stopped as you asked' }).waitFor({ timeout: 20_000 });
        // The panel wraps long lines and renders only what it shows: the last lines, joined.
        const text = (await lines.innerText()).replace(/\s+/g, ' ');
        assert.match(text, /\[run\] house-style_\S+: step \d+ waits for your review/);
        // The verdict of the step accepted from the notification, with its score (not "x against x").
        assert.match(
          text,
          new RegExp(
            `\\[run\\] house-style_\\S+: step ${step} accepted[^(]*\\(scored \\d\\.\\d{3}; best \\d\\.\\d{3}\\)`,
          ),
        );
        assert.match(text, /\[run\] house-style_\S+: stopped as you asked; resume with Resume Run/);
        await p().mouse.move(5, 5);
        await p().waitForTimeout(500);
      },
    );
    await checks.screenshot(s.page(), join(out, `output-${theme}.png`), `${tag} output`);

    await checks.step(`${tag} a waiting notice clicked after Stop decides nothing, and says so`, async () => {
      // The notices of the run stay in the center (VS Code cannot take them back): their buttons must not act.
      const stale = p()
        .locator('.notifications-center .notification-list-item', { hasText: 'until you review step' })
        .first();
      const before = await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).innerText();
      await palette(p(), 'Notifications: Show Notifications');
      await stale.waitFor({ timeout: 10_000 });
      const waited = /review step (\d+)/.exec(await stale.innerText())![1]!;
      await stale.locator('.monaco-button', { hasText: /^Accept$/ }).click();
      await notice(`no longer waits on step ${waited}`).waitFor({ timeout: 20_000 });
      assert.match(
        await notice(`no longer waits on step ${waited}`).innerText(),
        /nothing was accepted\. It is not waiting for you now\./,
      );
      assert.equal(await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).innerText(), before);
      assert.equal(await p().locator('.statusbar-item', { hasText: 'waits for your review' }).count(), 0);
    });
    await checks.step(`${tag} resumed, the run asks its step again, with one notice for it`, async () => {
      await p().keyboard.press('Escape');
      await p()
        .locator('.part.sidebar')
        .click({ position: { x: 200, y: 290 } });
      await palette(p(), 'SkillOpt: Resume Run');
      const again = p().locator('.statusbar-item', { hasText: WAITS }).first();
      await again.waitFor({ timeout: 90_000 });
      const asked = WAITS.exec(await again.innerText())![1]!;
      await palette(p(), 'Notifications: Show Notifications');
      // VS Code shows one notice per text: the stopped run's is replaced by the resumed run's.
      const notices = p().locator('.notifications-center .notification-list-item', {
        hasText: `until you review step ${asked} (`,
      });
      await notices.first().waitFor({ timeout: 20_000 });
      assert.equal(await notices.count(), 1, 'one notice for the question asked now');
      await p().mouse.move(5, 5);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `asked-again-${theme}.png`), `${tag} asked again`);
    await checks.step(
      `${tag} the notice's Accept answers the question asked now (one naming the stopped run's is refused)`,
      async () => {
        const asked = WAITS.exec(
          await p().locator('.statusbar-item', { hasText: WAITS }).first().innerText(),
        )![1]!;
        await acceptFromNotice(asked);
        assert.equal(await notice('no longer asks the question').count(), 0, 'no stale answer');
        await p().keyboard.press('Escape');
      },
    );
    await checks.check(`${tag} Quick Open lists the skill, not the copies in the run folder`, async () => {
      await p().keyboard.press('Escape');
      await p().keyboard.press('Control+P');
      await p().locator('.quick-input-widget input').fill('skill');
      await p().locator('.quick-input-list .monaco-list-row', { hasText: 'SKILL.md' }).first().waitFor();
      await p().waitForTimeout(800);
      const rows = await p().locator('.quick-input-list .monaco-list-row').allInnerTexts();
      assert.deepEqual(
        rows.filter((r) => r.includes('.skillopt')),
        [],
        `no run-folder file: ${rows.join(' | ')}`,
      );
      await p().keyboard.press('Escape');
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
