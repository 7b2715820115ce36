/**
 * The Runs view grouped by skill in Chromium, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: two skills with runs of the CLI (one trained twice), each
 * under a row named from its front matter; the rows' accessible labels and tree levels; the
 * keyboard (collapse, expand, move into a skill's runs); a run row's inline actions as in the flat
 * list, and its right-click Show Gate History; and the title's toggle to one list and back. Each
 * check is named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/runsView.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/runs-view-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { openSkillOpt, pickMenuItem, runThemesWithCliRun, themeSession, webview, widenSideBar } from './ui';
import { type Theme } from './workspace';
import { cutOffWords } from '../../../src/protocol/words';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'runs-view-screenshots'));

/** house-style (the example, trained twice) and release-notes (trained once), each with its config. */
function workspace(sandbox: string, cliRun: string): string {
  const ws = join(sandbox, 'workspace');
  const example = join(repoRoot, 'examples', 'house-style');
  const skills = {
    'house-style': readFileSync(join(example, 'SKILL.md'), 'utf8'),
    'release-notes':
      '---\nname: release-notes\ndescription: Write release notes from merged pull requests, grouped by area.\n---\n\n# Release notes\n\nGroup changes by area; one line each.\n',
  };
  const runs: Array<[keyof typeof skills, string]> = [
    ['house-style', '2026-05-02_house-style'],
    ['house-style', '2026-05-09_house-style'],
    ['release-notes', '2026-05-06_release-notes'],
  ];
  for (const [name, text] of Object.entries(skills)) {
    mkdirSync(join(ws, name), { recursive: true });
    writeFileSync(join(ws, name, 'SKILL.md'), text);
    for (const f of ['tasks.jsonl', 'skillopt.yaml']) cpSync(join(example, f), join(ws, name, f));
  }
  for (const [skill, run] of runs) {
    const dir = join(ws, skill, '.skillopt', 'runs', run);
    cpSync(cliRun, dir, { recursive: true });
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    config.skill_init = join(ws, skill, 'SKILL.md');
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  }
  // One run as a stop left it with a real model: two requests cut off before their reply.
  const paid = {
    session: 'shot',
    t: 1,
    step: 1,
    phase: 'step',
    kind: 'usage',
    role: 'target',
    provider: 'openai',
    model: 'gpt-4o',
  };
  writeFileSync(
    join(ws, 'release-notes', '.skillopt', 'runs', '2026-05-06_release-notes', 'ledger.jsonl'),
    [
      { ...paid, stage: 'rollout', calls: 24, prompt_tokens: 9100, completion_tokens: 700, dollars: 0.0508 },
      {
        ...paid,
        stage: 'selection',
        calls: 8,
        prompt_tokens: 2300,
        completion_tokens: 180,
        dollars: 0.0255,
        cut_off: 2,
      },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  return ws;
}

const run = String.raw`, finished · best \d\.\d{3}$`;
/** The rows as read out, in order, with their tree level. */
const groupedRows: Array<[RegExp, string]> = [
  [/^house-style, 2 runs$/, '1'],
  [new RegExp(`^2026-05-09_house-style${run}`), '2'],
  [new RegExp(`^2026-05-02_house-style${run}`), '2'],
  [/^release-notes, 1 run$/, '1'],
  [new RegExp(`^2026-05-06_release-notes${run}`), '2'],
];
const flatRows: RegExp[] = [
  new RegExp(`^2026-05-09_house-style${run}`),
  new RegExp(`^2026-05-06_release-notes${run}`),
  new RegExp(`^2026-05-02_house-style${run}`),
];

async function session(theme: Theme, cliRun: string): Promise<Results> {
  const s = themeSession(theme, 'skillopt-runs', out);
  const { tag, sandbox, checks, p } = s;
  const view = (): ReturnType<Page['locator']> =>
    p().locator('.pane', { has: p().locator('.pane-header', { hasText: /^Runs/ }) });
  const rowsRead = (): Promise<Array<{ label: string; level: string }>> =>
    view()
      .locator('.monaco-list-row')
      .evaluateAll((rows) =>
        rows.map((r) => ({
          label: r.getAttribute('aria-label') ?? '',
          level: r.getAttribute('aria-level') ?? '',
        })),
      );
  const focusedRow = (): Promise<string | null> =>
    view().locator('.monaco-list-row.focused').first().getAttribute('aria-label');
  /** Out of the way: no hover tooltip over the rows. */
  const rest = async (): Promise<void> => {
    await p().mouse.move(900, 600);
    await p().waitForTimeout(800);
  };
  try {
    await checks.step(`${tag} the Runs view shows a row per skill with its runs under it`, async () => {
      const ws = workspace(sandbox, cliRun);
      const { server, page } = await s.launch();
      await page.setViewportSize({ width: 1100, height: 720 });
      await openSkillOpt(page, server, ws, 'house-style');
      await view()
        .locator('.monaco-list-row', { hasText: 'release-notes' })
        .first()
        .waitFor({ timeout: 90_000 });
      await view().locator('.monaco-list-row').nth(4).waitFor({ timeout: 60_000 });
      // Wide enough for a whole row to read.
      await widenSideBar(page);
      // The skill open beside the view (a high-contrast page with little text reads as blank to the check).
      await p()
        .locator('.pane', { has: p().locator('.pane-header', { hasText: /^Skills/ }) })
        .locator('.monaco-list-row', { hasText: 'house-style' })
        .click();
      await p()
        .locator('.view-lines', { hasText: 'House Style Answers' })
        .first()
        .waitFor({ timeout: 30_000 });
      await rest();
    });
    await checks.screenshot(s.page(), join(out, `runs-by-skill-${theme}.png`), `${tag} runs-by-skill`);
    await checks.check(
      `${tag} each row reads as the skill's name and run count, or the run as before`,
      async () => {
        const rows = await rowsRead();
        assert.equal(rows.length, groupedRows.length, rows.map((r) => r.label).join(' | '));
        rows.forEach((r, i) => {
          assert.match(r.label, groupedRows[i]![0]);
          assert.equal(r.level, groupedRows[i]![1], `${r.label}: tree level`);
        });
      },
    );
    await checks.check(
      `${tag} the keyboard collapses a skill, opens it again and moves into its runs`,
      async () => {
        const skill = view().locator('.monaco-list-row[aria-label="release-notes, 1 run"]');
        const expanded = (value: 'true' | 'false'): Promise<unknown> =>
          p().waitForFunction(
            (v) =>
              document
                .querySelector('.monaco-list-row[aria-label="release-notes, 1 run"]')
                ?.getAttribute('aria-expanded') === v,
            value,
            { timeout: 10_000 },
          );
        // A click on a skill's row folds it, as on any folder row; the keyboard opens and closes it.
        await skill.click();
        await expanded('false');
        await p().keyboard.press('ArrowRight');
        await expanded('true');
        await p().keyboard.press('ArrowLeft');
        await expanded('false');
        await p().keyboard.press('ArrowRight');
        await expanded('true');
        await p().keyboard.press('ArrowDown');
        assert.match((await focusedRow()) ?? '', /^2026-05-06_release-notes, finished/);
        await p().keyboard.press('ArrowUp');
        await p().keyboard.press('ArrowUp');
        assert.match((await focusedRow()) ?? '', /^2026-05-02_house-style, finished/);
      },
    );
    await checks.step(`${tag} a run inside a skill keeps its inline actions`, async () => {
      const row = view().locator('.monaco-list-row', { hasText: '2026-05-09_house-style' }).first();
      await row.hover();
      await row.locator('.action-label[aria-label="Apply Best Skill"]').waitFor({ timeout: 10_000 });
      await p().waitForTimeout(300);
    });
    await checks.screenshot(
      s.page(),
      join(out, `runs-by-skill-actions-${theme}.png`),
      `${tag} runs-by-skill-actions`,
    );
    await checks.step(
      `${tag} a run's hover says its spend is a lower bound when a stop cut requests off`,
      async () => {
        const row = view().locator('.monaco-list-row', { hasText: '2026-05-06_release-notes' }).first();
        await row.hover();
        const hover = p().locator('.monaco-hover, .workbench-hover', { hasText: 'a lower bound' }).first();
        await hover.waitFor({ timeout: 15_000 });
        assert.match(
          await hover.innerText(),
          new RegExp(`Model calls: 32 · spend ≥ \\$0\\.08, ${cutOffWords(2).replace(/[().]/g, '\\$&')}`),
        );
      },
    );
    await checks.screenshot(s.page(), join(out, `runs-cut-off-${theme}.png`), `${tag} runs-cut-off`);
    await rest();
    await checks.step(
      `${tag} right-click on a run inside a skill, Show Gate History opens its panel`,
      async () => {
        const row = view().locator('.monaco-list-row', { hasText: '2026-05-09_house-style' }).first();
        await row.click({ button: 'right' });
        await pickMenuItem(p(), 'Show Gate History');
        await webview(p())
          .locator('#app h1', { hasText: /Gate History: 2026-05-09_house-style/ })
          .waitFor({ timeout: 30_000 });
        await palette(p(), 'View: Close All Editors');
        await rest();
      },
    );
    await checks.step(`${tag} the title's "Show Runs as a List" shows one list`, async () => {
      await view().locator('.pane-header').hover();
      await view().locator('.action-label[aria-label="Show Runs as a List"]').click();
      await view()
        .locator('.monaco-list-row[aria-label^="house-style, "]')
        .waitFor({ state: 'detached', timeout: 15_000 });
      await rest();
    });
    await checks.screenshot(s.page(), join(out, `runs-flat-${theme}.png`), `${tag} runs-flat`);
    await checks.check(`${tag} the list holds the runs alone, newest first, at the top level`, async () => {
      const rows = await rowsRead();
      assert.equal(rows.length, flatRows.length, rows.map((r) => r.label).join(' | '));
      rows.forEach((r, i) => {
        assert.match(r.label, flatRows[i]!);
        assert.equal(r.level, '1');
      });
    });
    await checks.check(`${tag} "Group Runs by Skill" brings the skill rows back`, async () => {
      await view().locator('.pane-header').hover();
      await view().locator('.action-label[aria-label="Group Runs by Skill"]').click();
      await view().locator('.monaco-list-row[aria-label="house-style, 2 runs"]').waitFor({ timeout: 15_000 });
    });
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemesWithCliRun(out, session).then((code) => process.exit(code));
