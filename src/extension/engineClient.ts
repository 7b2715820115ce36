/**
 * The engine process seen from the extension host: `child_process.fork` of dist/worker.js, the
 * typed protocol of src/protocol/engine.ts over Node's IPC channel, a version handshake, and
 * requests that time out, can be cancelled and fail at once when the process dies. stdout and
 * stderr carry only crash output and go to the log.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import {
  EngineRequests,
  protocolVersion,
  type InitializeParams,
  type InitializeResult,
} from '../protocol/engine';
import {
  RpcConnection,
  RpcError,
  type NotificationType,
  type RequestType,
  type Transport,
  type WireMessage,
} from '../protocol/rpc';

export interface EngineExit {
  code: number | null;
  signal: string | null;
  /** True when the host asked the engine to stop (shutdown, dispose, reload). */
  expected: boolean;
}

export interface RequestOptions {
  /** Deadline in ms; 0 waits without one (runs report through events). */
  timeoutMs?: number;
  token?: vscode.CancellationToken;
}

export interface EngineStartOptions {
  workerPath: string;
  /** Node flags for the engine, e.g. `--inspect=6019` in development mode. */
  execArgv: string[];
  log: vscode.LogOutputChannel;
  init: Omit<InitializeParams, 'protocolVersion'>;
  defaultTimeoutMs: number;
  /** Called before the handshake, so engine → host requests (lm/request) have a handler at once. */
  configure?: (client: EngineClient) => void;
}

const handshakeTimeoutMs = 15_000;
const shutdownGraceMs = 3_000;

function childTransport(child: ChildProcess, onSendError: (err: Error) => void): Transport {
  return {
    send: (m) => {
      if (!child.connected) return;
      // With a callback, a channel that closes mid-send reports here instead of throwing.
      child.send(m, (err) => {
        if (err) onSendError(err);
      });
    },
    onMessage: (listener) => child.on('message', (m) => listener(m as WireMessage)),
    onClose: (listener) =>
      child.on('exit', (code, signal) => listener(`engine process exited (${signal ?? `code ${code}`})`)),
  };
}

export class EngineClient implements vscode.Disposable {
  private readonly exitEmitter = new vscode.EventEmitter<EngineExit>();
  /** Fires once when the process is gone; `expected` is false for crashes and kills. */
  readonly onDidExit = this.exitEmitter.event;
  private stopping = false;
  private exited = false;
  private info: InitializeResult | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly conn: RpcConnection,
    private readonly defaultTimeoutMs: number,
  ) {}

  /** Forks the worker and completes the handshake; rejects (and kills it) on a version mismatch. */
  static async start(opts: EngineStartOptions): Promise<EngineClient> {
    const child = fork(opts.workerPath, [], {
      execArgv: opts.execArgv,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // Inside desktop VS Code process.execPath is Electron; this makes it behave as Node.
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      serialization: 'json',
    });
    const conn = new RpcConnection(
      childTransport(child, (err) => opts.log.warn(`[engine] message not delivered: ${err.message}`)),
      opts.defaultTimeoutMs,
    );
    const client = new EngineClient(child, conn, opts.defaultTimeoutMs);
    const pipeLines = (stream: NodeJS.ReadableStream | null, level: 'info' | 'warn'): void => {
      let buf = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        buf += chunk;
        const lines = buf.split('\n');
        buf = lines.pop() ?? '';
        for (const l of lines)
          if (l.trim()) opts.log[level](`[engine:${level === 'warn' ? 'stderr' : 'stdout'}] ${l}`);
      });
    };
    pipeLines(child.stdout, 'info');
    pipeLines(child.stderr, 'warn');
    child.on('error', (err) => {
      opts.log.error(`[engine] process error: ${err.message}`);
      conn.close(`engine process failed: ${err.message}`);
    });
    // 'close', not 'exit': Node may deliver IPC messages sent just before the end after 'exit', and
    // a late "stage started" would mark a crashed run as running again.
    child.on('close', (code, signal) => {
      client.exited = true;
      const expected = client.stopping;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (expected) opts.log.info(`[engine] stopped (${how})`);
      else opts.log.error(`[engine] exited unexpectedly (${how})`);
      client.exitEmitter.fire({ code, signal, expected });
      client.exitEmitter.dispose();
    });
    opts.configure?.(client);
    try {
      const info = await conn.sendRequest(
        EngineRequests.initialize,
        { protocolVersion, ...opts.init },
        { timeoutMs: handshakeTimeoutMs },
      );
      if (info.protocolVersion !== protocolVersion) {
        throw new Error(
          `the engine speaks protocol ${info.protocolVersion}, this extension ${protocolVersion}; reload the window`,
        );
      }
      client.info = info;
      opts.log.info(
        `[engine] started: pid ${info.pid}, engine ${info.engineVersion}, protocol ${info.protocolVersion}`,
      );
      return client;
    } catch (err) {
      client.kill();
      throw err;
    }
  }

  get pid(): number | undefined {
    return this.info?.pid ?? this.child.pid;
  }

  get running(): boolean {
    return !this.exited && !this.conn.closed;
  }

  request<P, R>(type: RequestType<P, R>, params: P, opts: RequestOptions = {}): Promise<R> {
    const token = opts.token;
    if (token?.isCancellationRequested) {
      return Promise.reject(new RpcError(`${type.method} was cancelled`, 'cancelled'));
    }
    const controller = new AbortController();
    const sub = token?.onCancellationRequested(() => controller.abort());
    return this.conn
      .sendRequest<P, R>(type, params, {
        timeoutMs: opts.timeoutMs ?? this.defaultTimeoutMs,
        signal: controller.signal,
      })
      .finally(() => {
        sub?.dispose();
      });
  }

  onRequest<P, R>(type: RequestType<P, R>, handler: (params: P, signal: AbortSignal) => Promise<R>): void {
    this.conn.onRequest(type, handler);
  }

  onNotification<P>(type: NotificationType<P>, handler: (params: P) => void): void {
    this.conn.onNotification(type, handler);
  }

  /** Asks the engine to finish in-flight work and exit; kills it after a grace period. */
  async shutdown(): Promise<void> {
    if (this.exited) return;
    this.stopping = true;
    const gone = new Promise<void>((resolve) => {
      if (this.exited) resolve();
      else this.child.once('exit', () => resolve());
    });
    const timer = setTimeout(() => this.kill(), shutdownGraceMs);
    try {
      await this.conn.sendRequest(EngineRequests.shutdown, {}, { timeoutMs: shutdownGraceMs });
    } catch {
      // Already gone, or too slow: the timer kills it.
    }
    await gone;
    clearTimeout(timer);
  }

  private kill(): void {
    this.stopping = true;
    if (!this.exited) this.child.kill('SIGKILL');
  }

  dispose(): void {
    if (this.exited) return;
    // Reload or deactivate: ask politely, and make sure nothing outlives the host.
    void this.shutdown();
  }
}
