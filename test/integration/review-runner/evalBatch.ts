/**
 * Evaluate Skill when an earlier evaluation of the same skill and split stopped with its provider
 * batch out, in Chromium, in a light, a dark and a high-contrast theme, with screenshots for a
 * person to look at: the modal names the batch and offers to continue, start new, or cancel the
 * batch first; closing it starts nothing. Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/evalBatch.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/eval-batch-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EVAL_FILE } from '../../../src/engine/store/layout';
import { EVALS_DIR } from '../../../src/extension/runs/evalNodes';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { openSkillOpt, pick, quickOpen, runThemes, themeSession } from './ui';
import type { Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'eval-batch-screenshots'));
const BATCH_ID = 'batch_6743f0c2a9d48190b7e1';

/** What a stopped Evaluate Skill leaves: its identity and the batch it had sent, no summary. */
function stoppedEvaluation(ws: string): string {
  const dir = join(ws, EVALS_DIR, 'SKILL_test_20261124-101500');
  mkdirSync(join(dir, 'eval'), { recursive: true });
  writeFileSync(
    join(dir, EVAL_FILE.identity),
    JSON.stringify({ skill: join(ws, 'SKILL.md'), split: 'test', target: 'openai gpt-5.5', digest: 'd0' }),
  );
  writeFileSync(
    join(dir, 'eval', EVAL_FILE.batch),
    JSON.stringify({
      provider: 'openai',
      model: 'gpt-5.5',
      stage: 'eval',
      batch_id: BATCH_ID,
      submitted_at: '2026-11-24T10:15:02Z',
      items: {},
      item_sha256: {},
    }),
  );
  return dir;
}

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-eval-batch', out);
  const { tag, sandbox, checks, p } = s;
  const ws = join(sandbox, 'house-style');
  const dialog = (): ReturnType<ReturnType<typeof p>['locator']> =>
    p().locator('.monaco-dialog-box', { hasText: 'an earlier evaluation' });
  try {
    await checks.step(
      `${tag} Evaluate Skill finds the evaluation that stopped with its batch out`,
      async () => {
        cpSync(join(repoRoot, 'examples', 'house-style'), ws, { recursive: true });
        stoppedEvaluation(ws);
        const { server, page } = await s.launch();
        await page.setViewportSize({ width: 1280, height: 720 });
        await openSkillOpt(page, server, ws, 'SKILL.md');
        await quickOpen(p(), 'SKILL.md');
        await palette(p(), 'SkillOpt: Evaluate Skill');
        await pick(p(), 'active editor');
        await pick(p(), /^test/);
        await pick(p(), 'Target model from the config');
        await dialog().waitFor({ timeout: 60_000 });
        await p().waitForTimeout(600);
      },
    );
    await checks.screenshot(s.page(), join(out, `eval-batch-${theme}.png`), `${tag} earlier evaluation`);
    await checks.check(
      `${tag} the modal names the batch and offers continue, new, or cancel it first`,
      async () => {
        const text = (await dialog().innerText()).replace(/\s+/g, ' ');
        assert.match(
          text,
          new RegExp(`SKILL\\.md on test stopped while its openai batch ${BATCH_ID} was out`),
        );
        assert.match(text, /collects what the batch answered, already paid for/);
        for (const button of [
          'Continue Earlier Evaluation',
          'Start New Evaluation',
          'Cancel Its Batch, Start New',
        ])
          assert.ok(
            (await dialog().locator('.monaco-button', { hasText: button }).count()) > 0,
            `no ${button}`,
          );
      },
    );
    await checks.check(`${tag} closing it starts nothing`, async () => {
      await p().keyboard.press('Escape');
      await p().waitForTimeout(800);
      assert.equal(await p().locator('.monaco-dialog-box').count(), 0, 'the dialog stayed');
      assert.deepEqual(readdirSync(join(ws, EVALS_DIR)), ['SKILL_test_20261124-101500']);
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
