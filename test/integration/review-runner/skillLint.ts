/**
 * The SKILL.md lint in Chromium, in a light, a dark and a high-contrast theme, with screenshots for a
 * person to look at: a bad skill's squiggles and its findings in the Problems panel, then the
 * quick-fix menu on the name, whose first fix is applied. Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/skillLint.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/skill-lint-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { openWorkbench, quickOpen, runThemes, themeSession } from './ui';
import { type Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'skill-lint-screenshots'));

const skill = [
  '---',
  'name: pdf-filler',
  `description: ${'Fill in PDF forms from the fields the user gives, checking each value. '.repeat(16).trim()}`,
  '---',
  '# PDF forms',
  '',
  'Read [the field guide](references/fields.md) first, then run `scripts/fill.py`.',
  '',
].join('\n');

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-lint', out, { 'files.autoSave': 'off', 'editor.wordWrap': 'on' });
  const { tag, sandbox, checks, p } = s;
  const file = join(sandbox, 'workspace', 'pdf-forms', 'SKILL.md');
  try {
    await checks.step(
      `${tag} a bad SKILL.md opens with SkillOpt's findings in the Problems panel`,
      async () => {
        mkdirSync(join(sandbox, 'workspace', 'pdf-forms'), { recursive: true });
        writeFileSync(file, skill);
        const { server } = await s.launch();
        await openWorkbench(p(), server, join(sandbox, 'workspace'));
        await p()
          .locator('.explorer-folders-view .monaco-list-row', { hasText: 'pdf-forms' })
          .first()
          .waitFor({ timeout: 90_000 });
        await quickOpen(p(), 'pdf-forms/SKILL.md');
        await p().locator('.squiggly-error').first().waitFor({ timeout: 60_000 });
        await palette(p(), 'View: Toggle Problems');
        await p()
          .locator('.markers-panel .monaco-list-row', { hasText: 'is not the name of its folder' })
          .first()
          .waitFor({ timeout: 20_000 });
        await p().mouse.move(5, 5);
        await p().waitForTimeout(800);
      },
    );
    await checks.screenshot(
      s.page(),
      join(out, `skill-lint-diagnostics-${theme}.png`),
      `${tag} skill-lint-diagnostics`,
    );
    await checks.check(`${tag} the Problems panel lists the name, the description and the link`, async () => {
      const rows = (await p().locator('.markers-panel .monaco-list-row').allInnerTexts()).join('\n');
      assert.match(rows, /"pdf-filler" is not the name of its folder "pdf-forms"/);
      assert.match(rows, /description is 1,135 characters, over the limit of 1,024/);
      assert.match(rows, /references\/fields\.md does not exist/);
      assert.match(rows, /scripts\/fill\.py does not exist/);
    });
    await checks.step(`${tag} Ctrl+. on the name opens the quick fixes`, async () => {
      await p().locator('.view-lines span', { hasText: 'pdf-filler' }).first().click();
      await p().keyboard.press('Control+.');
      await p()
        .locator('.action-widget', { hasText: 'Set name to the folder name "pdf-forms"' })
        .first()
        .waitFor({ timeout: 20_000 });
      await p().waitForTimeout(600);
    });
    await checks.screenshot(
      s.page(),
      join(out, `skill-lint-quickfix-${theme}.png`),
      `${tag} skill-lint-quickfix`,
    );
    await checks.step(`${tag} the first quick fix sets the name to the folder name`, async () => {
      await p().keyboard.press('Enter');
      await p().locator('.view-lines span', { hasText: 'pdf-forms' }).first().waitFor({ timeout: 10_000 });
      await p()
        .locator('.markers-panel .monaco-list-row', { hasText: 'is not the name of its folder' })
        .waitFor({ state: 'detached', timeout: 20_000 });
      await p().keyboard.press('Control+S');
      await p().locator('.tabs-container .tab.dirty').waitFor({ state: 'detached', timeout: 10_000 });
      assert.match(readFileSync(file, 'utf8'), /^---\nname: pdf-forms\n/);
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
