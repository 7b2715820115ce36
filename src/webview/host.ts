/**
 * The webview's only way to reach VS Code. Everything else talks to `getHost()`, so the page can
 * be driven by something else (a test page) through `setHost()`.
 */
import type { GateHistoryState, WebviewMessage } from '../protocol/webview';
import { isGateHistoryState } from '../protocol/webview';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export interface Host {
  post(message: WebviewMessage): void;
  getState(): GateHistoryState | undefined;
  setState(state: GateHistoryState): void;
}

let current: Host | undefined;

export function setHost(host: Host): void {
  current = host;
}

export function getHost(): Host {
  if (current) return current;
  // acquireVsCodeApi may be called once per page load.
  const api = acquireVsCodeApi();
  current = {
    post: (m) => api.postMessage(m),
    getState: () => {
      const s = api.getState();
      return isGateHistoryState(s) ? s : undefined;
    },
    setState: (s) => api.setState(s),
  };
  return current;
}
