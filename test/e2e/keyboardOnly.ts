/**
 * The main flow with the keyboard only, in Chromium against code-server with this checkout's
 * extension: Quick Open a SKILL.md without a config, Optimize This Skill from the Command Palette,
 * the guided setup typed into its quick picks, Start Training from the dialog, every step the
 * human-first run waits on reviewed from the palette, Apply Best Skill and its notification, then
 * the accessible names a screen reader announces: the status bar item, the review's lenses (as the
 * keyboard reaches them), the Runs tree rows and the Gate History controls. No mouse click
 * anywhere. Each check is counted by `npm test`.
 *
 *   node esbuild.mjs && node --import tsx test/e2e/keyboardOnly.ts
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { Checks, report } from '../integration/harness/checks';
import {
  installVsCode,
  launchBrowser,
  makeSandbox,
  palette,
  repoRoot,
  startServer,
  type Server,
} from '../integration/harness/host';
import { endSession, openWorkbench, webview } from '../integration/review-runner/ui';

const shots = resolve(process.env.SKILLOPT_SHOTS ?? join(repoRoot, '.cache', 'keyboard-screenshots'));

/** Types into the open quick pick (or input box) and presses Enter: the keyboard's way to pick. */
async function typeAndEnter(page: Page, title: string, text: string): Promise<void> {
  await page
    .locator('.quick-input-widget .quick-input-title', { hasText: title })
    .waitFor({ timeout: 30_000 });
  const input = page.locator('.quick-input-widget input');
  await input.fill(text);
  await page.waitForTimeout(300);
  await page.keyboard.press('Enter');
}

/** What the page's elements offer for their accessible name (this project compiles without DOM types). */
interface Named {
  getAttribute(name: string): string | null;
  textContent: string | null;
  outerHTML: string;
}

/** The accessible name of the focused row of the focused list or tree. */
async function focusedRowName(page: Page): Promise<string> {
  const row = page.locator('.monaco-list:focus-within .monaco-list-row.focused').first();
  await row.waitFor({ timeout: 10_000 });
  return (await row.getAttribute('aria-label')) ?? '';
}

/** The palette, after Escape closes whatever quick input or toast a moment ago left focused. */
async function command(page: Page, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Escape');
    await page.waitForTimeout(200);
    try {
      await palette(page, name);
      return;
    } catch (err) {
      // A command whose `when` depends on the focused editor can lag the focus by a moment.
      if (attempt === 3) throw err;
      await page.waitForTimeout(1000);
    }
  }
}

