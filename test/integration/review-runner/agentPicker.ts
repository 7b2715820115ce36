/**
 * The guided setup's target picker in Chromium, in a light, a dark and a high-contrast theme, with
 * screenshots for a person to look at: the agent CLIs among the targets, Claude Code and Codex
 * installed (the real CLIs from .cache/agent-clis) with their versions, Copilot CLI not
 * installed (COPILOT_EXEC_PATH names a missing program) with its install command. Each check is
 * named; prints `N passed, N failed`.
 *
 *   node esbuild.mjs && node --import tsx test/integration/review-runner/agentPicker.ts [OUT_DIR] [light,dark,hc]
 *
 * Screenshots go to .cache/agent-picker-screenshots/ unless OUT_DIR is given.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Results } from '../harness/checks';
import { palette, repoRoot } from '../harness/host';
import { openWorkbench, pick, quickOpen, runThemes, themeSession } from './ui';
import { type Theme } from './workspace';

const out = resolve(process.argv[2] || join(repoRoot, '.cache', 'agent-picker-screenshots'));
const bin = join(repoRoot, '.cache', 'agent-clis', 'node_modules', '.bin');

async function session(theme: Theme): Promise<Results> {
  const s = themeSession(theme, 'skillopt-picker', out);
  const { tag, sandbox, checks, p } = s;
  try {
    await checks.step(
      `${tag} Optimize This Skill on a skill without a config reaches the target step`,
      async () => {
        const ws = join(sandbox, 'workspace', 'picker-skill');
        for (const f of ['SKILL.md', 'tasks.jsonl'])
          cpSync(join(repoRoot, 'examples', 'house-style', f), join(ws, f));
        const { server } = await s.launch();
        await openWorkbench(p(), server, join(sandbox, 'workspace'));
        await p()
          .locator('.explorer-folders-view .monaco-list-row', { hasText: 'picker-skill' })
          .first()
          .waitFor({ timeout: 90_000 });
        await quickOpen(p(), 'picker-skill/SKILL.md');
        await p()
          .locator('.tabs-container .tab', { hasText: 'SKILL.md' })
          .first()
          .waitFor({ timeout: 30_000 });
        // The command is in the palette once the extension is active: try again until it runs.
        for (let attempt = 1; ; attempt++) {
          await palette(p(), 'SkillOpt: Optimize This Skill');
          try {
            await p()
              .locator('.quick-input-widget', { hasText: 'SkillOpt setup (1/5)' })
              .waitFor({ timeout: 5_000 });
            break;
          } catch (err) {
            if (attempt === 6) throw err;
            await p().keyboard.press('Escape');
            await p().waitForTimeout(2_000);
          }
        }
        await pick(p(), 'tasks.jsonl');
        await pick(p(), 'normalized_exact');
        await p()
          .locator('.quick-input-widget', { hasText: 'SkillOpt setup (3/5)' })
          .waitFor({ timeout: 30_000 });
      },
    );
    await checks.step(`${tag} the target picker lists the agent CLIs`, async () => {
      await p().locator('.quick-input-widget input').fill('_exec');
      await p()
        .locator('.quick-input-list .monaco-list-row', { hasText: 'copilot_exec' })
        .waitFor({ timeout: 10_000 });
      // No hover tooltip over the rows.
      await p().mouse.move(700, 700);
      await p().waitForTimeout(800);
    });
    await checks.screenshot(s.page(), join(out, `agent-picker-${theme}.png`), `${tag} agent-picker`);
    await checks.check(
      `${tag} installed ones show their version, the missing one its install command`,
      async () => {
        const rows = await p().locator('.quick-input-list .monaco-list-row').allInnerTexts();
        const row = (backend: string): string => rows.find((r) => r.includes(backend)) ?? '';
        assert.match(row('claude_code_exec'), /installed · \d+\.\d+\.\d+/);
        assert.match(row('codex_exec'), /installed · \d+\.\d+\.\d+/);
        assert.match(row('copilot_exec'), /not installed[\s\S]*npm install -g @github\/copilot/);
      },
    );
    await checks.step(
      `${tag} picking the missing one says how to install it, and the list comes back`,
      async () => {
        await pick(p(), 'copilot_exec');
        // The list is shown again, fresh: every target, no filter text.
        await p()
          .locator('.quick-input-list .monaco-list-row', { hasText: 'Simulated models' })
          .waitFor({ timeout: 10_000 });
        await p().keyboard.press('Escape');
        await p().locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
        await palette(p(), 'Notifications: Show Notifications');
        await p()
          .locator('.notifications-center', { hasText: 'is not installed' })
          .first()
          .waitFor({ timeout: 10_000 });
        await p().mouse.move(700, 300);
        await p().waitForTimeout(500);
      },
    );
    await checks.screenshot(
      s.page(),
      join(out, `agent-picker-missing-${theme}.png`),
      `${tag} agent-picker-missing`,
    );
  } finally {
    await s.end();
  }
  return checks.results();
}

async function main(): Promise<number> {
  if (!existsSync(join(bin, 'claude'))) {
    console.log(`the agent CLIs are not installed in ${bin}: run node scripts/install-agent-clis.mjs`);
    return 1;
  }
  // What the VS Code server passes to the extension host. The server takes PATH from a login
  // shell, so the installed CLIs are named by their *_EXEC_PATH variables, which it passes on.
  process.env.CLAUDE_CODE_EXEC_PATH = join(bin, 'claude');
  process.env.CODEX_EXEC_PATH = join(bin, 'codex');
  process.env.COPILOT_EXEC_PATH = join(repoRoot, '.cache', 'no-such-copilot');
  return runThemes(out, session);
}

void main().then((code) => process.exit(code));
