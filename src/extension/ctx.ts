/**
 * Lifetimes in one place: what lives as long as the extension (commands, views, the log) and
 * what lives as long as one engine process (its notification handlers). The engine is started on
 * first use and started again after it exits; a crash interrupts the runs it was training and
 * offers Resume.
 */
import * as vscode from 'vscode';
import type { EngineEvent } from '../protocol/events';
import { EngineNotifications, EngineRequests } from '../protocol/engine';
import { VERSION } from '../protocol/vocabulary';
import { inspectPort, requestTimeoutMs } from './config';
import { Commands, ContextKeys } from './constants';
import { EngineClient, type EngineExit } from './engineClient';
import { serveLmRequest } from './lm/lmBridge';
import { engineLevel, errorMessage, writeLog } from './log';
import { RunsModel } from './runs/runsModel';

export interface RunEvent {
  runId: string;
  seq: number;
  event: EngineEvent;
}

export class Ctx {
  readonly log: vscode.LogOutputChannel;
  readonly runs: RunsModel;
  private readonly runEventEmitter = new vscode.EventEmitter<RunEvent>();
  /** Live events from the engine, in the order it sent them. */
  readonly runEvents: vscode.Event<RunEvent> = this.runEventEmitter.event;
  private readonly engineExitEmitter = new vscode.EventEmitter<EngineExit>();
  readonly onDidEngineExit = this.engineExitEmitter.event;
  private engineCleanup: vscode.Disposable[] = [];
  private client: EngineClient | undefined;
  private starting: Promise<EngineClient> | undefined;
  /** Applies a log-level change once no run needs the engine. */
  private restartWhenIdle = false;

  constructor(
    readonly extension: vscode.ExtensionContext,
    log: vscode.LogOutputChannel,
  ) {
    this.log = log;
    this.runs = new RunsModel(log, extension.workspaceState);
    this.pushExtCleanup(
      this.runEventEmitter,
      this.engineExitEmitter,
      this.runs,
      this.runEvents((e) => this.runs.applyEvent(e)),
      this.runs.onDidChange(() => void this.updateRunContext()),
      log.onDidChangeLogLevel(() => this.restartEngineWhenIdle()),
      { dispose: () => this.disposeEngine() },
    );
  }

  /** Disposed when the extension deactivates. */
  pushExtCleanup(...items: vscode.Disposable[]): void {
    this.extension.subscriptions.push(...items);
  }

  /** Disposed when the current engine process goes away. */
  pushEngineCleanup(...items: vscode.Disposable[]): void {
    this.engineCleanup.push(...items);
  }

  /** Training is refused in untrusted workspaces (Restricted Mode). */
  get trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  get engineRunning(): boolean {
    return this.client?.running ?? false;
  }

  get enginePid(): number | undefined {
    return this.client?.running ? this.client.pid : undefined;
  }

  /** The engine, started on first use (and again after it exited). */
  engine(): Promise<EngineClient> {
    if (this.client?.running) return Promise.resolve(this.client);
    this.starting ??= this.startEngine().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startEngine(): Promise<EngineClient> {
    const debug = this.extension.extensionMode === vscode.ExtensionMode.Development;
    const client = await EngineClient.start({
      workerPath: this.extension.asAbsolutePath('dist/worker.js'),
      execArgv: debug ? [`--inspect=${inspectPort()}`] : [],
      log: this.log,
      defaultTimeoutMs: requestTimeoutMs(),
      init: {
        clientVersion: VERSION,
        ...(vscode.workspace.workspaceFolders?.[0]
          ? { workspaceRoot: vscode.workspace.workspaceFolders[0].uri.fsPath }
          : {}),
        trusted: this.trusted,
        logLevel: engineLevel(this.log),
      },
      configure: (c) => {
        c.onNotification(EngineNotifications.log, (p) => writeLog(this.log, p.level, p.component, p.message));
        c.onNotification(EngineNotifications.runEvent, (p) => this.runEventEmitter.fire(p));
        c.onRequest(EngineRequests.lmRequest, (p, signal) => serveLmRequest(this, p, signal));
      },
    });
    this.client = client;
    this.restartWhenIdle = false;
    this.pushEngineCleanup(client.onDidExit((exit) => this.onEngineExit(client, exit)));
    return client;
  }

  private onEngineExit(client: EngineClient, exit: EngineExit): void {
    if (this.client === client) this.client = undefined;
    for (const d of this.engineCleanup.splice(0)) d.dispose();
    this.engineExitEmitter.fire(exit);
    if (exit.expected) return;
    const how = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
    const hit = this.runs.markEngineGone(`the engine process stopped unexpectedly (${how})`);
    if (hit.length === 0) return;
    const names = hit.map((id) => this.runs.get(id)?.name ?? id).join(', ');
    void vscode.window
      .showWarningMessage(
        `SkillOpt: the engine stopped unexpectedly (${how}); ${names} ${hit.length === 1 ? 'was' : 'were'} interrupted. Finished steps are kept.`,
        'Resume',
        'Show Log',
      )
      .then((choice) => {
        if (choice === 'Resume') {
          void vscode.commands.executeCommand(Commands.resumeRun, hit[0]);
        } else if (choice === 'Show Log') this.log.show();
      });
  }

  /**
   * The engine was told at start whether the workspace is trusted (agent commands, scorer
   * commands). Once trust is granted, the next engine must know: restart it as soon as it is idle.
   */
  onTrustGranted(): void {
    this.restartEngineWhenIdle();
  }

  /** A setting the engine reads at start changed: restart it now if idle, else after its runs. */
  private restartEngineWhenIdle(): void {
    if (!this.client?.running) return;
    if (this.runs.activeRuns().length === 0) this.disposeEngine();
    else this.restartWhenIdle = true;
  }

  private async updateRunContext(): Promise<void> {
    const active = this.runs.activeRuns().length > 0;
    await vscode.commands.executeCommand('setContext', ContextKeys.runActive, active);
    if (!active && this.restartWhenIdle) this.disposeEngine();
  }

  private disposeEngine(): void {
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.shutdown().catch((err: unknown) => this.log.warn(`[engine] shutdown: ${errorMessage(err)}`));
    }
  }
}
