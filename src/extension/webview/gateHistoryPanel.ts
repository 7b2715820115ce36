/**
 * Host side of the Gate History: one panel per run, revived after a window reload by the
 * serializer, fed from the run folder and the live events of the run, refreshed (debounced) while
 * the run goes on. The page asks for data with `ready`; clicking a step opens its diff.
 */
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import type { CandidateEdit } from '../../protocol/events';
import type { RunFolder } from '../../engine/store/runReader';
import {
  gateHistoryViewType,
  isGateHistoryState,
  isWebviewMessage,
  type HostMessage,
  type WebviewMessage,
} from '../../protocol/webview';
import type { Ctx } from '../ctx';
import type { DecisionStore } from '../review/decisionStore';
import { candidatePathOf, epochEndsOf, metaReflectEdits, overrulesOf, stepEdits } from '../review/runFiles';
import { buildGateHistory, LiveRun } from './historyData';
import { runEvaluations } from '../runs/evalNodes';
import { gateHistoryHtml, newNonce } from './html';

/** Live runs emit several events per second; one redraw per quarter second is plenty. */
const refreshDelayMs = 250;

class GateHistoryPanel implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ready = false;

  constructor(
    readonly runId: string,
    readonly panel: vscode.WebviewPanel,
    private readonly host: GateHistoryPanels,
  ) {
    const webview = panel.webview;
    webview.options = {
      enableScripts: true,
      localResourceRoots: [
        vscode.Uri.joinPath(host.extensionUri, 'dist', 'webview'),
        vscode.Uri.joinPath(host.extensionUri, 'media'),
      ],
    };
    webview.html = gateHistoryHtml(webview, host.extensionUri, newNonce());
    panel.iconPath = {
      light: vscode.Uri.joinPath(host.extensionUri, 'media', 'gateHistory-light.svg'),
      dark: vscode.Uri.joinPath(host.extensionUri, 'media', 'gateHistory-dark.svg'),
    };
    this.disposables.push(
      webview.onDidReceiveMessage((m: unknown) => this.receive(m)),
      panel.onDidChangeViewState(() => {
        // A hidden page is torn down; it says `ready` again when shown.
        if (!panel.visible) this.ready = false;
      }),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  private receive(message: unknown): void {
    if (!isWebviewMessage(message)) {
      this.host.log.warn('gate history: ignored a malformed message from the page');
      return;
    }
    this.handle(message);
  }

  private handle(message: WebviewMessage): void {
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.post();
        return;
      case 'openStep': {
        const run = this.host.run(this.runId);
        void vscode.commands.executeCommand('skillopt.review.openDiff', {
          runId: this.runId,
          ...(run ? { runDir: run.dir } : {}),
          step: message.step,
          origin: message.origin,
        });
        return;
      }
    }
  }

  /** Redraw soon; many events in a burst make one redraw. */
  schedule(): void {
    if (!this.ready || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.post();
    }, refreshDelayMs);
  }

  post(): void {
    if (!this.ready) return;
    const message = this.host.message(this.runId);
    if (message.type === 'history') this.panel.title = `Gate History: ${message.data.runName}`;
    void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.host.forget(this);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

export class GateHistoryPanels implements vscode.Disposable {
  private readonly panels = new Map<string, GateHistoryPanel>();
  private readonly live = new Map<string, LiveRun>();
  private readonly editCache = new Map<string, CandidateEdit[]>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly ctx: Ctx,
    private readonly decisions: DecisionStore,
  ) {
    this.disposables.push(
      ctx.runEvents((e) => {
        let live = this.live.get(e.runId);
        if (!live) {
          live = new LiveRun();
          this.live.set(e.runId, live);
        }
        if (live.apply(e.event)) this.panels.get(e.runId)?.schedule();
      }),
      ctx.runs.onDidChange((runId) => {
        if (runId === undefined) for (const p of this.panels.values()) p.schedule();
        else this.panels.get(runId)?.schedule();
      }),
      decisions.onDidChange((key) => {
        for (const p of this.panels.values()) {
          if (p.runId === key || this.run(p.runId)?.dir === key) p.schedule();
        }
      }),
    );
  }

  get extensionUri(): vscode.Uri {
    return this.ctx.extension.extensionUri;
  }

  get log(): vscode.LogOutputChannel {
    return this.ctx.log;
  }

  run(runId: string): RunFolder | undefined {
    return this.ctx.runs.get(runId);
  }

  /** Opens (or brings forward) the panel of one run. */
  show(runId: string): GateHistoryPanel {
    const existing = this.panels.get(runId);
    if (existing) {
      existing.panel.reveal(undefined, false);
      return existing;
    }
    const name = this.run(runId)?.name ?? runId;
    const panel = vscode.window.createWebviewPanel(
      gateHistoryViewType,
      `Gate History: ${name}`,
      vscode.ViewColumn.Active,
      {
        enableScripts: true,
      },
    );
    return this.adopt(runId, panel);
  }

  /** After a reload: the page's saved state names its run. */
  revive(panel: vscode.WebviewPanel, state: unknown): void {
    if (!isGateHistoryState(state)) {
      panel.dispose();
      return;
    }
    this.adopt(state.runId, panel);
  }

  private adopt(runId: string, panel: vscode.WebviewPanel): GateHistoryPanel {
    const p = new GateHistoryPanel(runId, panel, this);
    this.panels.get(runId)?.dispose();
    this.panels.set(runId, p);
    return p;
  }

  forget(p: GateHistoryPanel): void {
    if (this.panels.get(p.runId) === p) this.panels.delete(p.runId);
  }

  message(runId: string): HostMessage {
    const run = this.run(runId);
    const live = this.live.get(runId);
    if (!run && !live) {
      return {
        type: 'missing',
        runId,
        message: `The run ${runId} is not in this workspace any more (its folder was moved or deleted).`,
      };
    }
    const dir = run?.dir ?? live?.started?.outDir;
    const data = buildGateHistory({
      runId,
      run,
      live,
      decisions: { ...this.decisions.forRun(runId), ...(dir ? this.decisions.forRun(dir) : {}) },
      stepEdits: (step) => (dir ? this.cachedEdits(dir, step) : []),
      stepHasCandidate: (step) => (dir ? existsSync(candidatePathOf(dir, step, 'step')) : false),
      epochEnds: () =>
        dir
          ? epochEndsOf(dir).map((e) =>
              e.origin === 'meta_reflect' ? { ...e, edits: metaReflectEdits(dir, e.epoch) } : e,
            )
          : [],
      overrules: () => (dir ? overrulesOf(dir) : []),
      aa: () => (dir ? runEvaluations(dir).find((e) => e.summary.aa)?.summary.aa : undefined),
    });
    return { type: 'history', data };
  }

  private cachedEdits(dir: string, step: number): CandidateEdit[] {
    const key = `${dir}\u0000${step}`;
    const hit = this.editCache.get(key);
    if (hit) return hit;
    const edits = stepEdits(dir, step);
    // A step still running has no edit files yet; only finished answers are kept.
    if (edits.length > 0) this.editCache.set(key, edits);
    return edits;
  }

  dispose(): void {
    for (const p of [...this.panels.values()]) p.panel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
