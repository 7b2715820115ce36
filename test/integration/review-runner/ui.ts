/** Workbench moves for the review screenshots, on top of test/integration/harness/host.ts. */
import type { BrowserContext, Frame, FrameLocator, Page } from 'playwright-core';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Checks, combine, report, type Results } from '../harness/checks';
import {
  installVsCode,
  launchBrowser,
  makeSandbox,
  palette,
  removeDir,
  repoRoot,
  startServer,
  trainWithCli,
  type Server,
} from '../harness/host';
import { themes, type Theme } from './workspace';

/** Ends a browser session: the server log's tail when a check failed, then everything closed. */
export async function endSession(
  checks: Checks,
  server: Server | undefined,
  browser: BrowserContext | undefined,
  sandbox: string,
): Promise<void> {
  if (checks.results().failed && server) console.log(server.log().slice(-3000));
  await browser?.close().catch(() => undefined);
  server?.stop();
  removeDir(sandbox);
}

/**
 * One theme's browser session of a screenshot runner: its sandbox (settings in that theme), its
 * checks (a failure screenshot in `out`), and the server, browser and page `launch` opens.
 */
export function themeSession(
  theme: Theme,
  prefix: string,
  out: string,
  settings: Record<string, unknown> = {},
): {
  tag: string;
  sandbox: string;
  checks: Checks;
  p: () => Page;
  page: () => Page | undefined;
  launch: () => Promise<{ server: Server; page: Page }>;
  end: () => Promise<void>;
} {
  const sandbox = makeSandbox(`${prefix}-${theme}-`, {
    settings: { 'workbench.colorTheme': themes[theme], 'editor.minimap.enabled': false, ...settings },
  });
  let server: Server | undefined;
  let browser: BrowserContext | undefined;
  let page: Page | undefined;
  const checks = new Checks(async () => {
    await page?.screenshot({ path: join(out, `failure-${theme}.png`) });
  });
  return {
    tag: `[${theme}]`,
    sandbox,
    checks,
    p: () => page!,
    page: () => page,
    async launch() {
      server = await startServer(installVsCode(), sandbox);
      browser = await launchBrowser(sandbox);
      page = browser.pages()[0] ?? (await browser.newPage());
      // Chromium's forced colours, as Windows high contrast sets them, beside VS Code's own theme.
      if (theme === 'hc') await page.emulateMedia({ forcedColors: 'active', colorScheme: 'dark' });
      return { server, page };
    },
    end: () => endSession(checks, server, browser, sandbox),
  };
}

/** Opens `folder` in the workbench, SkillOpt loaded from this checkout as a development extension. */
export async function openWorkbench(page: Page, server: Server, folder: string): Promise<void> {
  const remote = `vscode-remote://127.0.0.1:${server.port}${repoRoot}`;
  const payload = JSON.stringify([['extensionDevelopmentPath', remote]]);
  await page.goto(
    `${server.url}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(payload)}`,
  );
}

/** Opens `ws` as openWorkbench does, waits for the Explorer to list `folder`, and opens the SkillOpt side bar. */
export async function openSkillOpt(page: Page, server: Server, ws: string, folder: string): Promise<void> {
  await openWorkbench(page, server, ws);
  await page
    .locator('.explorer-folders-view .monaco-list-row', { hasText: folder })
    .first()
    .waitFor({ timeout: 90_000 });
  // The activity bar shows SkillOpt once the extension has contributed its views.
  await page.locator('.activitybar .action-label[aria-label*="SkillOpt"]').first().click({ timeout: 60_000 });
}

/** One session per theme named in argv[3] (`light,dark,hc`; all by default); exit code of the whole. */
export async function runThemes(out: string, session: (theme: Theme) => Promise<Results>): Promise<number> {
  mkdirSync(out, { recursive: true });
  const wanted = (process.argv[3]?.split(',') ?? Object.keys(themes)).filter((t): t is Theme => t in themes);
  const results: Results[] = [];
  for (const theme of wanted) results.push(await session(theme));
  return report(combine(...results));
}

