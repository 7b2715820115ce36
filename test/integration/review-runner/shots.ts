/**
 * Browser screenshots of the review features after a real `sim` run, in a light and a dark theme:
 * the inline review on SKILL.md (with a hover), the diff view with Accept / Reject in the editor
 * title, the folded protected block with its lock, and the Gate History panel. It also checks in
 * the live webview that an edit whose text contains `<script>` and HTML is shown as inert text.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/shots.ts [OUT_DIR] [light,dark]
 *
 * Uses the project's harness (test/integration/harness/host.ts): the VS Code server with SkillOpt
 * loaded from this checkout as a development extension, driven in Chromium. Prints `N passed, N failed`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import {
  elapsed,
  installVsCode,
  launchBrowser,
  makeSandbox,
  removeDir,
  repoRoot,
  startServer,
  palette,
} from '../harness/host';

const out = resolve(process.argv[2] ?? join(repoRoot, '.cache', 'review-screenshots'));
const themes = { light: 'Default Light Modern', dark: 'Default Dark Modern' } as const;
type Theme = keyof typeof themes;

/** Text an optimizer could write; the webview must show it, not run it. */
const hostile =
  '- Quote names <b>exactly</b>.<script>window.__skilloptPwned = 1</script><img src=x onerror="window.__skilloptPwned = 2">';

function train(ws: string): string {
  const dir = join(ws, 'house-style');
  const runDir = join(dir, '.skillopt', 'runs', 'house-style_demo');
  // Meta reflection on: its candidate deletes and moves rules, so the review shows struck-through lines.
  const r = spawnSync(
    process.execPath,
    [
      join(repoRoot, 'dist', 'cli.js'),
      'train',
      join(dir, 'skillopt.yaml'),
      '--out',
      runDir,
      '--cfg-options',
      'optimizer.use_meta_reflect=true',
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`skillopt train failed:\n${r.stdout}${r.stderr}`);
  return runDir;
}

/** The workspace: the example trained once, a copy whose step-1 edit is hostile, a skill with a protected block. */
function workspace(sandbox: string, theme: Theme): { ws: string; runDir: string } {
  const ws = join(sandbox, 'workspace');
  const example = join(repoRoot, 'examples', 'house-style');
  for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml'])
    cpSync(join(example, f), join(ws, 'house-style', f));
  const runDir = train(ws);
  const hostileRun = join(ws, 'house-style', '.skillopt', 'runs', 'house-style_hostile');
  cpSync(runDir, hostileRun, { recursive: true });
  const ranked = join(hostileRun, 'steps', 'step_0001', 'ranked_edits.json');
  const data = JSON.parse(readFileSync(ranked, 'utf8')) as { edits: Array<{ content?: string }> };
  data.edits[0]!.content = hostile;
  writeFileSync(ranked, JSON.stringify(data, null, 2));
  // A skill whose protected block has content: the slow update's candidate of the last epoch.
  const locked = join(ws, 'locked');
  mkdirSync(locked, { recursive: true });
  const slow = join(runDir, 'slow_update');
  const epochs = spawnSync('ls', [slow], { encoding: 'utf8' }).stdout.trim().split('\n');
  const withBlock = epochs
    .map((e) => join(slow, e, 'candidate_skill.md'))
    .map((p) => {
      try {
        return readFileSync(p, 'utf8');
      } catch {
        return '';
      }
    })
    .find((t) => /SLOW_UPDATE_START -->\n[^<]/.test(t));
  if (!withBlock) throw new Error('the sim run wrote no slow update with content');
  writeFileSync(join(locked, 'SKILL.md'), withBlock);
  cpSync(join(example, 'skillopt.yaml'), join(locked, 'skillopt.yaml'));
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  writeFileSync(
    join(ws, '.vscode', 'settings.json'),
    JSON.stringify(
      {
        'workbench.colorTheme': themes[theme],
        'editor.minimap.enabled': false,
      },
      null,
      1,
    ),
  );
  return { ws, runDir };
}

async function pick(page: Page, label: string | RegExp): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.click();
}

async function quickOpen(page: Page, path: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(path);
  // Rows show the file name with its folder as the description: pick the row of this folder.
  const [folder = '', name = path] = path.split('/');
  const row = page
    .locator('.quick-input-list .monaco-list-row', { hasText: name })
    .filter({ hasText: folder })
    .first();
  await row.waitFor();
  await row.click();
}

/** Reverts and closes editor after editor (a review leaves its document dirty on purpose). */
async function closeEditors(page: Page): Promise<void> {
  for (let i = 0; i < 6 && (await page.locator('.tabs-container .tab').count()) > 0; i++) {
    await palette(page, 'View: Revert and Close Editor');
    await page.waitForTimeout(400);
  }
}

/**
 * Hovers the editor text until the hover with `expected` shows. Monaco opens a hover on mouse
 * movement after a delay, and a pointer that is already there (or a busy machine) can miss it.
 */
