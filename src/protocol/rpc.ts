/**
 * A small typed request/notification channel over any message transport (Node's IPC channel
 * between the extension host and the engine process, or an in-process pair in tests). Every
 * request has a timeout and can be cancelled; when the transport closes, pending requests fail
 * instead of hanging. No Node or VS Code imports: both sides and tests share this file.
 */

export interface RequestType<P, R> {
  readonly method: string;
  readonly _params?: P;
  readonly _result?: R;
}

export interface NotificationType<P> {
  readonly method: string;
  readonly _params?: P;
}

export function request<P, R>(method: string): RequestType<P, R> {
  return { method };
}

export function notification<P>(method: string): NotificationType<P> {
  return { method };
}

export type WireMessage =
  | { kind: 'request'; id: number; method: string; params: unknown }
  | { kind: 'response'; id: number; result?: unknown; error?: WireError }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'cancel'; id: number };

export interface WireError {
  message: string;
  /** SkillOptError reason, `timeout`, `cancelled`, `closed` or `internal`. */
  reason: string;
}

export interface Transport {
  send(message: WireMessage): void;
  onMessage(listener: (message: WireMessage) => void): void;
  onClose(listener: (reason: string) => void): void;
}

/** Error from the other side (or from the channel itself), with the typed reason preserved. */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

type Handler = (params: unknown, signal: AbortSignal) => unknown;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class RpcConnection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, Handler>();
  private readonly notificationHandlers = new Map<string, (params: unknown) => void>();
  private readonly running = new Map<number, AbortController>();
  private closedReason: string | undefined;

  constructor(
    private readonly transport: Transport,
    private readonly defaultTimeoutMs = 30_000,
  ) {
    transport.onMessage((m) => this.receive(m));
    transport.onClose((reason) => this.close(reason));
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  onRequest<P, R>(
    type: RequestType<P, R>,
    handler: (params: P, signal: AbortSignal) => R | Promise<R>,
  ): void {
    this.handlers.set(type.method, handler as Handler);
  }

  onNotification<P>(type: NotificationType<P>, handler: (params: P) => void): void {
    this.notificationHandlers.set(type.method, handler as (params: unknown) => void);
  }

  notify<P>(type: NotificationType<P>, params: P): void {
    if (this.closed) return;
    this.transport.send({ kind: 'notification', method: type.method, params });
  }

  /** `timeoutMs: 0` waits without a deadline (used for long runs that report through events). */
  sendRequest<P, R>(
    type: RequestType<P, R>,
    params: P,
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<R> {
    if (this.closedReason)
      return Promise.reject(new RpcError(`engine connection closed: ${this.closedReason}`, 'closed'));
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.pending.delete(id);
              this.transport.send({ kind: 'cancel', id });
              reject(new RpcError(`${type.method} timed out after ${timeoutMs} ms`, 'timeout'));
            }, timeoutMs)
          : undefined;
      this.pending.set(id, { resolve: resolve, reject, timer });
      opts.signal?.addEventListener(
        'abort',
        () => {
          if (!this.pending.has(id)) return;
          this.settle(id);
          this.transport.send({ kind: 'cancel', id });
          reject(new RpcError(`${type.method} was cancelled`, 'cancelled'));
        },
        { once: true },
      );
      this.transport.send({ kind: 'request', id, method: type.method, params });
    });
  }

  /** Fail everything pending; further requests reject at once. */
  close(reason: string): void {
    if (this.closedReason) return;
    this.closedReason = reason;
    for (const [id, p] of this.pending) {
      this.settle(id);
      p.reject(new RpcError(`engine connection closed: ${reason}`, 'closed'));
    }
    for (const c of this.running.values()) c.abort();
    this.running.clear();
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (p?.timer) clearTimeout(p.timer);
    this.pending.delete(id);
    return p;
  }

  private receive(m: WireMessage): void {
    switch (m.kind) {
      case 'response': {
        const p = this.settle(m.id);
        if (!p) return;
        if (m.error) p.reject(new RpcError(m.error.message, m.error.reason));
        else p.resolve(m.result);
        return;
      }
      case 'notification':
        this.notificationHandlers.get(m.method)?.(m.params);
        return;
      case 'cancel':
        this.running.get(m.id)?.abort();
        return;
      case 'request':
        void this.handle(m.id, m.method, m.params);
        return;
    }
  }

  private async handle(id: number, method: string, params: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    if (!handler) {
      this.transport.send({
        kind: 'response',
        id,
        error: { message: `no handler for ${method}`, reason: 'internal' },
      });
      return;
    }
    const controller = new AbortController();
    this.running.set(id, controller);
    try {
      const result = await handler(params, controller.signal);
      if (!this.closed) this.transport.send({ kind: 'response', id, result });
    } catch (err) {
      const reason =
        err && typeof err === 'object' && 'reason' in err && typeof err.reason === 'string'
          ? err.reason
          : 'internal';
      const message = err instanceof Error ? err.message : String(err);
      if (!this.closed) this.transport.send({ kind: 'response', id, error: { message, reason } });
    } finally {
      this.running.delete(id);
    }
  }
}

/** Two connected in-memory transports, for tests and for running the engine in-process. */
export function transportPair(): [Transport, Transport] {
  const make = (): {
    t: Transport;
    deliver: (m: WireMessage) => void;
    closeAll: (r: string) => void;
  } => {
    const listeners: Array<(m: WireMessage) => void> = [];
    const closers: Array<(r: string) => void> = [];
    return {
      t: {
        send: () => undefined,
        onMessage: (l) => listeners.push(l),
        onClose: (l) => closers.push(l),
      },
      deliver: (m) => {
        // Async delivery, like a real channel, and a structured clone so no object is shared.
        const copy = JSON.parse(JSON.stringify(m)) as WireMessage;
        queueMicrotask(() => listeners.forEach((l) => l(copy)));
      },
      closeAll: (r) => closers.forEach((c) => c(r)),
    };
  };
  const a = make();
  const b = make();
  a.t.send = (m): void => b.deliver(m);
  b.t.send = (m): void => a.deliver(m);
  return [a.t, b.t];
}
