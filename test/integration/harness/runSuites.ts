/**
 * Runs the integration suites inside a real VS Code extension host (the test-electron contract on
 * the VS Code server): the workbench URL's `payload` loads SkillOpt and the test language-model
 * provider as development extensions and `require()`s the bundled suite, whose `run()` settles the
 * session; the exit code comes back through `window.codeAutomationExit`.
 *
 *   node --import tsx test/integration/harness/runSuites.ts [trusted|untrusted]...
 *
 * Suites: `trusted` = test/integration/suite/*.test.ts, `untrusted` = test/integration/untrusted/*.test.ts
 * (the folder opens in Restricted Mode). Counts each mocha test of each suite, from the `FAIL <test>`
 * and `N passed, N failed` lines the suite's reporter logs in the host (test/support/summaryReporter.cjs),
 * and prints one `N passed, N failed` line at the end.
 */
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import * as esbuild from 'esbuild';
import { combine, report, type Results } from './checks';
import {
  elapsed,
  installVsCode,
  launchBrowser,
  makeSandbox,
  makeWorkspace,
  removeDir,
  repoRoot,
  startServer,
  trainWithCli,
  type VsCodeInstall,
} from './host';

const suites = {
  trusted: { dir: 'suite', trusted: true },
  untrusted: { dir: 'untrusted', trusted: false },
} as const;
type SuiteName = keyof typeof suites;

const timeoutMs = Number(process.env.IT_TIMEOUT_MS ?? 300_000);
const noise =
  /socket|connection token|builtin extensions|Service Worker|Chat(Session|ModelSelection)|Ignoring fetching|AgentHost|AccountPolicyGate|vsda|Ignoring the error/;

/** Bundles a suite folder (tests + index.ts) into .cache/vscode-tests/<name>/. */
async function bundle(name: SuiteName): Promise<string> {
  const src = join(repoRoot, 'test', 'integration', suites[name].dir);
  const out = join(repoRoot, '.cache', 'vscode-tests', name);
  removeDir(out);
  mkdirSync(out, { recursive: true });
  const entries = readdirSync(src)
    .filter((f) => f.endsWith('.test.ts') || f === 'index.ts')
    .map((f) => join(src, f));
  await esbuild.build({
    entryPoints: entries,
    outdir: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // mocha resolves from the repository's node_modules (the bundle sits under it).
    external: ['vscode', 'mocha'],
    sourcemap: 'inline',
    logLevel: 'error',
    absWorkingDir: repoRoot,
  });
  return join(out, 'index.js');
}

async function runSuite(install: VsCodeInstall, name: SuiteName, cliRun: string): Promise<Results> {
  const testsIndex = await bundle(name);
  const sandbox = makeSandbox(`skillopt-it-${name}-`, { trusted: suites[name].trusted });
  const ws = makeWorkspace(sandbox, cliRun);
  // Installed, not a second development path: the server loads only one of those.
  cpSync(
    join(repoRoot, 'test', 'integration', 'lmProvider'),
    join(sandbox, 'exts', 'skillopt-test.skillopt-test-lm-provider-0.0.1'),
    { recursive: true },
  );
  const server = await startServer(install, sandbox, { trusted: suites[name].trusted });
  console.log(`[${name}] VS Code server on ${server.url} (${elapsed()})`);
  const browser = await launchBrowser(sandbox);
  let counts: { passed: number; failed: number } | undefined;
  const failures: string[] = [];
  try {
    const page = browser.pages()[0] ?? (await browser.newPage());
    let exit: (code: number | 'timeout') => void = () => undefined;
    const exited = new Promise<number | 'timeout'>((r) => (exit = r));
    await page.exposeFunction('codeAutomationLog', (type: string, args: unknown[]) => {
      const line = format(...args);
      for (const f of line.matchAll(/^FAIL (.+)$/gm)) failures.push(`[${name}] ${f[1]}`);
      const m = /^(\d+) passed, (\d+) failed$/m.exec(line);
      if (m) counts = { passed: Number(m[1]), failed: Number(m[2]) };
      // The suite's count is not the stage's: say whose it is.
      if (m) console.log(`[${name}] ${m[0]}`);
      else if (!noise.test(line)) (type === 'error' ? console.error : console.log)(line);
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => exit(code));
    const remote = (p: string): string => `vscode-remote://127.0.0.1:${server.port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(repoRoot)],
      ['extensionTestsPath', remote(testsIndex)],
    ];
    await page.goto(
      `${server.url}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`,
    );
    const timer = setTimeout(() => exit('timeout'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    console.log(`[${name}] extension host exited with ${code} (${elapsed()})`);
    if (code !== 0) {
      const shot = join(repoRoot, '.cache', 'vscode-tests', `${name}-failure.png`);
      await page.screenshot({ path: shot }).catch(() => undefined);
      console.log(
        `[${name}] screenshot of the workbench: ${shot}\n--- VS Code server log ---\n${server.log()}`,
      );
    }
    if (!counts) {
      failures.push(`[${name}] the extension host ended without reporting its tests (${code})`);
      return { passed: 0, failed: failures.length, failures };
    }
    if (code !== 0 && counts.failed === 0) {
      failures.push(`[${name}] the extension host exited with ${code} although no test failed`);
      return { passed: counts.passed, failed: 1, failures };
    }
    return { ...counts, failures };
  } finally {
    await browser.close().catch(() => undefined);
    server.stop();
    removeDir(sandbox);
  }
}

async function main(): Promise<number> {
  const wanted = (process.argv.slice(2).filter((a) => a in suites) as SuiteName[]).filter(Boolean);
  const names: SuiteName[] = wanted.length ? wanted : ['trusted', 'untrusted'];
  const scratch = makeSandbox('skillopt-it-cli-');
  const results: Results[] = [];
  try {
    const install = installVsCode();
    const cliRun = trainWithCli(scratch);
    for (const name of names) {
      try {
        results.push(await runSuite(install, name, cliRun));
      } catch (err) {
        const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
        console.error(`[${name}] harness error: ${message}`);
        results.push({
          passed: 0,
          failed: 1,
          failures: [`[${name}] harness error: ${message.split('\n')[0]}`],
        });
      }
    }
  } catch (err) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    console.error(`setup failed: ${message}`);
    results.push({ passed: 0, failed: 1, failures: [`setup failed: ${message.split('\n')[0]}`] });
  } finally {
    removeDir(scratch);
  }
  return report(combine(...results));
}

void main().then((code) => process.exit(code));
