// The VS Code suites of `npm test` (called by scripts/test.mjs), also runnable alone:
//
//   node scripts/test-vscode.mjs            everything below
//   node scripts/test-vscode.mjs --no-e2e   integration suites only
//
// 1. installs the test host when it is not cached (scripts/install-code-server.sh → .cache/vscode),
// 2. builds the extension, worker, CLI and webview (node esbuild.mjs),
// 3. runs the integration suites inside a real VS Code extension host: trusted, then Restricted Mode
//    (test/integration/harness/runSuites.ts),
// 4. packages the .vsix (npm run package) and walks a new user's path with it in Chromium against a
//    clean code-server (test/e2e/newUser.ts; screenshots in .cache/e2e-screenshots/),
// 5. takes the review screenshots in a light and a dark theme and checks that hostile edit text stays
//    inert in the Gate History webview (test/integration/review-runner/shots.ts; .cache/review-screenshots/).
// Prints one `N passed, N failed` line over all of it and exits non-zero on any failure.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const withE2e = !process.argv.includes('--no-e2e');
const started = Date.now();
let passed = 0;
let failed = 0;
const problems = [];

/** Runs a command with its output shown; resolves with its exit code and last `N passed, N failed`. */
function run(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let counts;
    let tail = '';
    const scan = (chunk) => {
      tail = (tail + chunk.toString()).slice(-4096);
      for (const m of tail.matchAll(/^(\d+) passed, (\d+) failed$/gm))
        counts = { passed: +m[1], failed: +m[2] };
    };
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      scan(d);
    });
    child.stderr.on('data', (d) => process.stderr.write(d));
    child.on('close', (code) => resolve({ code: code ?? 1, counts }));
  });
}

async function stage(name, cmd, args, { counted = false } = {}) {
  process.stdout.write(`\n── ${name} (${((Date.now() - started) / 1000).toFixed(0)}s) ──\n`);
  const { code, counts } = await run(cmd, args);
  if (counted && counts) {
    passed += counts.passed;
    failed += counts.failed;
    if (code !== 0 && counts.failed === 0) failed += 1;
  } else if (code === 0) {
    if (counted) passed += 1;
  } else {
    failed += 1;
  }
  if (code !== 0) problems.push(`${name} (exit ${code})`);
  return code === 0;
}

const tsx = ['--import', 'tsx'];
if (await stage('install VS Code test host', 'bash', [join(root, 'scripts', 'install-code-server.sh')])) {
  if (await stage('build', process.execPath, ['esbuild.mjs'])) {
    await stage(
      'integration suites in VS Code',
      process.execPath,
      [...tsx, 'test/integration/harness/runSuites.ts'],
      {
        counted: true,
      },
    );
    if (withE2e) {
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      if (await stage('package .vsix', npm, ['run', '--silent', 'package'])) {
        const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
        await stage(
          'browser test (Chromium, installed .vsix)',
          process.execPath,
          [...tsx, 'test/e2e/newUser.ts', join(root, `skillopt-${version}.vsix`)],
          {
            counted: true,
          },
        );
      }
      // Packaging builds minified bundles without source maps; leave the development build behind.
      if (await stage('rebuild for development', process.execPath, ['esbuild.mjs'])) {
        // The review screens in both themes, and hostile edit text shown inertly in the live webview.
        await stage(
          'review screenshots (Chromium, light and dark)',
          process.execPath,
          [...tsx, 'test/integration/review-runner/shots.ts'],
          { counted: true },
        );
      }
    }
  }
}

if (problems.length) process.stdout.write(`\nFailed: ${problems.join('; ')}\n`);
process.stdout.write(`VS Code suites took ${((Date.now() - started) / 1000).toFixed(0)}s\n`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
