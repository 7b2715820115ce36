/**
 * The gate beside the steps in Chromium, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: a CLI run with the paired gate, two repeats and the per-item
 * rule, and an A/A check of its best skill (`skillopt eval --aa 3`, kept in the run folder). The
 * Runs view shows its Gate row (power check, A/A), Scores row (the target alone beside the skills)
 * and the A/A evaluation; Gate History shows the same in its header, the no-skill line on the chart
 * and a per-item rejection in its table. Each check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/gates.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/gates-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import type { RolloutResult, StepRecord } from '../../../src/protocol/records';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { closeEditors, openSkillOpt, pick, runThemes, sidebarWidth, themeSession, webview } from './ui';
import { cli, themes, type Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'gates-screenshots'));

/** The example trained with the paired gate, its best skill's A/A check, and one per-item rejection. */
function workspace(sandbox: string, theme: Theme): { ws: string; runDir: string } {
  const ws = join(sandbox, 'workspace');
  const dir = join(ws, 'house-style');
  const example = join(repoRoot, 'examples', 'house-style');
  for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml']) cpSync(join(example, f), join(dir, f));
  const runDir = join(dir, '.skillopt', 'runs', 'house-style_gates');
  const config = join(dir, 'skillopt.yaml');
  cli([
    'train',
    config,
    '--out',
    runDir,
    '--cfg-options',
    'evaluation.gate_test=paired',
    'evaluation.repeats=2',
    'evaluation.max_item_regressions=0',
  ]);
  cli(['eval', config, '--skill', join(runDir, 'best_skill.md'), '--split', 'selection', '--aa', '3']);
  // Display fixture: the sim target never breaks an item it passed, so the per-item rule never
  // fires on it (the rule itself is tested in test/unit/train/pairedGate.test.ts). Step 2's record
  // is made a rejection that broke two items the current skill passes, to show how it reads.
  const historyFile = join(runDir, 'history.json');
  const history = JSON.parse(readFileSync(historyFile, 'utf8')) as StepRecord[];
  const passed = readFileSync(join(runDir, 'selection_eval_baseline', 'results.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RolloutResult)
    .filter((r) => r.hard === 1)
    .map((r) => r.id);
  const step2 = history.find((r) => r.step === 2)!;
  step2.action = 'reject';
  step2.item_regressions = { max: 0, items: passed.slice(0, 2), rejected: true };
  writeFileSync(historyFile, JSON.stringify(history, null, 2));
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  writeFileSync(
    join(ws, '.vscode', 'settings.json'),
    JSON.stringify({ 'workbench.colorTheme': themes[theme], 'editor.minimap.enabled': false }, null, 1),
  );
  return { ws, runDir };
}

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-gates', out);
  const { tag, sandbox, checks, p } = s;
  const runs = (): ReturnType<Page['locator']> =>
    p().locator('.pane', { has: p().locator('.pane-header', { hasText: /^Runs/ }) });
  const row = (text: string | RegExp): ReturnType<Page['locator']> =>
    runs().locator('.monaco-list-row', { hasText: text }).first();
  try {
    await checks.step(`${tag} the Runs view shows the run's gate, scores and A/A check`, async () => {
      const { ws } = workspace(sandbox, theme);
      const { server, page } = await s.launch();
      await page.setViewportSize({ width: 1280, height: 760 });
      await openSkillOpt(page, server, ws, 'house-style');
      await row('house-style_gates').waitFor({ timeout: 60_000 });
      // Wide enough for the rows' descriptions to read.
      await sidebarWidth(page, 760);
      await row('house-style_gates').click();
      await row(/^Gate: paired/).waitFor({ timeout: 30_000 });
      await row(/^Evaluations/).click();
      await row('best_skill.md on selection').click();
      await row(/^A\/A check/).waitFor({ timeout: 30_000 });
      await p().mouse.move(1200, 700);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `runs-gate-${theme}.png`), `${tag} runs-gate`);
    await checks.check(`${tag} the rows read as the power check, the scores and the A/A check`, async () => {
      const label = async (text: RegExp): Promise<string> =>
        (await row(text).getAttribute('aria-label')) ?? '';
      assert.match(
        await label(/^Gate: paired/),
        /^Gate: paired, only Δ ≥ 0\.132 detectable \(19 items × 2 repeats, alpha 0\.05\) · A\/A ×3: strict gate accepts 0 of 6 \(0%\), paired 0$/,
      );
      assert.match(
        await label(/^Scores/),
        /^Scores, test: no skill \d\.\d{3} · initial \d\.\d{3} · best \d\.\d{3}$/,
      );
      assert.match(await label(/^A\/A check/), /^A\/A check, A\/A ×3: strict gate accepts 0 of 6/);
    });
    await checks.step(
      `${tag} Gate History shows the gate, the target alone and the per-item rule`,
      async () => {
        await closeEditors(p());
        // The panel gets the room: the sidebar back to a usual width.
        await sidebarWidth(p(), 300);
        await palette(p(), 'SkillOpt: Show Gate History');
        await pick(p(), 'house-style_gates');
        const view = webview(p());
        await view.locator('#app h1', { hasText: 'Gate History' }).waitFor({ timeout: 30_000 });
        await view.locator('.gate-line', { hasText: 'A/A ×3' }).waitFor({ timeout: 30_000 });
        await view.locator('table.steps tbody tr').first().waitFor();
        await p().waitForTimeout(1200);
      },
    );
    await checks.screenshot(
      s.page(),
      join(out, `gate-history-gate-${theme}.png`),
      `${tag} gate-history-gate`,
    );
    await checks.check(
      `${tag} the header says the power check, the A/A check and the target alone`,
      async () => {
        const lines = await webview(p()).locator('.gate-line').allTextContents();
        assert.match(
          lines[0] ?? '',
          /^Gate: paired; 19 items × 2 repeats: only Δ ≥ 0\.132 can be told from noise/,
        );
        assert.match(lines[1] ?? '', /^A\/A ×3: strict gate accepts 0 of 6 \(0%\), paired 0 /);
        assert.match(
          lines[2] ?? '',
          /^No skill \(the target alone\): selection \d\.\d{3}, test \d\.\d{3}\. The best skill/,
        );
        assert.match(
          (await webview(p()).locator('.summary').textContent()) ?? '',
          / · no skill \d\.\d{3} · /,
        );
      },
    );
    await checks.step(`${tag} the table marks the step the per-item rule turned down`, async () => {
      const badge = webview(p()).locator('table.steps .badge.regressions').first();
      await badge.scrollIntoViewIfNeeded();
      assert.equal(await badge.textContent(), 'broke 2 (rule)');
      assert.match(
        (await badge.getAttribute('aria-label')) ?? '',
        /^broke 2 item\(s\) the current skill passes \(at most 0 allowed, so rejected\): /,
      );
      await p().waitForTimeout(500);
    });
    await checks.screenshot(
      s.page(),
      join(out, `gate-history-rule-${theme}.png`),
      `${tag} gate-history-rule`,
    );
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemes(out, session).then((code) => process.exit(code));
