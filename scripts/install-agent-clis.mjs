#!/usr/bin/env node
// Installs the agent CLIs the integration tests drive (Claude Code, Codex, Copilot CLI) at pinned
// versions into .cache/agent-clis (git-ignored), from the npm registry and nothing else. Each
// package ships its native binary inside a platform package on npm (optional dependencies), so no
// install step downloads from elsewhere; Claude Code's postinstall only copies its platform binary
// over a placeholder. Idempotent: when the pinned versions are already there it returns at once.
//
//   node scripts/install-agent-clis.mjs            install (or check) and print the .bin folder
//   SKILLOPT_SKIP_AGENT_CLIS=1 ...                 skip; the agent tests then say why they are pending
//   SKILLOPT_AGENT_CLIS_DIR=/some/dir ...          install somewhere else
//
// Claude Code declares engines.node >= 22; npm warns on Node 20, and the native binary it installs
// does not use the host's Node at all. Copilot's launcher is a small Node script (any Node ≥ 20).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AGENT_CLI_PINS = {
  '@anthropic-ai/claude-code': '2.1.330',
  '@openai/codex': '0.169.0',
  '@github/copilot': '1.0.102',
};

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = resolve(process.env.SKILLOPT_AGENT_CLIS_DIR || join(root, '.cache', 'agent-clis'));
const log = (msg) => process.stderr.write(`[install-agent-clis] ${msg}\n`);

function installedVersion(pkg) {
  try {
    return JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

function upToDate() {
  for (const [pkg, version] of Object.entries(AGENT_CLI_PINS)) {
    if (installedVersion(pkg) !== version) return false;
  }
  return ['claude', 'codex', 'copilot'].every((b) => existsSync(join(dir, 'node_modules', '.bin', b)));
}

if (process.env.SKILLOPT_SKIP_AGENT_CLIS === '1') {
  log('skipped (SKILLOPT_SKIP_AGENT_CLIS=1); the agent CLI tests will be pending');
  process.exit(0);
}

if (!upToDate()) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'skillopt-agent-clis', private: true, dependencies: AGENT_CLI_PINS }, null, 2)}\n`,
  );
  log(
    `npm install ${Object.entries(AGENT_CLI_PINS)
      .map(([p, v]) => `${p}@${v}`)
      .join(' ')} into ${dir}`,
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const res = spawnSync(
    npm,
    ['install', '--no-audit', '--no-fund', '--include=optional', '--loglevel=error', '--engine-strict=false'],
    {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, npm_config_update_notifier: 'false' },
    },
  );
  if (res.status !== 0 || !upToDate()) {
    log(`npm install failed (exit ${res.status ?? res.signal}); the agent CLI tests will be pending`);
    process.exit(1);
  }
}

// Each binary must run: a missing platform package leaves a stub that prints instructions instead.
const bin = join(dir, 'node_modules', '.bin');
for (const name of ['claude', 'codex', 'copilot']) {
  const res = spawnSync(join(bin, name), ['--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    // A throwaway HOME: `--version` must not leave anything in the user's.
    env: { PATH: process.env.PATH ?? '', HOME: join(dir, '.version-home'), CI: '1' },
  });
  if (res.status !== 0) {
    log(`${name} --version failed: ${(res.stderr || res.stdout || String(res.error)).trim().slice(0, 400)}`);
    process.exit(1);
  }
}
log(
  `ready: ${Object.entries(AGENT_CLI_PINS)
    .map(([p, v]) => `${p}@${v}`)
    .join(', ')}`,
);
process.stdout.write(`${bin}\n`);