/** One CLI run trained in a scratch folder, then one session per theme with it (as runThemes). */
export async function runThemesWithCliRun(
  out: string,
  session: (theme: Theme, cliRun: string) => Promise<Results>,
): Promise<number> {
  const scratch = makeSandbox('skillopt-cli-run-');
  try {
    const cliRun = trainWithCli(scratch);
    return await runThemes(out, (theme) => session(theme, cliRun));
  } finally {
    removeDir(scratch);
  }
}

/** Drags the side bar wider, so a whole tree row reads (a narrow view cuts descriptions with an ellipsis). */
export async function widenSideBar(page: Page): Promise<void> {
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (!bar) return;
  await page.mouse.move(bar.x + bar.width + 1, bar.y + 200);
  await page.mouse.down();
  await page.mouse.move(bar.x + 470, bar.y + 200, { steps: 5 });
  await page.mouse.up();
}

/**
 * Opens the house-style example copied to `ws` on the SkillOpt side bar and trains its SKILL.md from
 * the Runs view's own button (the palette can lag behind activation in this browser), through the
 * start dialog's Start Training.
 */
export async function trainHouseStyle(page: Page, server: Server, ws: string): Promise<void> {
  cpSync(join(repoRoot, 'examples', 'house-style'), ws, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 720 });
  await openSkillOpt(page, server, ws, 'SKILL.md');
  await quickOpen(page, 'SKILL.md');
  await page.locator('.monaco-button', { hasText: 'Optimize This Skill' }).first().click({ timeout: 60_000 });
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'model calls' });
  await dialog.locator('.monaco-button', { hasText: 'Start Training' }).click({ timeout: 60_000 });
}

export async function pick(page: Page, label: string | RegExp): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.click();
}

export async function quickOpen(page: Page, path: string): Promise<void> {
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
export async function closeEditors(page: Page): Promise<void> {
  const tabs = page.locator('.tabs-container .tab');
  for (let i = 0, open = await tabs.count(); i < 6 && open > 0; i++) {
    await palette(page, 'View: Revert and Close Editor');
    // The next command goes to the next editor only once this one has closed.
    await tabs.nth(open - 1).waitFor({ state: 'detached', timeout: 30_000 });
    open = await tabs.count();
  }
}

/**
 * Picks an item of the context menu just opened (a right-click). The menu is ready once it holds
 * the keyboard focus; a click that comes as it opens is taken for the one that opened it, so the
 * keys walk to the item and Enter runs it.
 */
export async function pickMenuItem(page: Page, label: string): Promise<void> {
  const item = page
    .locator('.monaco-menu .action-item', { has: page.locator('.action-label', { hasText: label }) })
    .first();
  await item.waitFor({ timeout: 30_000 });
  await page.locator('.context-view :focus').first().waitFor({ timeout: 30_000 });
  const focused = (): Promise<boolean> => item.evaluate((e) => e.classList.contains('focused'));
  for (let i = 0; i < 40 && !(await focused()); i++) await page.keyboard.press('ArrowDown');
  if (!(await focused())) throw new Error(`the context menu's "${label}" could not be reached with the keys`);
  await page.keyboard.press('Enter');
}

/**
 * Hovers the editor text until the hover with `expected` shows. Monaco opens a hover on mouse
 * movement after a delay, and a pointer that is already there (or a busy machine) can miss it.
 */
export async function hoverUntil(page: Page, text: string, expected: string): Promise<void> {
  const target = page.locator('.view-lines span', { hasText: text }).last();
  const hover = page.locator('.monaco-hover', { hasText: expected }).first();
  for (let attempt = 1; ; attempt++) {
    await page.mouse.move(5, 5);
    await target.hover();
    try {
      // A loaded machine's extension host may answer the hover provider late (seen: 3 × 5 s missed).
      await hover.waitFor({ timeout: 10_000 });
      return;
    } catch (err) {
      if (attempt === 4) throw err;
    }
  }
}

export function webview(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
}

export async function activeWebviewFrame(page: Page): Promise<Frame | undefined> {
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

/** Drags the sidebar's edge to make it `width` pixels wide: tree rows read whole, or a panel gets room. */
export async function sidebarWidth(page: Page, width: number): Promise<void> {
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (!bar) return;
  await page.mouse.move(bar.x + bar.width + 1, bar.y + 200);
  await page.mouse.down();
  await page.mouse.move(bar.x + width, bar.y + 200, { steps: 5 });
  await page.mouse.up();
}