async function hoverUntil(page: Page, text: string, expected: string): Promise<void> {
  const target = page.locator('.view-lines span', { hasText: text }).last();
  const hover = page.locator('.monaco-hover', { hasText: expected }).first();
  for (let attempt = 1; ; attempt++) {
    await page.mouse.move(5, 5);
    await target.hover();
    try {
      await hover.waitFor({ timeout: 5_000 });
      return;
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

function webview(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
}

async function activeWebviewFrame(page: Page): Promise<Frame | undefined> {
  for (const f of page.frames()) {
    if (
      await f
        .locator('#app table.steps')
        .count()
        .catch(() => 0)
    )
      return f;
  }
  return undefined;
}

async function session(theme: Theme, checks: string[], failures: string[]): Promise<void> {
  const install = installVsCode();
  const sandbox = makeSandbox(`skillopt-shots-${theme}-`, {
    // The web workbench saves after a delay by default; the fixture files must stay as they are.
    settings: {
      'workbench.colorTheme': themes[theme],
      'editor.minimap.enabled': false,
      'files.autoSave': 'off',
    },
  });
  const { ws, runDir } = workspace(sandbox, theme);
  const server = await startServer(install, sandbox);
  const browser = await launchBrowser(sandbox);
  const page = browser.pages()[0] ?? (await browser.newPage());
  // The webview's strict CSP must hold: Chromium reports any refused script, style or image.
  const refused: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
  });
  const shot = async (name: string): Promise<void> => {
    const path = join(out, `${name}-${theme}.png`);
    await page.screenshot({ path });
    console.log(`screenshot ${path} (${elapsed()})`);
  };
  try {
    const remote = `vscode-remote://127.0.0.1:${server.port}${repoRoot}`;
    const payload = JSON.stringify([['extensionDevelopmentPath', remote]]);
    await page.goto(`${server.url}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(payload)}`);
    await page
      .locator('.explorer-folders-view .monaco-list-row', { hasText: 'house-style' })
      .first()
      .waitFor({ timeout: 90_000 });
    // The Runs view lists the run once the extension is active and has read the run folders.
    await page
      .locator('.activitybar .action-label[aria-label*="SkillOpt"]')
      .first()
      .click({ timeout: 60_000 });
    await page
      .locator('.monaco-list-row', { hasText: 'house-style_demo' })
      .first()
      .waitFor({ timeout: 60_000 });

    // 1. Inline review of step 1's candidate on the skill.
    await quickOpen(page, 'house-style/SKILL.md');
    await page.locator('.tabs-container .tab', { hasText: 'SKILL.md' }).first().waitFor();
    await palette(page, 'SkillOpt: Review Step Candidate…');
    await pick(page, 'house-style_demo');
    await pick(page, 'Step 1');
    await page
      .locator('.codelens-decoration', { hasText: 'Accept All' })
      .first()
      .waitFor({ timeout: 30_000 });
    await page.waitForTimeout(800);
    await hoverUntil(page, 'Write dates as YYYY-MM-DD', 'support_count');
    await page.waitForTimeout(600);
    await shot('review-inline');
    await page.mouse.move(5, 5);

    // 2. The diff view, with Accept / Reject Candidate in the editor title.
    await page.locator('.codelens-decoration a', { hasText: 'Open in Diff View' }).first().click();
    await page
      .locator('.tabs-container .tab', { hasText: 'step 1 candidate' })
      .first()
      .waitFor({ timeout: 20_000 });
    await page
      .locator('.editor-actions [aria-label*="Accept Candidate"]')
      .first()
      .waitFor({ timeout: 10_000 });
    await page.waitForTimeout(1200);
    await shot('review-diff');
    await closeEditors(page);

    // 2b. The epoch's meta reflection: rules deleted (struck through) and gathered under a heading.
    const meta = JSON.parse(
      readFileSync(join(runDir, 'meta_reflect', 'epoch_01', 'meta_reflect_result.json'), 'utf8'),
    ) as {
      skill_hash: string;
    };
    const snapshots = join(runDir, 'skills');
    const before = readdirSync(snapshots)
      .map((f) => readFileSync(join(snapshots, f), 'utf8'))
      .find((t) => createHash('sha256').update(t, 'utf8').digest('hex').slice(0, 16) === meta.skill_hash);
    if (!before) throw new Error('no skill snapshot matches the meta reflection');
    writeFileSync(join(ws, 'house-style', 'SKILL.md'), before);
    await quickOpen(page, 'house-style/SKILL.md');
    await page.waitForTimeout(800);
    await palette(page, 'SkillOpt: Review Step Candidate…');
    await pick(page, 'house-style_demo');
    await pick(page, 'Epoch 1 meta reflection');
    await page
      .locator('.codelens-decoration', { hasText: 'Accept All' })
      .first()
      .waitFor({ timeout: 30_000 });
    await page.waitForTimeout(800);
    await shot('review-inline-meta');
    await closeEditors(page);

    // 3. A skill under optimization with a protected block: folded, locked, explained on hover.
    await quickOpen(page, 'locked/SKILL.md');
    await page
      .locator('.margin-view-overlays .codicon-folding-collapsed')
      .first()
      .waitFor({ timeout: 20_000 });
    await page.waitForTimeout(1000);
    await hoverUntil(page, 'SLOW_UPDATE_START', 'Protected slow-update block');
    await page.waitForTimeout(600);
    await shot('locked-block');
    await page.mouse.move(5, 5);
    await closeEditors(page);

    // 4. Gate History of the run.
    await palette(page, 'SkillOpt: Show Gate History');
    await pick(page, 'house-style_demo');
    const view = webview(page);
    await view.locator('#app h1', { hasText: 'Gate History' }).waitFor({ timeout: 30_000 });
    await view.locator('table.steps tbody tr').first().waitFor();
    await view.locator('table.steps details summary').first().click();
    await page.waitForTimeout(1200);
    await shot('gate-history');
    const probe = await activeWebviewFrame(page);
    console.log(
      await probe?.evaluate(() =>
        [
          '--vscode-charts-orange',
          '--vscode-charts-blue',
          '--vscode-charts-green',
          '--vscode-charts-purple',
          '--vscode-editor-background',
        ]
          .map((v) => `${v}=${getComputedStyle(document.documentElement).getPropertyValue(v)}`)
          .join(' '),
      ),
    );
    // The table under the charts, with one step's edits open.
    await view.locator('table.steps').scrollIntoViewIfNeeded();
    await page.waitForTimeout(500);
    await shot('gate-history-table');
    await view.locator('.grid').evaluate((el) => el.parentElement?.scrollTo(0, 0));

    // The table has a row per step, and a step's link opens its candidate in the diff view.
    const steps = (JSON.parse(readFileSync(join(runDir, 'history.json'), 'utf8')) as unknown[]).length;
    const rowsShown = await view.locator('table.steps tbody td.step', { hasText: /^Step \d+$/ }).count();
    (rowsShown === steps ? checks : failures).push(
      `[${theme}] gate history table: ${rowsShown} step rows for ${steps} steps`,
    );
    await view.locator('table.steps tbody button.step-link', { hasText: /^Step 1$/ }).click();
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 20_000 });
    checks.push(`[${theme}] a step's link in the Gate History opens its diff`);

    // The panel survives a window reload (its serializer brings the same run back).
    await page.locator('.tabs-container .tab', { hasText: 'Gate History' }).first().click();
    await view.locator('#app h1', { hasText: 'house-style_demo' }).waitFor({ timeout: 20_000 });
    await palette(page, 'Developer: Reload Window');
    await page
      .locator('.tabs-container .tab', { hasText: 'Gate History' })
      .first()
      .waitFor({ timeout: 60_000 });
    await page.locator('.tabs-container .tab', { hasText: 'Gate History' }).first().click();
    await webview(page).locator('#app h1', { hasText: 'house-style_demo' }).waitFor({ timeout: 60_000 });
    checks.push(`[${theme}] the Gate History panel comes back with its run after a window reload`);

    // 5. The hostile edit text stays text.
    await closeEditors(page);
    await palette(page, 'SkillOpt: Show Gate History');
    await pick(page, 'house-style_hostile');
    const hv = webview(page);
    await hv.locator('#app h1', { hasText: 'house-style_hostile' }).waitFor({ timeout: 30_000 });
    await hv.locator('table.steps details summary').first().click();
    const frame = await activeWebviewFrame(page);
    if (!frame) throw new Error('no Gate History frame');
    const result = await frame.evaluate(() => {
      const w = window as unknown as { __skilloptPwned?: number };
      const list = document.querySelector('.edit-list');
      return {
        text: Array.from(document.querySelectorAll('.edit-content'), (e) => e.textContent ?? '').join('\n'),
        elements: list ? list.querySelectorAll('script, img, b').length : -1,
        pwned: w.__skilloptPwned ?? null,
      };
    });
    await hv.locator('.edit-content').first().scrollIntoViewIfNeeded();
    await page.waitForTimeout(500);
    await shot('gate-history-hostile');
    const inert =
      result.text.includes('<script>window.__skilloptPwned = 1</script>') &&
      result.elements === 0 &&
      result.pwned === null;
    (inert ? checks : failures).push(`[${theme}] hostile edit text shown inertly: ${JSON.stringify(result)}`);
    (refused.length === 0 ? checks : failures).push(
      `[${theme}] no CSP violations ${JSON.stringify(refused)}`,
    );
    checks.push(`[${theme}] screenshots`);
  } catch (err) {
    await page.screenshot({ path: join(out, `failure-${theme}.png`) }).catch(() => undefined);
    failures.push(`[${theme}] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    console.log(server.log().slice(-3000));
  } finally {
    await browser.close().catch(() => undefined);
    server.stop();
    removeDir(sandbox);
  }
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const checks: string[] = [];
  const failures: string[] = [];
  const wanted = (process.argv[3]?.split(',') ?? Object.keys(themes)).filter((t): t is Theme => t in themes);
  for (const theme of wanted) await session(theme, checks, failures);
  for (const c of checks) console.log(`ok   ${c}`);
  for (const f of failures) console.log(`FAIL ${f}`);
  console.log(`${checks.length} passed, ${failures.length} failed`);
  process.exit(failures.length === 0 ? 0 : 1);
}

void main();
