/**
 * "Optimize This Skill" on a SKILL.md with unsaved changes, in Chromium, in a light, a dark and a
 * high-contrast theme, with screenshots for a person to look at: the modal asks before anything is
 * saved, and Cancel leaves the file on disk and the changes in the editor as they were. Each check
 * is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/unsavedSkill.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/unsaved-skill-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Results } from '../harness/checks';
import { repoRoot } from '../harness/host';
import { openSkillOpt, quickOpen, runThemes, themeSession } from './ui';
import type { Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'unsaved-skill-screenshots'));
const TYPED = '- A rule typed but not saved yet.';

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-unsaved', out, { 'files.autoSave': 'off' });
  const { tag, sandbox, checks, p } = s;
  const ws = join(sandbox, 'house-style');
  const dialog = (): ReturnType<ReturnType<typeof p>['locator']> =>
    p().locator('.monaco-dialog-box', { hasText: 'has unsaved changes' });
  try {
    await checks.step(`${tag} Optimize This Skill on a changed SKILL.md asks first`, async () => {
      cpSync(join(repoRoot, 'examples', 'house-style'), ws, { recursive: true });
      const { server, page } = await s.launch();
      await page.setViewportSize({ width: 1280, height: 720 });
      await openSkillOpt(page, server, ws, 'SKILL.md');
      await quickOpen(p(), 'SKILL.md');
      await p().locator('.monaco-editor .view-lines').first().click();
      await p().keyboard.press('Control+End');
      await p().keyboard.type(`\n${TYPED}\n`);
      await p()
        .locator('.monaco-button', { hasText: 'Optimize This Skill' })
        .first()
        .click({ timeout: 60_000 });
      await dialog().waitFor({ timeout: 60_000 });
      await p().waitForTimeout(600);
    });
    await checks.screenshot(s.page(), join(out, `unsaved-skill-${theme}.png`), `${tag} unsaved skill`);
    await checks.check(`${tag} the question says why, and offers Save and Train or Cancel`, async () => {
      const text = (await dialog().innerText()).replace(/\s+/g, ' ');
      assert.match(text, /SKILL\.md has unsaved changes/);
      assert.match(text, /Training reads the skill from disk and would not see them/);
      assert.match(text, /Save and Train/);
      assert.match(text, /Cancel/);
    });
    await checks.check(`${tag} Cancel saves nothing and starts nothing`, async () => {
      await dialog().locator('.monaco-button', { hasText: 'Cancel' }).click();
      await p().waitForTimeout(800);
      assert.equal(
        readFileSync(join(ws, 'SKILL.md'), 'utf8'),
        readFileSync(join(repoRoot, 'examples', 'house-style', 'SKILL.md'), 'utf8'),
      );
      assert.equal(await p().locator('.monaco-dialog-box').count(), 0, 'the dialog stayed');
      assert.ok(
        (await p().locator('.tab.dirty', { hasText: 'SKILL.md' }).count()) > 0,
        'the changes were lost',
      );
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
