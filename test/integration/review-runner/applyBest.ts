/**
 * Apply Best on a skill folder in Chromium, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: a `sim` run of a skill folder (SKILL.md and
 * references/style-guide.md, trained by the CLI); Apply Best Skill from the command palette opens
 * one diff tab per file it would change and asks once, listing them; Apply writes them. The sim
 * optimizer edits files the skill has, so a script is put in the run's best_skill/ to stand for a
 * file a run added (it shows against an empty side), and a notes file only the person's folder
 * holds shows as kept. Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/applyBest.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/apply-best-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageDirOf, RUN_FILE, RunLayout } from '../../../src/engine/store/layout';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { openSkillOpt, runThemes, themeSession } from './ui';
import { trainFolderSkill, type Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'apply-best-screenshots'));
const GUIDE = 'references/style-guide.md';
const SCRIPT = 'scripts/check.py';
const RUN = 'house-style_demo';
const SCRIPT_TEXT = [
  '"""Checks an answer against the house style before it is pasted into a form."""',
  'import re',
  'import sys',
  '',
  'answer = sys.stdin.read().strip()',
  "if answer.endswith('.'):",
  "    sys.exit('no trailing full stop: the form adds its own')",
  "if re.search(r'\\b(one|two|three|four|five|six|seven|eight|nine|ten)\\b', answer):",
  "    sys.exit('digits for every number')",
  "print('ok')",
  '',
].join('\n');

/** The skill folder is the workspace (so the run's `skill_init: .` names it), trained by the CLI. */
function workspace(sandbox: string): string {
  const ws = join(sandbox, 'house-style');
  const runDir = trainFolderSkill(
    ws,
    GUIDE,
    '# Style guide\n\nAnswers are pasted into forms exactly as written.\n\n- One answer per field.\n',
    RUN,
  );
  const best = packageDirOf(new RunLayout(runDir).file(RUN_FILE.bestSkill));
  mkdirSync(join(best, 'scripts'), { recursive: true });
  writeFileSync(join(best, ...SCRIPT.split('/')), SCRIPT_TEXT);
  writeFileSync(join(ws, 'references', 'notes.md'), 'My own notes, not part of any run.\n');
  return ws;
}

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-apply-best', out, { 'files.autoSave': 'off' });
  const { tag, sandbox, checks, p } = s;
  let ws = '';
  // Asked after the diffs open, the question lands in the notification center rather than a toast
  // in this headless browser (as in test/e2e/keyboardOnly.ts): it is read and answered there.
  const notice = (text: string | RegExp): ReturnType<ReturnType<typeof p>['locator']> =>
    p().locator('.notifications-center .notification-list-item', { hasText: text }).first();
  try {
    await checks.step(`${tag} the folder skill's run is listed`, async () => {
      ws = workspace(sandbox);
      const { server, page } = await s.launch();
      await page.setViewportSize({ width: 1280, height: 720 });
      await openSkillOpt(page, server, ws, 'SKILL.md');
      await page.locator('.monaco-list-row', { hasText: RUN }).first().waitFor({ timeout: 60_000 });
    });

    await checks.step(
      `${tag} Apply Best Skill opens one diff per file and asks once, listing them`,
      async () => {
        await palette(p(), 'View: Close Primary Side Bar');
        // The workspace's only run is taken without a picker.
        await palette(p(), 'SkillOpt: Apply Best Skill');
        for (const name of ['SKILL.md ↔', 'style-guide.md ↔', 'check.py (new) ↔'])
          await p().locator('.tabs-container .tab', { hasText: name }).first().waitFor({ timeout: 20_000 });
        await palette(p(), 'Notifications: Show Notifications');
        await notice('Apply 3 files').waitFor({ timeout: 20_000 });
        await p().mouse.move(5, 5);
        await p().waitForTimeout(1200);
      },
    );
    await checks.screenshot(s.page(), join(out, `apply-best-${theme}.png`), `${tag} apply-best`);
    await checks.check(`${tag} the question names every file, the new one, and the one kept`, async () => {
      const text = (await notice('Apply 3 files').innerText()).replace(/\s+/g, ' ');
      assert.match(text, new RegExp(`Apply 3 files: SKILL\\.md, ${GUIDE}, ${SCRIPT} \\(new\\)\\?`));
      assert.match(text, /Kept as they are \(not in the best skill\): references\/notes\.md/);
    });

    await checks.step(`${tag} Apply writes the new file and edits the others`, async () => {
      await notice('Apply 3 files')
        .locator('.monaco-button', { hasText: /^Apply$/ })
        .click();
      await palette(p(), 'Notifications: Show Notifications');
      await notice('applied the best skill').waitFor({ timeout: 20_000 });
      assert.equal(readFileSync(join(ws, ...SCRIPT.split('/')), 'utf8'), SCRIPT_TEXT);
      assert.equal(
        readFileSync(join(ws, 'references', 'notes.md'), 'utf8'),
        'My own notes, not part of any run.\n',
      );
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
