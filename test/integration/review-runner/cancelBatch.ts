/**
 * Cancel Provider Batch… on a stopped run whose folder records a provider batch, in Chromium, in a
 * light, a dark and a high-contrast theme, with screenshots for a person to look at: the run's row
 * offers the command on right-click, the confirmation says what the cancel costs and how to keep
 * the batch instead, and closing it cancels nothing. Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/cancelBatch.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/cancel-batch-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EVAL_FILE, RUN_DIR, RUN_FILE } from '../../../src/engine/store/layout';
import type { Results } from '../harness/checks';
import { repoRoot } from '../harness/host';
import { openSkillOpt, pickMenuItem, runThemes, themeSession, widenSideBar } from './ui';
import type { Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'cancel-batch-screenshots'));
const RUN = 'hs_batch';
const BATCH = {
  provider: 'openai',
  model: 'gpt-5.5',
  stage: 'test',
  batch_id: 'batch_6743f0c2a9d48190b7e1',
  submitted_at: '2026-11-24T10:15:02Z',
  items: {},
  item_sha256: {},
};

/** The example trained by the CLI (simulated), then left as a run stopped with its test batch out. */
function stoppedRunWithBatch(ws: string): string {
  cpSync(join(repoRoot, 'examples', 'house-style'), ws, { recursive: true });
  const run = join(ws, '.skillopt', 'runs', RUN);
  const r = spawnSync(
    process.execPath,
    [join(repoRoot, 'dist', 'cli.js'), 'train', join(ws, 'skillopt.yaml'), '--out', run],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`skillopt train failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  rmSync(join(run, RUN_FILE.summary));
  mkdirSync(join(run, RUN_DIR.testBest), { recursive: true });
  writeFileSync(join(run, RUN_DIR.testBest, EVAL_FILE.batch), JSON.stringify(BATCH));
  return run;
}

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-cancel-batch', out);
  const { tag, sandbox, checks, p } = s;
  const ws = join(sandbox, 'house-style');
  let run = '';
  const dialog = (): ReturnType<ReturnType<typeof p>['locator']> =>
    p().locator('.monaco-dialog-box', { hasText: 'Cancel the provider batch' });
  try {
    await checks.step(`${tag} the stopped run's row offers Cancel Provider Batch…`, async () => {
      run = stoppedRunWithBatch(ws);
      const { server, page } = await s.launch();
      await page.setViewportSize({ width: 1280, height: 720 });
      await openSkillOpt(page, server, ws, 'SKILL.md');
      await widenSideBar(page);
      const row = p().locator('.monaco-list-row', { hasText: RUN }).first();
      await row.waitFor({ timeout: 60_000 });
      await row.click({ button: 'right' });
      await pickMenuItem(p(), 'Cancel Provider Batch');
      await dialog().waitFor({ timeout: 60_000 });
      await p().waitForTimeout(600);
    });
    await checks.screenshot(s.page(), join(out, `cancel-batch-${theme}.png`), `${tag} cancel batch`);
    await checks.check(
      `${tag} the confirmation says what the cancel costs and how to keep the batch`,
      async () => {
        const text = (await dialog().innerText()).replace(/\s+/g, ' ');
        assert.match(text, new RegExp(`Cancel the provider batch of ${RUN}\\?`));
        assert.match(text, /answered before the cancel is billed by the provider/);
        assert.match(text, /To keep the batch instead, close this and resume the run/);
        assert.ok((await dialog().locator('.monaco-button', { hasText: 'Cancel Batch' }).count()) > 0);
      },
    );
    await checks.check(`${tag} closing it cancels nothing`, async () => {
      await p().keyboard.press('Escape');
      await p().waitForTimeout(800);
      assert.equal(await p().locator('.monaco-dialog-box').count(), 0, 'the dialog stayed');
      const file = join(run, RUN_DIR.testBest, EVAL_FILE.batch);
      assert.ok(existsSync(file));
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), BATCH);
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