async function main(): Promise<number> {
  mkdirSync(shots, { recursive: true });
  const sandbox = makeSandbox('skillopt-keyboard-', {
    settings: {
      'skillopt.reviewMode': 'human-first',
      'files.autoSave': 'off',
      'editor.minimap.enabled': false,
    },
  });
  const ws = join(sandbox, 'workspace');
  const skillDir = join(ws, 'kb-skill');
  for (const f of ['SKILL.md', 'tasks.jsonl'])
    cpSync(join(repoRoot, 'examples', 'house-style', f), join(skillDir, f));
  const skillPath = join(skillDir, 'SKILL.md');
  cpSync(skillPath, skillPath + '.orig');
  let server: Server | undefined;
  let browser: BrowserContext | undefined;
  let page: Page | undefined;
  const checks = new Checks(async () => {
    await page?.screenshot({ path: join(shots, 'failure.png') });
  });
  const p = (): Page => page!;
  const status = (text: string | RegExp): ReturnType<Page['locator']> =>
    p().locator('.statusbar-item', { hasText: text }).first();
  try {
    await checks.step('the workbench opens the folder', async () => {
      process.env.SKILLOPT_SIM_LATENCY_MS = '30';
      server = await startServer(installVsCode(), sandbox);
      browser = await launchBrowser(sandbox);
      page = browser.pages()[0] ?? (await browser.newPage());
      await openWorkbench(p(), server, ws);
      await p().locator('.explorer-folders-view .monaco-list-row', { hasText: 'kb-skill' }).first().waitFor({
        timeout: 90_000,
      });
    });

    await checks.step('Quick Open and the palette start Optimize This Skill on the SKILL.md', async () => {
      await p().keyboard.press('Control+P');
      await p().locator('.quick-input-widget input').fill('kb-skill/SKILL.md');
      await p().locator('.quick-input-list .monaco-list-row', { hasText: 'SKILL.md' }).first().waitFor();
      await p().keyboard.press('Enter');
      await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).first().waitFor();
      // Focus in the editor (Ctrl+1), so the palette offers the commands of a Markdown file.
      await p().keyboard.press('Control+1');
      await command(p(), 'SkillOpt: Optimize This Skill');
    });

    await checks.step('the guided setup is walked by typing into its quick picks', async () => {
      await typeAndEnter(p(), '(1/5)', 'tasks.jsonl');
      await typeAndEnter(p(), '(2/5)', 'exact');
      await typeAndEnter(p(), '(3/5)', 'Simulated models');
      await typeAndEnter(p(), '(4/5)', 'Same as the target');
      await typeAndEnter(p(), '(5/5)', '1');
      await p().locator('.monaco-dialog-box', { hasText: 'model calls' }).waitFor({ timeout: 60_000 });
    });

    await checks.step('Enter on the estimate dialog starts training', async () => {
      // The dialog puts focus on its first button, Start Training.
      const focused = p().locator('.monaco-dialog-box .monaco-button:focus');
      assert.match((await focused.textContent()) ?? '', /Start Training/);
      await p().keyboard.press('Enter');
      await status(/SkillOpt/).waitFor({ timeout: 30_000 });
    });

    await checks.step('every step the run waits on is reviewed and accepted from the palette', async () => {
      const waiting = status(/waits for your review/);
      const finished = status('SkillOpt finished');
      for (let reviewed = 0; ;) {
        await Promise.race([waiting.waitFor({ timeout: 120_000 }), finished.waitFor({ timeout: 120_000 })]);
        if (await finished.isVisible()) {
          assert.ok(reviewed > 0, 'the run waited on at least one step');
          return;
        }
        // The accessible name is plain words, not the icon codes and Markdown of the status text.
        const name = (await waiting.locator('[aria-label]').first().getAttribute('aria-label')) ?? '';
        const step = /paused: step (\d+) waits for your review/.exec(name)?.[1];
        assert.ok(step, `the status bar's accessible name says the run waits: ${name}`);
        assert.doesNotMatch(name, /\$\(|\*\*/);
        await command(p(), 'SkillOpt: Review the Step the Run Waits For');
        await p()
          .locator('.codelens-decoration', { hasText: /Accept/ })
          .first()
          .waitFor({ timeout: 30_000 });
        if (reviewed === 0) {
          await p().screenshot({ path: join(shots, 'review.png') });
          // The lenses as the keyboard reaches them: their commands for the current line, by name.
          await p().keyboard.press('Control+Home');
          await command(p(), 'Show CodeLens Commands for Current Line');
          const rows = p().locator('.quick-input-list .monaco-list-row');
          await rows.first().waitFor({ timeout: 10_000 });
          const names = await rows.evaluateAll((els: Named[]) =>
            els.map((e) => e.getAttribute('aria-label') ?? ''),
          );
          assert.ok(
            names.some((n) => /^Accept All/.test(n)),
            `Accept All among ${names.join(' | ')}`,
          );
          assert.ok(
            names.some((n) => /^Reject All/.test(n)),
            `Reject All among ${names.join(' | ')}`,
          );
          for (const n of names) assert.doesNotMatch(n, /\$\(|\*\*|^\s*$/, 'a plain, non-empty name');
          await p().keyboard.press('Escape');
        }
        await command(p(), 'SkillOpt: Accept Candidate');
        // The decision reaches the engine: this step stops waiting (the next one may wait in turn).
        await status(`step ${step} waits for your review`).waitFor({ state: 'detached', timeout: 60_000 });
        reviewed++;
        if (reviewed > 12) throw new Error('the run kept waiting');
      }
    });

    await checks.step(
      'the Runs tree is reached from the palette and its rows read as they show',
      async () => {
        await palette(p(), 'SkillOpt: Focus on Runs View');
        // The tree says finished a moment after the status bar does.
        let name = '';
        for (let i = 0; i < 30 && !/, finished/.test(name); i++) {
          await p().keyboard.press('Home');
          name = await focusedRowName(p());
          if (!/, finished/.test(name)) await p().waitForTimeout(500);
        }
        assert.match(name, /^kb-skill_\d{8}_\d{6}, finished/);
        assert.doesNotMatch(name, /\//, 'announced by name, not by its folder path');
        // Down the run's rows (a finished live run shows its epoch and steps): each reads "label, description".
        let step = '';
        for (let i = 0; i < 6 && !step; i++) {
          await p().keyboard.press('ArrowDown');
          const row = await focusedRowName(p());
          if (/^Step \d+, /.test(row)) step = row;
        }
        assert.match(step, /^Step 1, [\d.]+ \([+−-][\d.]+\) · \d+ edits?/);
      },
    );

    await checks.step('Apply Best Skill and its notification are driven from the palette', async () => {
      // The reviews left the accepted lines in the buffer; go back to the file as saved first.
      await p().keyboard.press('Escape');
      await p().keyboard.press('Control+P');
      await p().locator('.quick-input-widget input').fill('kb-skill/SKILL.md');
      await p().locator('.quick-input-list .monaco-list-row', { hasText: 'SKILL.md' }).first().waitFor();
      await p().keyboard.press('Enter');
      await command(p(), 'File: Revert File');
      // One run in the workspace: no picker; the diff opens and a notification asks to apply.
      await command(p(), 'SkillOpt: Apply Best Skill');
      await p().waitForTimeout(500);
      await p().screenshot({ path: join(shots, 'apply.png') });
      // The question waits in the notification center (its toast may be hidden behind the diff's focus).
      await command(p(), 'Notifications: Show Notifications');
      const ask = p().locator('.notifications-center .notification-list-item', {
        hasText: 'Apply the best skill',
      });
      await ask.first().waitFor({ timeout: 30_000 });
      // The center has focus on its newest notification, this one: Tab to its Apply button, Enter.
      let onApply = false;
      for (let i = 0; i < 10 && !onApply; i++) {
        await p().keyboard.press('Tab');
        onApply = await p()
          .locator('.notifications-center .monaco-button:focus', { hasText: /^Apply$/ })
          .isVisible();
      }
      assert.ok(onApply, 'Tab reaches the Apply button');
      await p().keyboard.press('Enter');
      await p()
        .locator('.notification-list-item', { hasText: 'applied the best skill' })
        .first()
        .waitFor({ timeout: 30_000 });
      await p().keyboard.press('Control+S');
      const runs = join(skillDir, '.skillopt', 'runs');
      const [run] = readdirSync(runs);
      const best = readFileSync(join(runs, run, 'best_skill.md'), 'utf8');
      await p().waitForTimeout(1000);
      assert.equal(readFileSync(skillPath, 'utf8'), best, 'the saved skill is the best skill');
      assert.notEqual(best, readFileSync(skillPath + '.orig', 'utf8'), 'the run changed the skill');
    });

    await checks.step(
      'Gate History opens from the palette; every control has an accessible name',
      async () => {
        await command(p(), 'SkillOpt: Show Gate History');
        await typeAndEnter(p(), 'Gate History', 'kb-skill');
        const view = webview(p());
        await view.locator('#app h1', { hasText: 'Gate History' }).waitFor({ timeout: 30_000 });
        const unnamed = await view
          .locator('button, a[href], summary, input, select, [tabindex]:not([tabindex="-1"])')
          .evaluateAll((els: Named[]): string[] =>
            els
              .filter((e) => !(e.getAttribute('aria-label') ?? e.textContent ?? '').trim())
              .map((e) => e.outerHTML.slice(0, 120)),
          );
        assert.deepEqual(unnamed, [], 'controls without an accessible name');
        await p().screenshot({ path: join(shots, 'gate-history.png') });
      },
    );
  } finally {
    await endSession(checks, server, browser, sandbox);
  }
  return report(checks.results());
}

void main().then((code) => process.exit(code));
