/**
 * §4 of issue 7: extension footprint. Bundle sizes come from esbuild's metafiles: the repository's
 * own esbuild.mjs is run (development and production) in a scratch folder that links to src/ and
 * node_modules/, so the shared dist/ is left alone. Timings that need a real VS Code run the
 * production build through the project's VS Code harness (bench/vscode/timings.ts); what cannot be
 * measured says why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { repoRoot } from './harness';
import type { Spread } from './stats';
import { measureVsCode } from './vscode/timings';
import { measureWebviewRender } from './webviewRender';

/** The parts of an esbuild metafile the bench reads. */
export interface Metafile {
  inputs: Record<string, { bytes: number }>;
  outputs: Record<string, { bytes: number; inputs: Record<string, { bytesInOutput: number }> }>;
}

export interface BundleSummary {
  entry: string;
  output: string;
  bytes: number;
  inputs: number;
  /** Bytes in the output per source: `src/<folder>` or the npm package, largest first. */
  largest: Array<{ source: string; bytes: number }>;
}

/** Group an input path: `node_modules/@scope/pkg/...` → `@scope/pkg`, `src/engine/llm/x.ts` → `src/engine`. */
export function sourceGroup(input: string): string {
  const p = input.replace(/\\/g, '/');
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = p.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const src = /(?:^|\/)src\/([^/]+)\//.exec(p);
  if (src) return `src/${src[1]}`;
  return p;
}

/** The JavaScript output of one entry's metafile, with its largest contributors. */
export function summarizeMetafile(entry: string, meta: Metafile, top = 6): BundleSummary {
  const js = Object.entries(meta.outputs).filter(([path]) => path.endsWith('.js'));
  if (js.length === 0) throw new Error(`metafile of ${entry} has no .js output`);
  const [output, info] = js.sort((a, b) => b[1].bytes - a[1].bytes)[0];
  const groups = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(info.inputs)) {
    const g = sourceGroup(input);
    groups.set(g, (groups.get(g) ?? 0) + bytesInOutput);
  }
  return {
    entry,
    output,
    bytes: info.bytes,
    inputs: Object.keys(info.inputs).length,
    largest: [...groups.entries()]
      .map(([source, bytes]) => ({ source, bytes }))
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, top),
  };
}

export interface BuildFootprint {
  mode: 'development' | 'production';
  ok: boolean;
  error?: string;
  bundles: Array<BundleSummary & { gzipBytes: number }>;
}

/** A timing that needs VS Code: measured (min / median / max over sessions), or why not. */
export interface VsCodeFigure {
  what: string;
  measured: boolean;
  ms?: Spread;
  reason?: string;
}

export interface FootprintResult {
  builds: BuildFootprint[];
  vscode: VsCodeFigure[];
  vscodeSessions?: { sessions: number; skillLines: number; activeAtStart: number; errors: string[] };
}

function build(mode: BuildFootprint['mode'], scratch: string): BuildFootprint {
  const dir = join(scratch, mode);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const name of ['src', 'node_modules', 'tsconfig.json', 'package.json'])
    if (existsSync(join(repoRoot, name))) symlinkSync(join(repoRoot, name), join(dir, name));
  const args = [join(repoRoot, 'esbuild.mjs'), ...(mode === 'production' ? ['--production'] : [])];
  const res = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  const metaDir = join(dir, 'dist', 'meta');
  const bundles: BuildFootprint['bundles'] = [];
  if (existsSync(metaDir)) {
    for (const file of readdirSync(metaDir)
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      const meta = JSON.parse(readFileSync(join(metaDir, file), 'utf8')) as Metafile;
      const s = summarizeMetafile(file.replace(/\.json$/, ''), meta);
      const out = join(dir, s.output);
      bundles.push({ ...s, gzipBytes: existsSync(out) ? gzipSync(readFileSync(out)).length : NaN });
    }
  }
  const ok = res.status === 0;
  return {
    mode,
    ok,
    ...(ok
      ? {}
      : {
          error: (res.stderr || res.stdout || `exit ${res.status}`).trim().split('\n').slice(0, 6).join('\n'),
        }),
    bundles,
  };
}

