// The one test command (`npm test`, run by .ci/run): static checks, build, unit tests and the
// VS Code suites, then one closing `N passed, N failed` line that counts every test where it ran
// (scripts/testCounts.mjs says how).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESULTS_ENV, Tally } from './testCounts.mjs';
import { runVsCodeStages } from './test-vscode.mjs';

const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tally = new Tally();

function step(name, cmd, args, env = {}) {
  process.stdout.write(`\n── ${name} ──\n`);
  const res = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  return res.status ?? 1;
}

/** A stage that counts its own tests: it writes them to the results file (mocha via the summary reporter). */
function counted(name, cmd, args) {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-test-'));
  const file = join(dir, 'results.json');
  const code = step(name, cmd, args, { [RESULTS_ENV]: file });
  tally.stage(name, code, existsSync(file) ? readFileSync(file, 'utf8') : undefined);
  rmSync(dir, { recursive: true, force: true });
}

// Every TypeScript project: Node code without DOM types, and the browser code's projects with them.
tally.check('typecheck', step('typecheck (npm run typecheck)', npm, ['run', '--silent', 'typecheck']));
tally.check('lint', step('lint (eslint)', npx, ['eslint', 'src', 'test']));
tally.check('format', step('format (prettier --check)', npx, ['prettier', '--check', 'src', 'test']));
tally.infra('build', step('build (esbuild)', process.execPath, ['esbuild.mjs']));
// The agent CLI tests (test/unit/agents) drive the real Claude Code, Codex and Copilot CLIs installed here.
tally.infra(
  'agent CLIs',
  step('agent CLIs (scripts/install-agent-clis.mjs)', process.execPath, ['scripts/install-agent-clis.mjs']),
);
counted('unit and engine tests', npx, ['mocha', '--reporter', './test/support/summaryReporter.cjs']);
process.stdout.write('\n── VS Code suites (scripts/test-vscode.mjs) ──\n');
await runVsCodeStages(tally);

process.stdout.write(`\n${tally.lines().join('\n')}\n`);
process.exit(tally.failed === 0 ? 0 : 1);
