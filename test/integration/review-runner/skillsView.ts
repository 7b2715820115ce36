/**
 * The Skills view in Chromium, in a light, a dark and a high-contrast theme, with screenshots for a
 * person to look at: skills in .github/skills, .claude/skills (one with evals, one whose front
 * matter does not parse), .agents/skills and a folder named by chat.agentSkillsLocations, and a
 * skill trained by a CLI run with its best score; the inline actions on a row (Reveal Last Run
 * selects the run in the Runs view); and the welcome view once every skill is gone. Each check is
 * named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/skillsView.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/skills-view-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import type { Results } from '../harness/checks';
import { repoRoot } from '../harness/host';
import { openSkillOpt, runThemesWithCliRun, themeSession, widenSideBar } from './ui';
import { type Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'skills-view-screenshots'));

function writeSkill(ws: string, location: string, name: string, front: string, body: string): void {
  const file = join(ws, location, name, 'SKILL.md');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `---\n${front}---\n\n${body}\n`);
}

/** Skills in every location, and the house-style example with the CLI's run. */
function workspace(sandbox: string, cliRun: string): string {
  const ws = join(sandbox, 'workspace');
  writeSkill(
    ws,
    '.github/skills',
    'release-notes',
    'name: release-notes\ndescription: Write release notes from merged pull requests, grouped by area.\n',
    '# Release notes\n\nGroup changes by area; one line each.',
  );
  writeSkill(
    ws,
    '.claude/skills',
    'pdf-forms',
    'name: pdf-forms\ndescription: Fill PDF forms from a table of values. Use when a task names a form.\n',
    '# PDF forms\n\nRead the field names first.',
  );
  mkdirSync(join(ws, '.claude', 'skills', 'pdf-forms', 'evals'));
  writeFileSync(join(ws, '.claude', 'skills', 'pdf-forms', 'evals', 'evals.json'), '{"evals": []}');
  writeSkill(
    ws,
    '.claude/skills',
    'changelog',
    'name: changelog\ndescription: [Keep a changelog entry per release\n',
    '# Changelog',
  );
  writeSkill(
    ws,
    '.agents/skills',
    'bug-triage',
    'name: bug-triage\ndescription: Label new issues by component and severity.\n',
    '# Bug triage',
  );
  writeSkill(
    ws,
    'team-skills',
    'sql-style',
    'name: sql-style\ndescription: Format SQL the way the data team reviews it.\n',
    '# SQL style',
  );
  const example = join(repoRoot, 'examples', 'house-style');
  for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml'])
    cpSync(join(example, f), join(ws, 'house-style', f));
  const runDir = join(ws, 'house-style', '.skillopt', 'runs', 'house-style_demo');
  cpSync(cliRun, runDir, { recursive: true });
  const config = JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  config.skill_init = join(ws, 'house-style', 'SKILL.md');
  writeFileSync(join(runDir, 'config.json'), JSON.stringify(config, null, 2));
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  writeFileSync(
    join(ws, '.vscode', 'settings.json'),
    JSON.stringify({ 'chat.agentSkillsLocations': { 'team-skills': true } }, null, 1),
  );
  return ws;
}

/** What each row is read out as (the row's accessible label), in the view's order. */
const expectedRows = [
  /^bug-triage, Codex · not trained yet$/,
  /^changelog, Claude Code · not trained yet · 1 error$/,
  /^house-style, best \d\.\d{3} · (just now|\d+ min ago) · not loaded by an agent$/,
  /^pdf-forms, Claude Code · not trained yet · has evals$/,
  /^release-notes, Copilot \/ VS Code · not trained yet$/,
  /^sql-style, VS Code · not trained yet$/,
];

