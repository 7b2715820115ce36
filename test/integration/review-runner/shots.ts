/**
 * Browser checks of the review features after a real `sim` run, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: the inline review on SKILL.md (with a hover), the diff view
 * with Accept / Reject in the editor title, the folded protected block with its lock, and the Gate
 * History panel, where an edit whose text contains `<script>` and HTML must show as inert text.
 * Each check is named and counted by `npm test`; a screenshot counts only as the check that it was
 * written and is not blank. After a failed step the rest of that theme's checks fail without running.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/shots.ts [OUT_DIR] [light,dark,hc]
 *
 * Uses the project's harness (test/integration/harness/host.ts): the VS Code server with SkillOpt
 * loaded from this checkout as a development extension, driven in Chromium. Prints `N passed, N failed`.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { Checks, type Results } from '../harness/checks';
import {
  installVsCode,
  launchBrowser,
  makeSandbox,
  palette,
  repoRoot,
  startServer,
  type Server,
} from '../harness/host';
import {
  activeWebviewFrame,
  closeEditors,
  endSession,
  hoverUntil,
  openSkillOpt,
  pick,
  quickOpen,
  runThemes,
  webview,
} from './ui';
import { skillBeforeMetaReflection, themes, workspace, type Theme } from './workspace';

const out = resolve(process.argv[2] ?? join(repoRoot, '.cache', 'review-screenshots'));

async function session(theme: Theme): Promise<Results> {
  const tag = `[${theme}]`;
  const sandbox = makeSandbox(`skillopt-shots-${theme}-`, {
    // The web workbench saves after a delay by default; the fixture files must stay as they are.
    settings: {
      'workbench.colorTheme': themes[theme],
      'editor.minimap.enabled': false,
      'files.autoSave': 'off',
    },
  });
  let server: Server | undefined;
  let browser: BrowserContext | undefined;
  let page: Page | undefined;
  let ws = '';
  let runDir = '';
  // The webview's strict CSP must hold: Chromium reports any refused script, style or image.
  const refused: string[] = [];
  const checks = new Checks(async () => {
    await page?.screenshot({ path: join(out, `failure-${theme}.png`) });
  });
  const shot = (name: string): Promise<void> =>
    checks.screenshot(page, join(out, `${name}-${theme}.png`), `${tag} ${name}`);
  const p = (): Page => page!;
  try {
    await checks.step(`${tag} the trained workspace opens and SkillOpt lists its run`, async () => {
      const install = installVsCode();
      ({ ws, runDir } = workspace(sandbox, theme));
      server = await startServer(install, sandbox);
      browser = await launchBrowser(sandbox);
      page = browser.pages()[0] ?? (await browser.newPage());
      // High contrast as a person gets it: the OS asks for forced colours and VS Code follows.
      if (theme === 'hc') await page.emulateMedia({ forcedColors: 'active', colorScheme: 'dark' });
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
      });
      // The Runs view lists the run once the extension is active and has read the run folders.
      await openSkillOpt(page, server, ws, 'house-style');
      await page
        .locator('.monaco-list-row', { hasText: 'house-style_demo' })
        .first()
        .waitFor({ timeout: 60_000 });
    });

    await checks.step(`${tag} step 1's candidate reviews inline, with Accept All and a hover`, async () => {
      await quickOpen(p(), 'house-style/SKILL.md');
      await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).first().waitFor();
      await palette(p(), 'SkillOpt: Review Step Candidate…');
      await pick(p(), 'house-style_demo');
      await pick(p(), 'Step 1');
      await p()
        .locator('.codelens-decoration', { hasText: 'Accept All' })
        .first()
        .waitFor({ timeout: 30_000 });
      await p().waitForTimeout(800);
      await hoverUntil(p(), 'Write dates as YYYY-MM-DD', 'support_count');
      await p().waitForTimeout(600);
    });
    await shot('review-inline');

    await checks.step(`${tag} Open in Diff View shows Accept Candidate in the editor title`, async () => {
      await p().mouse.move(5, 5);
      await p().locator('.codelens-decoration a', { hasText: 'Open in Diff View' }).first().click();
      await p()
        .locator('.tabs-container .tab', { hasText: 'step 1 candidate' })
        .first()
        .waitFor({ timeout: 20_000 });
      await p()
        .locator('.editor-actions [aria-label*="Accept Candidate"]')
        .first()
        .waitFor({ timeout: 10_000 });
      await p().waitForTimeout(1200);
    });
    await shot('review-diff');

    // The epoch's meta reflection: rules deleted (struck through) and gathered under a heading.
    await checks.step(`${tag} the meta reflection reviews inline on the skill it started from`, async () => {
      await closeEditors(p());
      writeFileSync(join(ws, 'house-style', 'SKILL.md'), skillBeforeMetaReflection(runDir));
      await quickOpen(p(), 'house-style/SKILL.md');
      await p().waitForTimeout(800);
      await palette(p(), 'SkillOpt: Review Step Candidate…');
      await pick(p(), 'house-style_demo');
      await pick(p(), 'Epoch 1 meta reflection');
      await p()
        .locator('.codelens-decoration', { hasText: 'Accept All' })
        .first()
        .waitFor({ timeout: 30_000 });
      await p().waitForTimeout(800);
    });
    await shot('review-inline-meta');

    await checks.step(`${tag} a protected block opens folded, and its hover says who writes it`, async () => {
      await closeEditors(p());
      await quickOpen(p(), 'locked/SKILL.md');
      await p()
        .locator('.margin-view-overlays .codicon-folding-collapsed')
        .first()
        .waitFor({ timeout: 20_000 });
      await p().waitForTimeout(1000);
      await hoverUntil(p(), 'SLOW_UPDATE_START', 'Protected slow-update block');
      await p().waitForTimeout(600);
    });
    await shot('locked-block');

    await checks.step(
      `${tag} the Runs view keeps the evaluation, its report and a row per task`,
      async () => {
        await p().mouse.move(5, 5);
        await closeEditors(p());
        const row = (text: string | RegExp) => p().locator('.monaco-list-row', { hasText: text }).first();
        await row(/^Evaluations/).click();
        await row('house-style/SKILL.md on val').click();
        await row('Report').waitFor();
        const failing = p()
          .locator('.monaco-list-row', { hasText: /failed · answered/ })
          .first();
        await failing.waitFor();
        assert.match((await failing.getAttribute('aria-label')) ?? '', /failed · answered ".*", expected/);
        await failing.click();
        await p()
          .locator('.tabs-container .tab', { hasText: /conversation/ })
          .first()
          .waitFor();
        // The report beside it, rendered: scores by task type and the failing tasks as links.
        await row('Report').click();
        await p()
          .locator('.tabs-container .tab', { hasText: /Preview Untitled/ })
          .first()
          .waitFor();
        await p().waitForTimeout(800);
      },
    );
    await shot('runs-evaluations');

    await checks.step(`${tag} Show Gate History opens the run's panel with its steps`, async () => {
      await p().mouse.move(5, 5);
      await closeEditors(p());
      await palette(p(), 'SkillOpt: Show Gate History');
      await pick(p(), 'house-style_demo');
      const view = webview(p());
      await view.locator('#app h1', { hasText: 'Gate History' }).waitFor({ timeout: 30_000 });
      await view.locator('table.steps tbody tr').first().waitFor();
      await view.locator('table.steps details summary').first().click();
      await p().waitForTimeout(1200);
      await shot('gate-history');
      // For a person reading the screenshots: the theme's chart colours as the page sees them.
      const probe = await activeWebviewFrame(p());
      console.log(
        await probe?.evaluate(() =>
          [
            '--vscode-charts-orange',
            '--vscode-charts-blue',
            '--vscode-charts-green',
            '--vscode-charts-purple',
            '--vscode-editor-background',
          ]
            .map((v) => `${v}=${getComputedStyle(document.documentElement).getPropertyValue(v)}`)
            .join(' '),
        ),
      );
      // The table under the charts, with one step's edits open.
      await view.locator('table.steps').scrollIntoViewIfNeeded();
      await p().waitForTimeout(500);
      await shot('gate-history-table');
    });

    await checks.check(`${tag} the activation track's table has a row per epoch`, async () => {
      const view = webview(p());
      const epochs = (JSON.parse(readFileSync(join(runDir, 'activation_history.json'), 'utf8')) as unknown[])
        .length;
      const rows = view.locator('section.activation tbody tr');
      assert.equal(await rows.count(), epochs);
      await view.locator('section.activation').scrollIntoViewIfNeeded();
      await p().waitForTimeout(500);
      assert.match((await rows.first().textContent()) ?? '', /→/);
    });
    await shot('gate-history-activation');
    await checks.check(`${tag} the Gate History table has a row per step`, async () => {
      const view = webview(p());
      await view.locator('.grid').evaluate((el) => el.parentElement?.scrollTo(0, 0));
      const steps = (JSON.parse(readFileSync(join(runDir, 'history.json'), 'utf8')) as unknown[]).length;
      const rows = await view.locator('table.steps tbody td.step', { hasText: /^Step \d+$/ }).count();
      assert.equal(rows, steps, `${rows} step rows for ${steps} steps`);
    });
    await checks.step(`${tag} a step's link in the Gate History opens its diff`, async () => {
      await webview(p())
        .locator('table.steps tbody button.step-link', { hasText: /^Step 1$/ })
        .click();
      await p().locator('.monaco-diff-editor').first().waitFor({ timeout: 20_000 });
    });
    // The panel survives a window reload (its serializer brings the same run back).
    await checks.step(`${tag} the Gate History panel comes back with its run after a reload`, async () => {
      await p().locator('.tabs-container .tab', { hasText: 'Gate History' }).first().click();
      await webview(p()).locator('#app h1', { hasText: 'house-style_demo' }).waitFor({ timeout: 20_000 });
      await palette(p(), 'Developer: Reload Window');
      await p()
        .locator('.tabs-container .tab', { hasText: 'Gate History' })
        .first()
        .waitFor({ timeout: 60_000 });
      await p().locator('.tabs-container .tab', { hasText: 'Gate History' }).first().click();
      await webview(p()).locator('#app h1', { hasText: 'house-style_demo' }).waitFor({ timeout: 60_000 });
    });

    let shown: { text: string; elements: number; pwned: number | null } | undefined;
    await checks.step(`${tag} Gate History opens a run whose edit text is hostile`, async () => {
      await closeEditors(p());
      await palette(p(), 'SkillOpt: Show Gate History');
      await pick(p(), 'house-style_hostile');
      const hv = webview(p());
      await hv.locator('#app h1', { hasText: 'house-style_hostile' }).waitFor({ timeout: 30_000 });
      await hv.locator('table.steps details summary').first().click();
      // Read through the panel's own frame locator, after the edits are drawn: the "active" frame
      // can still be another webview for a moment (seen once in CI).
      const list = hv.locator('.edit-list').first();
      await list.locator('.edit-content').first().waitFor({ timeout: 10_000 });
      shown = await list.evaluate((el) => {
        const w = window as unknown as { __skilloptPwned?: number };
        return {
          text: Array.from(
            el.ownerDocument.querySelectorAll('.edit-content'),
            (e) => e.textContent ?? '',
          ).join('\n'),
          elements: el.querySelectorAll('script, img, b').length,
          pwned: w.__skilloptPwned ?? null,
        };
      });
      await hv.locator('.edit-content').first().scrollIntoViewIfNeeded();
      await p().waitForTimeout(500);
    });
    await shot('gate-history-hostile');
    await checks.check(`${tag} hostile edit text shows as text: no script, image or markup`, () => {
      if (!shown) throw new Error('nothing was read from the page');
      assert.ok(shown.text.includes('<script>window.__skilloptPwned = 1</script>'), JSON.stringify(shown));
      assert.deepEqual({ elements: shown.elements, pwned: shown.pwned }, { elements: 0, pwned: null });
    });
    await checks.check(`${tag} no Content Security Policy violations`, () => {
      assert.deepEqual(refused, []);
    });
  } finally {
    await endSession(checks, server, browser, sandbox);
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
