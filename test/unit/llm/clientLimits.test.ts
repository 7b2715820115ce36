import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import { createModelClient } from '../../../src/engine/llm/client';
import { LimitRegistry, limitsFromConfig, Semaphore } from '../../../src/engine/llm/limiter';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import type { ChatRequest, ModelRole } from '../../../src/engine/llm/types';
import type { LoopbackServer } from '../../support/loopback/openaiServer';
import { startOpenAiServer } from '../../support/loopback/openaiServer';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('llm/limiter', () => {
  it('serves waiters first in, first out', async () => {
    const sem = new Semaphore(2);
    const order: string[] = [];
    const gates = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, gate: deferred() }));
    const runs = gates.map(({ name, gate }) =>
      sem.run(async () => {
        order.push(`start ${name}`);
        await gate.promise;
        order.push(`end ${name}`);
      }),
    );
    await Promise.resolve();
    assert.equal(sem.active, 2);
    assert.equal(sem.waiting, 3);
    for (const name of ['b', 'a', 'c', 'd', 'e']) {
      gates.find((g) => g.name === name)!.gate.resolve();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(runs);
    assert.deepEqual(order, [
      'start a',
      'start b',
      'end b',
      'start c',
      'end a',
      'start d',
      'end c',
      'start e',
      'end d',
      'end e',
    ]);
    assert.equal(sem.active, 0);
  });

  it('drops a waiter whose signal fires, and releases a permit once however often release is called', async () => {
    const sem = new Semaphore(1);
    const release = await sem.acquire();
    const controller = new AbortController();
    const cancelled = sem.acquire(controller.signal);
    const next = sem.acquire();
    assert.equal(sem.waiting, 2);
    controller.abort();
    await assert.rejects(cancelled, (err: unknown) => SkillOptError.is(err, 'cancelled'));
    assert.equal(sem.waiting, 1);
    release();
    release();
    const releaseNext = await next;
    assert.equal(sem.active, 1);
    releaseNext();
    assert.equal(sem.active, 0);
    await assert.rejects(sem.acquire(AbortSignal.abort()), (err: unknown) =>
      SkillOptError.is(err, 'cancelled'),
    );
    assert.throws(() => new Semaphore(0), RangeError);
  });

  it('hands out one shared semaphore per role and per provider', () => {
    const limits = { optimizer_concurrency: 16, target_concurrency: 32, provider_concurrency: { openai: 4 } };
    const reg = new LimitRegistry(limitsFromConfig({ limits, env: {} }));
    assert.equal(reg.role('target')!.limit, 32);
    assert.equal(reg.role('optimizer')!.limit, 16);
    assert.equal(reg.role('target'), reg.role('target'));
    assert.equal(reg.provider('openai')!.limit, 4);
    assert.equal(reg.provider('anthropic'), undefined, 'no limit configured');
    // The reference's rollout workers cap target calls too: the lower cap holds.
    assert.equal(
      new LimitRegistry(limitsFromConfig({ limits, env: { workers: 16 } })).role('target')!.limit,
      16,
    );
    assert.equal(
      new LimitRegistry(limitsFromConfig({ limits, env: { workers: 64 } })).role('target')!.limit,
      32,
    );
  });

  describe('against a loopback server', () => {
    let server: LoopbackServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    async function burst(limits: LimitRegistry, roles: ModelRole[]): Promise<number> {
      server = await startOpenAiServer(() => ({ kind: 'reply', text: 'ok' }), { latencyMs: 60 });
      const backend = new OpenAiBackend({ model: 'm', baseUrl: server.url, provider: 'local' });
      const clients = {
        optimizer: createModelClient({ role: 'optimizer', backend, limits }),
        target: createModelClient({ role: 'target', backend, limits }),
      };
      await Promise.all(
        roles.map((role, i) => {
          const req: ChatRequest = { role, stage: 'rollout', messages: [{ role: 'user', content: `q${i}` }] };
          return clients[role].chat(req);
        }),
      );
      assert.equal(server.requests.length, roles.length);
      return server.maxInFlight;
    }

    it('keeps in-flight requests within the provider limit shared by both roles', async () => {
      const limits = new LimitRegistry({
        roleLimits: { optimizer: 10, target: 10 },
        providerLimits: { local: 3 },
      });
      const max = await burst(limits, [
        'target',
        'optimizer',
        'target',
        'optimizer',
        'target',
        'optimizer',
        'target',
        'target',
        'target',
        'optimizer',
      ]);
      assert.ok(max <= 3, `max in flight ${max}`);
      assert.ok(max >= 2, `the limit was never used (max in flight ${max})`);
    });

    it('keeps in-flight requests within the role limit', async () => {
      const limits = new LimitRegistry({ roleLimits: { target: 2 }, providerLimits: { local: 50 } });
      const max = await burst(limits, Array<ModelRole>(8).fill('target'));
      assert.equal(max, 2);
    });
  });
});
