/**
 * Render time of the Gate History page for a 1,000-step run. VS Code webviews are Chromium frames,
 * so the production bundle and stylesheet are loaded into headless Chromium (Debian's, driven by
 * playwright-core) with a stand-in for `acquireVsCodeApi`, and the time is read inside the page:
 * from the host's `history` message to the second animation frame after it, i.e. drawn and painted.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { GateHistoryData, GateStepRow, HostMessage } from '../src/protocol/webview';
import { spread, type Spread } from './stats';

/** A run of `steps` steps with realistic variety: verdicts, edits with every fate, slow updates. */
export function syntheticHistory(steps: number, perEpoch = 25): GateHistoryData {
  const rows: GateStepRow[] = [];
  let current = 0.4;
  let best = 0.4;
  let tokens = 0;
  for (let step = 1; step <= steps; step++) {
    const epoch = Math.ceil(step / perEpoch);
    // Deterministic ups and downs: every third candidate is better, the rest are not.
    const candidate = Math.min(1, current + (step % 3 === 0 ? 0.004 : -0.01));
    const accepted = candidate > current;
    const previous = current;
    if (accepted) current = candidate;
    best = Math.max(best, current);
    tokens += 40_000 + (step % 7) * 1_000;
    rows.push({
      step,
      epoch,
      origin: 'step',
      action: accepted ? (current >= best ? 'accept_new_best' : 'accept') : 'reject',
      candidateScore: candidate,
      currentScore: current,
      bestScore: best,
      previousScore: previous,
      rolloutScore: 0.3 + (step % 10) / 20,
      editBudget: 4 - (step % 3),
      skillTokens: 400 + step,
      skillLen: (400 + step) * 4,
      costUsd: null,
      tokens,
      edits: Array.from({ length: 3 }, (_, i) => ({
        id: `e-${step}-${i}`,
        op: i === 0 ? 'append' : 'replace',
        ...(i > 0 ? { target: `- Rule ${i} of step ${step - 1}.` } : {}),
        content: `- Rule ${i} of step ${step}: give the answer in house style, e.g. 2024-03-05.`,
        supportCount: 1 + i,
        sourceType: i === 2 ? 'success' : 'failure',
        status: 'applied',
        fate: accepted ? 'kept' : 'rejected-by-gate',
      })),
      hasCandidate: true,
    });
    if (step % perEpoch === 0) {
      rows.push({
        step,
        epoch,
        origin: 'slow_update',
        action: 'accept',
        currentScore: current,
        bestScore: best,
        edits: [],
        hasCandidate: true,
      });
    }
  }
  return {
    runId: '/bench/run',
    runName: `bench_${steps}_steps`,
    status: 'finished',
    simulated: true,
    baselineScore: 0.4,
    totalSteps: steps,
    steps: rows,
    spend: { dollars: null, tokens },
  };
}

const page = (script: string, css: string): string => `<!doctype html>
<html><head><meta charset="utf-8"><link rel="stylesheet" href="${css}"></head>
<body class="vscode-dark"><div id="app"></div>
<script>
  window.__posted = [];
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => undefined,
    setState: () => undefined,
  });
</script>
<script src="${script}"></script></body></html>`;

/** The page's globals these callbacks use: bench/ compiles without the DOM library. */
interface PageGlobals {
  __posted: Array<{ type: string }>;
  dispatchEvent(event: Event): boolean;
  requestAnimationFrame(callback: () => void): number;
}

/** Milliseconds per render, one fresh page each, with `distDir` holding webview/main.js. */
export async function measureWebviewRender(
  distDir: string,
  opts: { steps: number; sessions: number },
): Promise<{ ms: Spread; steps: number } | { error: string }> {
  const script = join(distDir, 'webview', 'main.js');
  if (!existsSync(script)) return { error: `no webview bundle at ${script}` };
  const work = mkdtempSync(join(tmpdir(), 'skillopt-bench-webview-'));
  const html = join(work, 'gateHistory.html');
  writeFileSync(
    html,
    page(pathToFileURL(script).href, pathToFileURL(join(__dirname, '..', 'media', 'gateHistory.css')).href),
  );
  const message: HostMessage = { type: 'history', data: syntheticHistory(opts.steps) };
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const times: number[] = [];
    for (let i = 0; i < opts.sessions; i++) {
      const p = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      const errors: string[] = [];
      p.on('pageerror', (e) => errors.push(e.message));
      await p.goto(pathToFileURL(html).href);
      // The page says `ready` once Chart.js is loaded; only then is the data worth timing.
      await p.waitForFunction(() =>
        (globalThis as unknown as PageGlobals).__posted.some((m) => m.type === 'ready'),
      );
      const ms = await p.evaluate(async (msg) => {
        const g = globalThis as unknown as PageGlobals;
        const t0 = performance.now();
        g.dispatchEvent(new MessageEvent('message', { data: msg }));
        await new Promise<void>((r) => g.requestAnimationFrame(() => g.requestAnimationFrame(() => r())));
        return performance.now() - t0;
      }, message);
      const rows = await p.locator('tbody tr').count();
      await p.close();
      if (errors.length) return { error: `the page threw: ${errors[0]}` };
      if (rows < opts.steps) return { error: `the table shows ${rows} rows for ${opts.steps} steps` };
      times.push(ms);
    }
    return { ms: spread(times), steps: opts.steps };
  } finally {
    await browser.close();
    rmSync(work, { recursive: true, force: true });
  }
}
