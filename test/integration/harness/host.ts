/**
 * A real VS Code for tests: the VS Code server bundled in code-server (installed by
 * scripts/install-code-server.sh under .cache/vscode), its web workbench in Debian's Chromium
 * through playwright-core, and a throwaway sandbox for user data, extensions, XDG folders and
 * TMPDIR so nothing touches $HOME. See shared/docs/vscode-testing.md for why it is built this way.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const repoRoot = resolve(__dirname, '..', '..', '..');
const t0 = Date.now();

export function elapsed(): string {
  return `${((Date.now() - t0) / 1000).toFixed(1)}s`;
}

export interface VsCodeInstall {
  /** code-server's package folder. */
  cs: string;
  /** The Node 24 binary the server runs on. */
  node: string;
}

/** Installs (or finds the cached) code-server; see scripts/install-code-server.sh. */
export function installVsCode(): VsCodeInstall {
  const r = spawnSync('bash', [join(repoRoot, 'scripts', 'install-code-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`scripts/install-code-server.sh failed (exit ${r.status})`);
  const cs = r.stdout.trim().split('\n').at(-1) ?? '';
  const node = readFileSync(join(repoRoot, '.cache', 'vscode', 'node-path'), 'utf8').trim();
  if (!existsSync(join(cs, 'lib', 'vscode', 'out', 'server-main.js')))
    throw new Error(`no VS Code server in ${cs}`);
  return { cs, node };
}

export interface SandboxOptions {
  /** false: Workspace Trust is on and the folder opens in Restricted Mode. */
  trusted?: boolean;
  settings?: Record<string, unknown>;
}

/** A temp folder with user settings for a quiet, deterministic workbench. */
export function makeSandbox(prefix: string, opts: SandboxOptions = {}): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, 'ud', 'User'), { recursive: true });
  mkdirSync(join(dir, 'tmp'));
  const trusted = opts.trusted !== false;
  const settings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'git.openRepositoryInParentFolders': 'never',
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'security.workspace.trust.enabled': !trusted,
    // Restricted Mode without the modal asking whether to trust the folder.
    'security.workspace.trust.startupPrompt': 'never',
    'security.workspace.trust.untrustedFiles': 'open',
    ...opts.settings,
  };
  writeFileSync(join(dir, 'ud', 'User', 'settings.json'), JSON.stringify(settings, null, 1));
  return dir;
}

function serverEnv(sandbox: string): NodeJS.ProcessEnv {
  const xdg = join(sandbox, 'xdg');
  const home = join(sandbox, 'home');
  mkdirSync(home, { recursive: true });
  return {
    ...process.env,
    // The engine's response cache defaults to ~/.cache/skillopt: each session gets its own.
    HOME: home,
    XDG_CONFIG_HOME: xdg,
    XDG_DATA_HOME: xdg,
    XDG_CACHE_HOME: xdg,
    TMPDIR: join(sandbox, 'tmp'),
    // No Open VSX lookups: there is no internet here anyway.
    EXTENSIONS_GALLERY: '{}',
  };
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => res(port));
    });
  });
}

function httpStatus(url: string): Promise<number> {
  return new Promise((res) => {
    http
      .get(url, (r) => {
        r.resume();
        res(r.statusCode ?? 0);
      })
      .on('error', () => res(0));
  });
}

export interface Server {
  url: string;
  port: number;
  log(): string;
  stop(): void;
}

/**
 * The raw VS Code server (lib/vscode/out/server-main.js): unlike code-server's CLI it accepts
 * --enable-smoke-test-driver, without which VS Code 1.139 ignores the test payload.
 */
