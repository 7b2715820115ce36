// The VS Code suites of `npm test` (scripts/test.mjs imports runVsCodeStages), also runnable alone:
//
//   node scripts/test-vscode.mjs            everything below
//   node scripts/test-vscode.mjs --no-e2e   integration suites only
//
// 1. installs the test host when it is not cached (scripts/install-code-server.sh → .cache/vscode),
// 2. builds the extension, worker, CLI and webview (node esbuild.mjs),
// 3. runs the integration suites inside a real VS Code extension host: trusted, then Restricted Mode
//    (test/integration/harness/runSuites.ts), counting each mocha test,
// 4. packages the .vsix (npm run package) and walks a new user's path with it in Chromium against a
//    clean code-server (test/e2e/newUser.ts; screenshots in .cache/e2e-screenshots/), check by check,
// 5. checks the review screens in a light, a dark and a high-contrast theme, and that hostile edit text stays inert in
//    the Gate History webview (test/integration/review-runner/shots.ts; .cache/review-screenshots/),
// 6. walks setup → run → review → apply with the keyboard only and checks the accessible names of the status
//    bar, the Runs tree rows and the Gate History controls (test/e2e/keyboardOnly.ts).
// Install, build and package count only when they fail; the others count each test they report
// (scripts/testCounts.mjs). Alone, it prints its own `N passed, N failed` line and exit code.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RESULTS_ENV, Tally } from './testCounts.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsx = ['--import', 'tsx'];

/** Runs a command with its output shown; resolves with its exit code. */
function run(cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('error', () => resolve(127));
    child.on('close', (code, signal) => resolve(code ?? (signal ? `signal ${signal}` : 1)));
  });
}

export async function runVsCodeStages(tally, { e2e = true } = {}) {
  const started = Date.now();
  const banner = (name) =>
    process.stdout.write(`\n── ${name} (${((Date.now() - started) / 1000).toFixed(0)}s) ──\n`);
  const infra = async (name, cmd, args) => {
    banner(name);
    const code = await run(cmd, args);
    tally.infra(name, code);
    return code === 0;
  };
  const counted = async (name, cmd, args) => {
    banner(name);
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-test-'));
    const file = join(dir, 'results.json');
    const code = await run(cmd, args, { [RESULTS_ENV]: file });
    tally.stage(name, code, existsSync(file) ? readFileSync(file, 'utf8') : undefined);
    rmSync(dir, { recursive: true, force: true });
  };

  if (await infra('install VS Code test host', 'bash', [join(root, 'scripts', 'install-code-server.sh')])) {
    if (await infra('build', process.execPath, ['esbuild.mjs'])) {
      await counted('integration suites in VS Code', process.execPath, [
        ...tsx,
        'test/integration/harness/runSuites.ts',
      ]);
      if (e2e) {
        const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
        if (await infra('package .vsix', npm, ['run', '--silent', 'package'])) {
          const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
          await counted('browser walk (Chromium, installed .vsix)', process.execPath, [
            ...tsx,
            'test/e2e/newUser.ts',
            join(root, `skillopt-${version}.vsix`),
          ]);
        }
        // Packaging builds minified bundles without source maps; leave the development build behind.
        if (await infra('rebuild for development', process.execPath, ['esbuild.mjs'])) {
          await counted('review screens (Chromium, light, dark and high contrast)', process.execPath, [
            ...tsx,
            'test/integration/review-runner/shots.ts',
          ]);
          await counted('keyboard-only walk (Chromium: setup → run → review → apply)', process.execPath, [
            ...tsx,
            'test/e2e/keyboardOnly.ts',
          ]);
        }
      }
    }
  }
  process.stdout.write(`\nVS Code suites took ${((Date.now() - started) / 1000).toFixed(0)}s\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const tally = new Tally();
  await runVsCodeStages(tally, { e2e: !process.argv.includes('--no-e2e') });
  process.stdout.write(`\n${tally.lines().join('\n')}\n`);
  process.exit(tally.failed === 0 ? 0 : 1);
}