export const VSCODE_FIGURES = [
  'extension activation',
  'review decorations on a 2,000-line skill',
  'gate-history webview render of a 1,000-step run',
] as const;

/** Why the VS Code timings cannot be measured here, or undefined when the harness is there. */
export function vscodeUnavailable(exists: (relPath: string) => boolean): string | undefined {
  if (!exists('src/extension/extension.ts'))
    return 'no extension entry point yet (src/extension/extension.ts), so there is nothing to activate';
  if (!exists('test/integration/harness/host.ts'))
    return 'no VS Code harness yet (test/integration/harness/host.ts); these timings need a real VS Code';
  return undefined;
}

/**
 * The three figures: activation and decorations from VS Code sessions, the webview render from
 * Chromium (either source may be missing, with its own reason).
 */
export function vscodeFigures(
  measured: { activationMs?: Spread; decorationsMs?: Spread } | undefined,
  reason: string,
  webview: { ms: Spread } | { error: string },
): VsCodeFigure[] {
  const fig = (what: string, ms: Spread | undefined, why = reason): VsCodeFigure =>
    ms && ms.n > 0 ? { what, measured: true, ms } : { what, measured: false, reason: why };
  return [
    fig(VSCODE_FIGURES[0], measured?.activationMs),
    fig(VSCODE_FIGURES[1], measured?.decorationsMs),
    'ms' in webview ? fig(VSCODE_FIGURES[2], webview.ms) : fig(VSCODE_FIGURES[2], undefined, webview.error),
  ];
}

export async function runFootprint(
  scratch: string,
  opts: { vscodeSessions: number },
  log: (line: string) => void,
): Promise<FootprintResult> {
  const builds = (['development', 'production'] as const).map((m) => build(m, scratch));
  for (const b of builds) {
    log(
      `  ${b.mode} build: ${b.ok ? 'ok' : 'FAILED'}; ${b.bundles.map((x) => `${x.entry} ${(x.bytes / 1024).toFixed(0)} KiB`).join(', ')}`,
    );
  }
  const prod = builds.find((b) => b.mode === 'production');
  // The webview page needs only Chromium, so it is measured in quick runs too.
  const webview = prod?.ok
    ? await measureWebviewRender(join(scratch, 'production', 'dist'), {
        steps: 1000,
        sessions: Math.max(2, opts.vscodeSessions + 2),
      }).catch((err: unknown) => ({
        error: `Chromium could not run: ${err instanceof Error ? err.message : String(err)}`,
      }))
    : { error: 'the production build failed' };
  log(
    'ms' in webview
      ? `  gate-history render, 1,000 steps (Chromium): median ${webview.ms.median.toFixed(0)} ms`
      : `  gate-history render not measured: ${webview.error}`,
  );
  const unavailable = vscodeUnavailable((p) => existsSync(join(repoRoot, p)));
  if (unavailable || opts.vscodeSessions < 1 || !prod?.bundles.some((b) => b.entry === 'extension')) {
    const reason =
      unavailable ??
      (opts.vscodeSessions < 1
        ? 'skipped in a quick run (each VS Code session takes about a minute)'
        : 'the production build has no extension bundle');
    return { builds, vscode: vscodeFigures(undefined, reason, webview) };
  }
  log(`  VS Code: ${opts.vscodeSessions} sessions with the production build`);
  try {
    const t = await measureVsCode({
      distDir: join(scratch, 'production', 'dist'),
      sessions: opts.vscodeSessions,
      work: scratch,
      log,
    });
    const reason = t.errors[0] ?? 'no session reported this figure';
    return {
      builds,
      vscode: vscodeFigures(t, reason, webview),
      vscodeSessions: {
        sessions: t.sessions,
        skillLines: t.skillLines,
        activeAtStart: t.activeAtStart,
        errors: t.errors,
      },
    };
  } catch (err) {
    const reason = `the VS Code session could not run: ${err instanceof Error ? err.message : String(err)}`;
    log(`  ${reason}`);
    return { builds, vscode: vscodeFigures(undefined, reason, webview) };
  }
}
