/**
 * Extension timings inside a real VS Code, through the project's harness
 * (test/integration/harness/host.ts: the VS Code server from code-server, its web workbench in
 * Chromium). Each session loads the production build of the extension from the footprint
 * section, opens a workspace that does not trigger activation, and runs bench/vscode/suite.ts in
 * the extension host: activation time, then time until a candidate review's decorations are drawn
 * on a 2,000-line skill. The run folder for that review is made here first, with the `sim` backend.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import * as esbuild from 'esbuild';
import { prepareRun, trainPrepared } from '../../src/engine/run';
import {
  installVsCode,
  launchBrowser,
  makeSandbox,
  removeDir,
  repoRoot,
  startServer,
} from '../../test/integration/harness/host';
import { spread, type Spread } from '../stats';

export const SKILL_LINES = 2_000;

export interface VsCodeTimings {
  sessions: number;
  activationMs: Spread;
  decorationsMs: Spread;
  skillLines: number;
  /** Sessions in which SkillOpt was already active before the suite activated it (should be none). */
  activeAtStart: number;
  errors: string[];
}

/** The bench skill grown to `lines` lines with neutral background notes. */
export function skillOfLines(base: string, lines: number): string {
  const head = base.trimEnd().split('\n');
  const extra = Math.max(0, lines - head.length - 3);
  const notes = Array.from(
    { length: extra },
    (_, i) =>
      `- Background ${String(i + 1).padStart(4, '0')}: the knowledge base serves the Acme support desk.`,
  );
  return [...head, '', '## Background', '', ...notes].join('\n') + '\n';
}

/** A 2,000-line skill and a run folder whose first step has a candidate for it. */
async function reviewFixture(dir: string): Promise<{ skillPath: string; runDir: string; step: number }> {
  const example = join(repoRoot, 'examples', 'house-style');
  const skillPath = join(dir, 'big-skill', 'SKILL.md');
  mkdirSync(join(dir, 'big-skill'), { recursive: true });
  writeFileSync(skillPath, skillOfLines(readFileSync(join(example, 'SKILL.md'), 'utf8'), SKILL_LINES));
  const runDir = join(dir, 'big-skill', 'run');
  const prepared = prepareRun({
    configPath: join(example, 'skillopt.yaml'),
    outDir: runDir,
    overrides: ['cache.enabled=false', 'train.num_epochs=1', `env.skill_init=${skillPath}`],
  });
  const controller = new AbortController();
  let step = 0;
  await trainPrepared(prepared, {
    signal: controller.signal,
    resumeCommand: 'bench',
    emit: (e) => {
      if (e.type === 'step/finished' && e.record.candidate_hash && !step) {
        step = e.record.step;
        controller.abort();
      }
    },
  });
  if (!step) throw new Error('the sim run made no candidate to review');
  return { skillPath, runDir, step };
}

/** The extension folder VS Code loads: the manifest, the built bundles and the folders read at run time. */
function extensionFolder(dir: string, distDir: string): string {
  const ext = join(dir, 'ext');
  mkdirSync(ext, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  writeFileSync(
    join(ext, 'package.json'),
    JSON.stringify({ ...manifest, main: './dist/extension.js' }, null, 2),
  );
  for (const d of ['media', 'syntaxes', 'examples'])
    if (existsSync(join(repoRoot, d))) symlinkSync(join(repoRoot, d), join(ext, d));
  cpSync(distDir, join(ext, 'dist'), { recursive: true });
  return ext;
}

async function session(
  install: ReturnType<typeof installVsCode>,
  ext: string,
  suite: string,
  fixtureDir: string,
  fixture: { skillPath: string; runDir: string; step: number },
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const sandbox = makeSandbox('skillopt-bench-vscode-');
  // A workspace with nothing that activates SkillOpt (no SKILL.md, no skillopt.yaml, no Markdown
  // open); the skill and its run folder sit beside it and are opened by path.
  const ws = join(sandbox, 'workspace');
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, 'notes.txt'), 'bench workspace\n');
  cpSync(fixtureDir, join(sandbox, 'fixture'), { recursive: true });
  const rel = (p: string): string => join(sandbox, 'fixture', p.slice(fixtureDir.length));
  // The extension host inherits the server's environment.
  process.env.SKILLOPT_BENCH_VSCODE = JSON.stringify({
    skillPath: rel(fixture.skillPath),
    runDir: rel(fixture.runDir),
    step: fixture.step,
  });
  const server = await startServer(install, sandbox, { trusted: true });
  const browser = await launchBrowser(sandbox);
  try {
    const page = browser.pages()[0] ?? (await browser.newPage());
    let result: Record<string, unknown> | undefined;
    let exit: (code: number | 'timeout') => void = () => undefined;
    const exited = new Promise<number | 'timeout'>((r) => (exit = r));
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown[]) => {
      const line = format(...args);
      const m = /SKILLOPT_BENCH (\{.*\})/.exec(line);
      if (m) result = JSON.parse(m[1]) as Record<string, unknown>;
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => exit(code));
    const remote = (p: string): string => `vscode-remote://127.0.0.1:${server.port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(ext)],
      ['extensionTestsPath', remote(suite)],
    ];
    await page.goto(
      `${server.url}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`,
    );
    const timer = setTimeout(() => exit('timeout'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    if (!result) throw new Error(`the bench suite reported nothing (extension host exit ${code})`);
    return result;
  } finally {
    await browser.close().catch(() => undefined);
    server.stop();
    delete process.env.SKILLOPT_BENCH_VSCODE;
    removeDir(sandbox);
  }
}

export async function measureVsCode(opts: {
  distDir: string;
  sessions: number;
  work: string;
  log: (line: string) => void;
}): Promise<VsCodeTimings> {
  const install = installVsCode();
  const dir = join(opts.work, 'vscode');
  mkdirSync(dir, { recursive: true });
  const fixtureDir = join(dir, 'fixture');
  const fixture = await reviewFixture(fixtureDir);
  const suite = join(dir, 'suite', 'index.js');
  await esbuild.build({
    entryPoints: [join(__dirname, 'suite.ts')],
    outfile: suite,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    logLevel: 'error',
  });
  const ext = extensionFolder(dir, opts.distDir);
  const activation: number[] = [];
  const decorations: number[] = [];
  const errors: string[] = [];
  let lines = 0;
  let activeAtStart = 0;
  for (let i = 1; i <= opts.sessions; i++) {
    try {
      const r = await session(install, ext, suite, fixtureDir, fixture, 240_000);
      const ms = (v: unknown): string => (typeof v === 'number' ? v.toFixed(0) : '–');
      if (typeof r.activationMs === 'number') activation.push(r.activationMs);
      if (typeof r.decorationsMs === 'number') decorations.push(r.decorationsMs);
      if (typeof r.skillLines === 'number') lines = r.skillLines;
      if (r.activeAtStart === true) activeAtStart++;
      const error = typeof r.error === 'string' ? r.error : undefined;
      if (error) errors.push(error);
      opts.log(
        `  VS Code session ${i}/${opts.sessions}: activation ${ms(r.activationMs)} ms, decorations ${ms(r.decorationsMs)} ms${error ? ` (${error})` : ''}`,
      );
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
      opts.log(`  VS Code session ${i}/${opts.sessions} failed: ${errors[errors.length - 1]}`);
    }
  }
  return {
    sessions: opts.sessions,
    activationMs: spread(activation),
    decorationsMs: spread(decorations),
    skillLines: lines,
    activeAtStart,
    errors,
  };
}
