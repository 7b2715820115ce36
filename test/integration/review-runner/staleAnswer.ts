/**
 * Answers that reach a run after its question, in Chromium, in a light, a dark and a high-contrast
 * theme, with screenshots for a person to look at. A human-first `sim` run pauses on a step:
 * - SKILL.md reverted and closed, the step's diff tab left open: the diff's Accept Candidate answers
 *   the question the run asks (the step is decided, no "no longer asks" warning);
 * - on the next pause the window is told the run asked that step again (a `review/requested` with
 *   a question the engine never asked, fed through a key binding: what a window sees when a stop
 *   and resume re-asks while an answer is on its way); the editor's Accept then answers a question
 *   the run does not ask, the real engine refuses it as stale and the warning says so and offers
 *   the step the run waits on; its button brings that review back, and it can be answered.
 * Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/staleAnswer.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/stale-answer-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { STEP_FILE, stepDirName } from '../../../src/engine/store/layout';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { runThemes, themeSession, trainHouseStyle, widenSideBar } from './ui';
import type { Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'stale-answer-screenshots'));
const WAITS = /step (\d+) waits for your review/;
const FEED_KEY = 'f9';

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-stale', out, {
    'files.autoSave': 'off',
    'skillopt.reviewMode': 'human-first',
  });
  const { tag, sandbox, checks, p } = s;
  const ws = join(sandbox, 'house-style');
  const skill = join(ws, 'SKILL.md');
  const original = readFileSync(join(repoRoot, 'examples', 'house-style', 'SKILL.md'), 'utf8');
  const status = (): ReturnType<Page['locator']> =>
    p().locator('.statusbar-item', { hasText: WAITS }).first();
  const waitingStep = async (): Promise<string> => WAITS.exec(await status().innerText())![1]!;
  const notice = (text: string): ReturnType<Page['locator']> =>
    p().locator('.notifications-center .notification-list-item', { hasText: text }).first();
  const lens = (text: string | RegExp): ReturnType<Page['locator']> =>
    p().locator('.codelens-decoration a', { hasText: text }).first();
  const runDir = (): string => {
    const runs = join(ws, '.skillopt', 'runs');
    const name = readdirSync(runs).find((n) => n.startsWith('house-style_'));
    assert.ok(name, `a run folder in ${runs}`);
    return join(runs, name);
  };
  let step = '';
  try {
    await checks.step(`${tag} a human-first run pauses on a step`, async () => {
      process.env.SKILLOPT_SIM_LATENCY_MS = '30';
      const { server, page } = await s.launch();
      await trainHouseStyle(page, server, ws);
      await widenSideBar(page);
      await status().waitFor({ timeout: 90_000 });
      step = await waitingStep();
      await lens(/^Accept All$|^Accept$/).waitFor({ timeout: 30_000 });
    });

    await checks.step(
      `${tag} SKILL.md reverted and closed, the diff's Accept Candidate decides the step`,
      async () => {
        await palette(p(), 'SkillOpt: Open Candidate in Diff View');
        const diffTab = p()
          .locator('.tabs-container .tab', { hasText: /SKILL\.md.*↔|candidate/i })
          .first();
        await diffTab.waitFor({ timeout: 20_000 });
        await p()
          .locator('.tabs-container .tab', { hasText: /^SKILL\.md$/ })
          .first()
          .click();
        await palette(p(), 'View: Revert and Close Editor');
        await p()
          .locator('.tabs-container .tab', { hasText: /^SKILL\.md$/ })
          .waitFor({ state: 'detached', timeout: 20_000 });
        assert.equal(readFileSync(skill, 'utf8'), original, 'nothing unreviewed on disk');
        await diffTab.click();
        await p().locator('.editor-actions .action-label[aria-label="Accept Candidate"]').first().click();
        await p()
          .locator('.statusbar-item', { hasText: `step ${step} waits for your review` })
          .waitFor({ state: 'detached', timeout: 60_000 });
        await palette(p(), 'Notifications: Show Notifications');
        await p().waitForTimeout(800);
        assert.equal(await notice('no longer asks the question').count(), 0, 'answered the question asked');
        await p().keyboard.press('Escape');
      },
    );

    await checks.step(
      `${tag} an answer to a question the run no longer asks is refused, and said`,
      async () => {
        await status().waitFor({ timeout: 90_000 });
        step = await waitingStep();
        await lens(/^Accept All$|^Accept$/).waitFor({ timeout: 30_000 });
        const dir = runDir();
        const request = {
          type: 'review/requested',
          questionId: 'a-question-the-run-does-not-ask',
          step: Number(step),
          epoch: 1,
          phase: 'before_gate',
          candidateHash: '',
          candidatePath: join(dir, stepDirName(Number(step)), STEP_FILE.candidate),
          edits: [],
        };
        const args = {
          runId: dir,
          event: request,
          skillPath: skill,
          mode: 'human-first',
          live: true,
          runDir: dir,
        };
        // Written through the editor: VS Code takes the key bindings it saves at once.
        await p().keyboard.press('F1');
        await p().locator('.quick-input-widget input').fill('>Preferences: Open Keyboard Shortcuts (JSON)');
        await p()
          .locator('.quick-input-list .monaco-list-row', { hasText: 'Open Keyboard Shortcuts (JSON)' })
          .filter({ hasNotText: 'Default' })
          .first()
          .click();
        await p()
          .locator('.tabs-container .tab', { hasText: /^keybindings\.json/ })
          .waitFor();
        await p().locator('.monaco-editor .view-lines').first().click();
        await p().keyboard.press('Control+A');
        await p().keyboard.insertText(
          JSON.stringify([{ key: FEED_KEY, command: 'skillopt.review.handleEvent', args }]),
        );
        // The editor closes the brackets and quotes typed into it: what follows the text goes.
        await p().keyboard.press('Shift+End');
        await p().keyboard.press('Delete');
        await p().keyboard.press('Control+S');
        await palette(p(), 'View: Close Editor');
        await p()
          .locator('.tabs-container .tab', { hasText: /^SKILL\.md/ })
          .first()
          .click();
        await p().locator('.monaco-editor .view-lines').first().click();
        // The saved bindings are read again a moment later.
        // (A second press feeds the same question again, harmless, if the first came too early.)
        for (const wait of [3000, 3000]) {
          await p().waitForTimeout(wait);
          await p().keyboard.press('F9');
        }
        await p().waitForTimeout(1000);
        await lens(/^Accept All$/).click();
        await palette(p(), 'Notifications: Show Notifications');
        await notice('no longer asks the question').waitFor({ timeout: 30_000 });
        // Expanded, as a toast shows it: the center folds all but the newest line of each notice.
        const expand = notice('no longer asks the question').locator('.codicon-notifications-expand');
        if (await expand.count()) await expand.first().click();
        await p().mouse.move(5, 5);
        await p().waitForTimeout(800);
      },
    );
    await checks.screenshot(s.page(), join(out, `stale-answer-${theme}.png`), `${tag} stale answer`);
    await checks.check(
      `${tag} the warning names the step, says nothing was applied, and offers the step the run waits on`,
      async () => {
        const text = await notice('no longer asks the question').innerText();
        assert.match(
          text,
          new RegExp(
            `question you answered on step ${step} .*so your decision was not applied\\. It is waiting for your review of step ${step} now\\.`,
          ),
        );
        assert.equal(await waitingStep(), step, 'the run still waits on the step');
        const review = notice('no longer asks the question').locator('.monaco-button', {
          hasText: `Review Step ${step}`,
        });
        assert.equal(await review.count(), 1, 'a way to the question asked now');
      },
    );
    await checks.step(`${tag} its Review Step brings back the review the run waits on`, async () => {
      await notice('no longer asks the question')
        .locator('.monaco-button', { hasText: `Review Step ${step}` })
        .click();
      await p().keyboard.press('Escape');
      // The refused answer's lines are still in the buffer: the review is drawn on them, whole.
      await p()
        .locator('.codelens-decoration', { hasText: `step ${step}` })
        .filter({ hasText: 'the run waits for you' })
        .first()
        .waitFor({ timeout: 30_000 });
      await lens(/^Accept All$/).waitFor({ timeout: 30_000 });
      await p().mouse.move(5, 5);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `stale-answer-reopened-${theme}.png`), `${tag} reopened`);
    await checks.step(`${tag} and its Accept All answers the question asked now`, async () => {
      await lens(/^Accept All$/).click();
      await p()
        .locator('.statusbar-item', { hasText: `step ${step} waits for your review` })
        .waitFor({ state: 'detached', timeout: 60_000 });
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
