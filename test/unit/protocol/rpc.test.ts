import assert from 'node:assert/strict';
import {
  RpcConnection,
  RpcError,
  notification,
  request,
  transportPair,
  type Transport,
  type WireMessage,
} from '../../../src/protocol/rpc';

const echo = request<{ text: string }, { text: string }>('test/echo');
const never = request<Record<string, never>, never>('test/never');
const boom = request<Record<string, never>, never>('test/boom');
const note = notification<{ n: number }>('test/note');

function pair(): { a: RpcConnection; b: RpcConnection } {
  const [ta, tb] = transportPair();
  return { a: new RpcConnection(ta, 5_000), b: new RpcConnection(tb, 5_000) };
}

describe('typed RPC channel', () => {
  it('answers requests, delivers notifications and carries error reasons', async () => {
    const { a, b } = pair();
    b.onRequest(echo, (p) => ({ text: p.text.toUpperCase() }));
    b.onRequest(boom, () => {
      throw Object.assign(new Error('config is broken'), { reason: 'config' });
    });
    const got: number[] = [];
    b.onNotification(note, (p) => got.push(p.n));
    assert.deepEqual(await a.sendRequest(echo, { text: 'hi' }), { text: 'HI' });
    a.notify(note, { n: 1 });
    a.notify(note, { n: 2 });
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(got, [1, 2]);
    await assert.rejects(
      a.sendRequest(boom, {}),
      (e: unknown) => e instanceof RpcError && e.reason === 'config',
    );
    await assert.rejects(
      a.sendRequest(request('test/none'), {}),
      (e: unknown) => e instanceof RpcError && /no handler/.test(e.message),
    );
  });

  it('times out, cancels (and tells the other side), and fails pending requests when the channel closes', async () => {
    const { a, b } = pair();
    let handlerAborted = false;
    b.onRequest(
      never,
      (_p, signal) =>
        new Promise<never>(() => signal.addEventListener('abort', () => (handlerAborted = true))),
    );
    await assert.rejects(
      a.sendRequest(never, {}, { timeoutMs: 30 }),
      (e: unknown) => e instanceof RpcError && e.reason === 'timeout',
    );
    const controller = new AbortController();
    const pending = a.sendRequest(never, {}, { signal: controller.signal, timeoutMs: 0 });
    controller.abort();
    await assert.rejects(pending, (e: unknown) => e instanceof RpcError && e.reason === 'cancelled');
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(handlerAborted, true);
    const hanging = a.sendRequest(never, {}, { timeoutMs: 0 });
    a.close('engine exited with code 1');
    await assert.rejects(
      hanging,
      (e: unknown) => e instanceof RpcError && e.reason === 'closed' && /code 1/.test(e.message),
    );
    await assert.rejects(
      a.sendRequest(echo, { text: 'x' }),
      (e: unknown) => e instanceof RpcError && e.reason === 'closed',
    );
  });

  it('fails pending requests when the transport reports it closed', async () => {
    let closeIt: (reason: string) => void = () => undefined;
    const silent: Transport = {
      send: (_m: WireMessage) => undefined,
      onMessage: () => undefined,
      onClose: (l) => (closeIt = l),
    };
    const c = new RpcConnection(silent);
    const p = c.sendRequest(echo, { text: 'x' }, { timeoutMs: 0 });
    closeIt('process died');
    await assert.rejects(p, /process died/);
  });
});