export async function startServer(
  install: VsCodeInstall,
  sandbox: string,
  opts: { trusted?: boolean } = {},
): Promise<Server> {
  const port = await freePort();
  const args = [
    join(install.cs, 'lib', 'vscode', 'out', 'server-main.js'),
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--without-connection-token',
    '--accept-server-license-terms',
    '--enable-smoke-test-driver',
    '--user-data-dir',
    join(sandbox, 'ud'),
    '--server-data-dir',
    join(sandbox, 'sd'),
    '--extensions-dir',
    join(sandbox, 'exts'),
    '--disable-telemetry',
    ...(opts.trusted === false ? [] : ['--disable-workspace-trust']),
  ];
  const proc: ChildProcess = spawn(install.node, args, {
    env: serverEnv(sandbox),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: the extension host and language servers die with it.
    detached: true,
  });
  let log = '';
  proc.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; (await httpStatus(`${url}/version`)) !== 200; i++) {
    if (i > 600 || proc.exitCode !== null) throw new Error(`VS Code server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = (): void => {
    try {
      if (proc.pid) process.kill(-proc.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  };
  process.on('exit', stop);
  return { url, port, log: () => log, stop };
}

/** code-server itself (its CLI and web server), as a person runs it: for the browser test. */
export async function startCodeServer(install: VsCodeInstall, sandbox: string): Promise<Server> {
  const port = await freePort();
  writeFileSync(join(sandbox, 'config.yaml'), 'auth: none\n');
  const proc: ChildProcess = spawn(
    install.node,
    [
      join(install.cs, 'out', 'node', 'entry.js'),
      '--config',
      join(sandbox, 'config.yaml'),
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--user-data-dir',
      join(sandbox, 'ud'),
      '--extensions-dir',
      join(sandbox, 'exts'),
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
    ],
    { env: serverEnv(sandbox), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let log = '';
  proc.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; (await httpStatus(`${url}/healthz`)) !== 200; i++) {
    if (i > 600 || proc.exitCode !== null) throw new Error(`code-server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = (): void => {
    try {
      if (proc.pid) process.kill(-proc.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  };
  process.on('exit', stop);
  return { url, port, log: () => log, stop };
}

/** `code-server --install-extension x.vsix` into the sandbox, as a user would install it. */
export function installVsix(install: VsCodeInstall, sandbox: string, vsix: string): string {
  const r = spawnSync(
    install.node,
    [
      join(install.cs, 'out', 'node', 'entry.js'),
      '--user-data-dir',
      join(sandbox, 'ud'),
      '--extensions-dir',
      join(sandbox, 'exts'),
      '--install-extension',
      vsix,
    ],
    { env: serverEnv(sandbox), encoding: 'utf8' },
  );
  const out = `${r.stdout}${r.stderr}`;
  if (r.status !== 0 || !/successfully installed/i.test(out))
    throw new Error(`installing ${vsix} failed:\n${out}`);
  return out.trim();
}

export async function launchBrowser(sandbox: string): Promise<BrowserContext> {
  const xdg = join(sandbox, 'xdg');
  return chromium.launchPersistentContext(join(sandbox, 'chromium'), {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1440, height: 900 },
    env: { ...process.env, XDG_CONFIG_HOME: xdg, XDG_CACHE_HOME: xdg },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * The fixture workspace: the bundled house-style example, a run folder written by the CLI, the
 * Python reference's run folder, and a skill without a config for the guided setup.
 */
export function makeWorkspace(parent: string, cliRun: string | undefined): string {
  const ws = join(parent, 'workspace');
  cpSync(join(repoRoot, 'test', 'integration', 'workspace'), ws, { recursive: true });
  const example = join(repoRoot, 'examples', 'house-style');
  for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml'])
    cpSync(join(example, f), join(ws, 'house-style', f));
  cpSync(join(example, 'SKILL.md'), join(ws, 'new-skill', 'SKILL.md'));
  cpSync(join(example, 'tasks.jsonl'), join(ws, 'new-skill', 'tasks.jsonl'));
  cpSync(join(repoRoot, 'test', 'fixtures', 'skillopt-python-run'), join(ws, 'imported', 'searchqa_mini'), {
    recursive: true,
  });
  if (cliRun) cpSync(cliRun, join(ws, 'cli-runs', 'house-style-cli'), { recursive: true });
  return ws;
}

/** A run folder written by the headless CLI (`skillopt train`), made once per test session. */
export function trainWithCli(parent: string): string {
  const dir = join(parent, 'cli-source');
  const example = join(repoRoot, 'examples', 'house-style');
  for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml']) cpSync(join(example, f), join(dir, f));
  const out = join(dir, 'run');
  const r = spawnSync(
    process.execPath,
    [join(repoRoot, 'dist', 'cli.js'), 'train', join(dir, 'skillopt.yaml'), '--out', out],
    {
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`skillopt train failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  return out;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Runs a command from the palette (F1), once its row shows. */
export async function palette(page: Page, command: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${command}`);
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: command.replace(/^SkillOpt: /, '') })
    .first()
    .waitFor();
  await page.keyboard.press('Enter');
}