async function session(theme: Theme, cliRun: string): Promise<Results> {
  const s = themeSession(theme, 'skillopt-skills', out);
  const { tag, sandbox, checks, p } = s;
  let ws = '';
  const view = (): ReturnType<Page['locator']> =>
    p().locator('.pane', { has: p().locator('.pane-header', { hasText: /^Skills/ }) });
  try {
    await checks.step(`${tag} the Skills view lists the workspace's skills`, async () => {
      ws = workspace(sandbox, cliRun);
      const { server, page } = await s.launch();
      // The view and one editor, without a wide empty margin (which also reads as blank in high contrast).
      await page.setViewportSize({ width: 1100, height: 720 });
      await openSkillOpt(page, server, ws, 'house-style');
      await view().locator('.monaco-list-row', { hasText: 'house-style' }).waitFor({ timeout: 60_000 });
      await view().locator('.monaco-list-row').nth(5).waitFor({ timeout: 30_000 });
      // Wide enough for a whole row to read (a narrow view cuts descriptions with an ellipsis).
      await widenSideBar(page);
      // No hover tooltip over the rows.
      await page.mouse.move(800, 520);
      await page.waitForTimeout(800);
    });
    await checks.step(`${tag} clicking a row opens its SKILL.md`, async () => {
      // The longest skill: a high-contrast page with little text in it reads as blank to the check.
      await view().locator('.monaco-list-row', { hasText: 'house-style' }).click();
      await p().locator('.tabs-container .tab', { hasText: 'SKILL.md' }).first().waitFor({ timeout: 30_000 });
      await p()
        .locator('.view-lines', { hasText: 'House Style Answers' })
        .first()
        .waitFor({ timeout: 30_000 });
      await p().mouse.move(800, 520);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `skills-view-${theme}.png`), `${tag} skills-view`);
    await checks.check(
      `${tag} each row reads as its name, agent, latest run, evals and problems`,
      async () => {
        const labels = await view()
          .locator('.monaco-list-row')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
        assert.equal(labels.length, expectedRows.length, labels.join(' | '));
        labels.forEach((l, i) => assert.match(l, expectedRows[i]!));
      },
    );
    await checks.check(`${tag} the skill whose front matter does not parse has an error icon`, async () => {
      const row = view().locator('.monaco-list-row', { hasText: 'changelog' });
      assert.equal(await row.locator('.codicon-error').count(), 1);
    });
    await checks.step(
      `${tag} a trained skill's row offers Optimize, Evaluate and Reveal Last Run`,
      async () => {
        const row = view().locator('.monaco-list-row', { hasText: 'house-style' });
        await row.hover();
        for (const action of ['Optimize', 'Evaluate', 'Reveal Last Run'])
          await row.locator(`.action-label[aria-label="${action}"]`).waitFor({ timeout: 10_000 });
        await p().waitForTimeout(300);
      },
    );
    await checks.screenshot(
      s.page(),
      join(out, `skills-view-actions-${theme}.png`),
      `${tag} skills-view-actions`,
    );
    await checks.check(`${tag} Reveal Last Run selects the skill's run in the Runs view`, async () => {
      const row = view().locator('.monaco-list-row', { hasText: 'house-style' });
      await row.hover();
      await row.locator('.action-label[aria-label="Reveal Last Run"]').click();
      await p()
        .locator('.pane', { has: p().locator('.pane-header', { hasText: /^Runs/ }) })
        .locator('.monaco-list-row[aria-selected="true"]', { hasText: 'house-style_demo' })
        .waitFor({ timeout: 15_000 });
    });
    await checks.step(`${tag} with every skill gone, the welcome view offers New Skill`, async () => {
      for (const dir of ['.github', '.claude', '.agents', 'team-skills', 'house-style'])
        rmSync(join(ws, dir), { recursive: true, force: true });
      await view()
        .locator('.welcome-view-content', { hasText: 'No skills in this workspace' })
        .waitFor({ timeout: 30_000 });
      await view().locator('.welcome-view-content a', { hasText: 'New Skill' }).waitFor();
      await p().mouse.move(800, 520);
      await p().waitForTimeout(500);
    });
    await checks.screenshot(
      s.page(),
      join(out, `skills-view-welcome-${theme}.png`),
      `${tag} skills-view-welcome`,
    );
  } finally {
    await s.end();
  }
  return checks.results();
}

void runThemesWithCliRun(out, session).then((code) => process.exit(code));
