/**
 * A skill folder's candidate reviewed in Chromium, in a light, a dark and a high-contrast theme,
 * with screenshots for a person to look at: a `sim` run of a skill folder (SKILL.md and
 * references/style-guide.md, trained by the CLI) whose step candidate changes both files; the
 * review of SKILL.md with the lens that opens the reference file's review beside it, both files'
 * inline reviews side by side, and one diff tab per changed file. Each check is named; prints
 * `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/folderReview.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/folder-review-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { readCandidateFiles } from '../../../src/engine/skill/package/changes';
import { RunLayout, STEP_FILE } from '../../../src/engine/store/layout';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { openSkillOpt, pick, quickOpen, runThemes, themeSession } from './ui';
import { trainFolderSkill, type Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'folder-review-screenshots'));
const GUIDE = 'references/style-guide.md';
const RUN = 'house-style_demo';
/** A reference file long enough that each screenshot (the high-contrast one too) is mostly text. */
const GUIDE_TEXT = [
  '# Style guide',
  '',
  'Answers are pasted into forms exactly as written, so the form decides the shape of every answer.',
  '',
  '## Forms',
  '',
  '- One answer per field.',
  '- No trailing full stop: the form adds its own punctuation.',
  '- Keep the units the question uses; never convert them silently.',
  '',
  '## Numbers',
  '',
  '- Digits for every number, words never (12, not twelve).',
  '- Thousands separated by a comma (12,500).',
  '- Percentages with the sign and no space (45%).',
  '',
  '## Names',
  '',
  '- Organisations as they write their own name.',
  '- Product names in their official capitalisation.',
  '',
].join('\n');

/** The folder skill, trained by the CLI; the first step whose candidate changes SKILL.md and the guide. */
function workspace(sandbox: string): { ws: string; step: number } {
  const ws = join(sandbox, 'workspace');
  const runDir = trainFolderSkill(join(ws, 'house-style'), GUIDE, GUIDE_TEXT, RUN);
  const layout = new RunLayout(runDir);
  const steps = readdirSync(join(runDir, 'steps'))
    .map((n) => Number(/^step_(\d+)$/.exec(n)?.[1]))
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const step = steps.find((s) => {
    const files = readCandidateFiles(layout.stepFile(s, STEP_FILE.candidate)) ?? [];
    return files.some((f) => f.path === 'SKILL.md') && files.some((f) => f.path === GUIDE);
  });
  if (step === undefined) throw new Error('no step candidate changes both SKILL.md and the style guide');
  return { ws, step };
}

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-folder-review', out, { 'files.autoSave': 'off' });
  const { tag, sandbox, checks, p } = s;
  let step = 0;
  const lens = (text: string | RegExp): ReturnType<Page['locator']> =>
    p().locator('.codelens-decoration a', { hasText: text }).first();
  try {
    await checks.step(`${tag} the folder skill's run is listed`, async () => {
      const made = workspace(sandbox);
      step = made.step;
      const { server, page } = await s.launch();
      // Two editors side by side with little empty margin (which reads as blank in high contrast).
      await page.setViewportSize({ width: 1280, height: 720 });
      await openSkillOpt(page, server, made.ws, 'house-style');
      await page.locator('.monaco-list-row', { hasText: RUN }).first().waitFor({ timeout: 60_000 });
    });

    await checks.step(
      `${tag} the step's review on SKILL.md names the reference file it also changes`,
      async () => {
        await quickOpen(p(), 'house-style/SKILL.md');
        await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).first().waitFor();
        await palette(p(), 'SkillOpt: Review Step Candidate…');
        await pick(p(), RUN);
        await pick(p(), new RegExp(`^Step ${step}(?!\\d)`));
        await lens('Accept All').waitFor({ timeout: 30_000 });
        await lens(`${GUIDE}: `).waitFor({ timeout: 30_000 });
      },
    );

    await checks.step(`${tag} its lens opens the reference file's own review beside SKILL.md`, async () => {
      // The side bar out of the way: two editors side by side need the width.
      await palette(p(), 'View: Close Primary Side Bar');
      await lens(`${GUIDE}: `).click();
      await p()
        .locator('.tabs-container .tab', { hasText: 'style-guide.md' })
        .first()
        .waitFor({ timeout: 20_000 });
      // Both editors show their review: the guide's own Accept lens and SKILL.md's.
      await p()
        .locator('.editor-group-container')
        .nth(1)
        .locator('.codelens-decoration a', { hasText: 'Accept' })
        .first()
        .waitFor({ timeout: 20_000 });
      await p().mouse.move(5, 5);
      await p().waitForTimeout(1000);
    });
    await checks.screenshot(
      s.page(),
      join(out, `folder-review-inline-${theme}.png`),
      `${tag} folder-review-inline`,
    );
    await checks.check(`${tag} both editors show the candidate's added lines`, async () => {
      for (const n of [0, 1]) {
        const count = await p()
          .locator('.editor-group-container')
          .nth(n)
          .locator('.view-overlays div[class*="ced-"]')
          .count();
        assert.ok(count > 0, `editor ${n + 1} has review decorations`);
      }
    });

    await checks.step(`${tag} Open in Diff View opens one diff per changed file`, async () => {
      // One editor group, so each diff gets the whole width (and its tab shows beside the others).
      await palette(p(), 'View: Join All Editor Groups');
      await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).first().click();
      await lens('Open in Diff View').click();
      for (const name of ['SKILL.md: previous', 'style-guide.md: previous'])
        await p().locator('.tabs-container .tab', { hasText: name }).first().waitFor({ timeout: 20_000 });
      await p()
        .locator('.editor-actions [aria-label*="Accept Candidate"]')
        .first()
        .waitFor({ timeout: 10_000 });
      await p().mouse.move(5, 5);
      await p().waitForTimeout(1200);
    });
    await checks.screenshot(
      s.page(),
      join(out, `folder-review-diff-${theme}.png`),
      `${tag} folder-review-diff`,
    );
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
