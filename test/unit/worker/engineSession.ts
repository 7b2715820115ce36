import type { EngineEvent } from '../../../src/protocol/events';
import { EngineNotifications, EngineRequests, protocolVersion } from '../../../src/protocol/engine';
import { RpcConnection, transportPair } from '../../../src/protocol/rpc';
import { serve } from '../../../src/worker/main';

export type RunEventMessage = { runId: string; seq: number; event: EngineEvent };

/**
 * The engine process's `serve` over an in-process transport, initialized as the extension does
 * (trusted workspace), and every run event it sends from then on.
 */
export async function engineSession(
  timeoutMs = 10_000,
): Promise<{ host: RpcConnection; events: RunEventMessage[] }> {
  const [hostSide, engineSide] = transportPair();
  serve(engineSide);
  const host = new RpcConnection(hostSide, timeoutMs);
  const events: RunEventMessage[] = [];
  host.onNotification(EngineNotifications.runEvent, (p) => events.push(p));
  await host.sendRequest(EngineRequests.initialize, {
    protocolVersion,
    clientVersion: 'test',
    trusted: true,
    logLevel: 'warn',
  });
  return { host, events };
}
