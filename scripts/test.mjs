// The one test command (`npm test`, run by .ci/run): static checks, build, unit tests and the
// VS Code suites, then one closing `N passed, N failed` line over everything that ran.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
let passed = 0;
let failed = 0;
const failures = [];

function step(name, cmd, args, env = {}) {
  process.stdout.write(`\n── ${name} ──\n`);
  const res = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  return res.status === 0;
}

function check(name, cmd, args) {
  if (step(name, cmd, args)) passed += 1;
  else {
    failed += 1;
    failures.push(name);
  }
}

function mochaSuite(name, args, env = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-test-'));
  const counts = join(dir, 'counts.json');
  const ok = step(name, npx, ['mocha', '--reporter', './test/support/summaryReporter.cjs', ...args], {
    SKILLOPT_TEST_COUNTS: counts,
    ...env,
  });
  if (existsSync(counts)) {
    const c = JSON.parse(readFileSync(counts, 'utf8'));
    passed += c.passes;
    failed += c.failures;
    if (c.failures > 0) failures.push(`${name}: ${c.failures} test(s)`);
    if (!ok && c.failures === 0) {
      failed += 1;
      failures.push(`${name}: mocha exited non-zero`);
    }
  } else {
    failed += 1;
    failures.push(`${name}: did not run to the end`);
  }
  rmSync(dir, { recursive: true, force: true });
}

check('typecheck (tsc --noEmit)', npx, ['tsc', '-p', '.', '--noEmit']);
check('lint (eslint)', npx, ['eslint', 'src', 'test']);
check('format (prettier --check)', npx, ['prettier', '--check', 'src', 'test']);
check('build (esbuild)', process.execPath, ['esbuild.mjs']);
// The agent CLI tests (test/unit/agents) drive the real Claude Code, Codex and Copilot CLIs from here.
check('agent CLIs (scripts/install-agent-clis.mjs)', process.execPath, ['scripts/install-agent-clis.mjs']);
mochaSuite('unit and engine tests', []);
for (const extra of ['scripts/test-vscode.mjs']) {
  if (existsSync(extra)) check(`VS Code suites (${extra})`, process.execPath, [extra]);
}

if (failures.length) process.stdout.write(`\nFailed: ${failures.join('; ')}\n`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
