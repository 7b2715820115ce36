import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/protocol/events';
import { EngineRequests } from '../../../src/protocol/engine';
import { RpcError, type RpcConnection } from '../../../src/protocol/rpc';
import { engineSession } from './engineSession';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');

describe('engine process protocol (in-process transport)', function () {
  this.timeout(60_000);
  let dir: string;
  let host: RpcConnection;
  let events: Array<{ runId: string; seq: number; event: EngineEvent }>;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-worker-'));
    cpSync(example, dir, { recursive: true });
    ({ host, events } = await engineSession());
  });
  afterEach(() => {
    host.close('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a host that speaks another protocol version', async () => {
    await assert.rejects(
      host.sendRequest(EngineRequests.initialize, {
        protocolVersion: 999,
        clientVersion: 'x',
        trusted: true,
        logLevel: 'info',
      }),
      (err: unknown) => err instanceof RpcError && /protocol mismatch/.test(err.message),
    );
  });

  it('validates, runs a sim training run with ordered events, and reports its end', async () => {
    const source = { configPath: join(dir, 'skillopt.yaml'), overrides: ['cache.enabled=false'] };
    const v = await host.sendRequest(EngineRequests.validate, source);
    assert.deepEqual(v.splits, { train: 25, val: 19, test: 18 });
    assert.equal(v.simulated, true);
    // The start dialog's power check and the no-skill baseline's share of the calls.
    assert.deepEqual(v.gatePower, { test: 'strict', items: 19, repeats: 1, alpha: 0.05 });
    assert.equal(v.noSkillCalls, 19 + 18);
    const started = await host.sendRequest(EngineRequests.startRun, {
      ...source,
      outDir: join(dir, 'run'),
      resume: false,
    });
    assert.equal(started.outDir, join(dir, 'run'));
    const deadline = Date.now() + 30_000;
    while (!events.some((e) => e.event.type === 'run/finished') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const mine = events.filter((e) => e.runId === started.runId);
    assert.ok(mine.some((e) => e.event.type === 'run/finished'));
    assert.deepEqual(
      mine.map((e) => e.seq),
      mine.map((_e, i) => i),
      'sequence numbers are gap-free and ordered',
    );
  });

  it("the start dialog's validate refuses a dollar cap no model's price can reach, or names what it will not count", async () => {
    // The target on an OpenAI-compatible server (no built-in price); nothing is sent by validate.
    const wire = [
      'model.target_backend=openai',
      'model.target=house-target',
      'model.target_base_url=http://127.0.0.1:9/v1',
      'limits.max_dollars=3',
    ];
    const source = (extra: string[]) => ({
      configPath: join(dir, 'skillopt.yaml'),
      overrides: [...wire, ...extra],
      keys: { openai: 'test-key-not-real' },
    });
    await assert.rejects(
      host.sendRequest(EngineRequests.validate, source([])),
      (err: unknown) => err instanceof RpcError && /no price is known for house-target/.test(err.message),
    );
    const half = await host.sendRequest(
      EngineRequests.validate,
      source(['prices.house-target.input_per_mtok=1', 'prices.house-target.output_per_mtok=2']),
    );
    assert.ok(
      half.warnings.some((w) => /max_dollars \(\$3\) .*house-target have no cached_input_per_mtok/.test(w)),
      half.warnings.join('\n'),
    );
  });

  it('answers a review by its question id only, stops a run on request and answers decisions for unknown runs as ignored', async () => {
    const source = {
      configPath: join(dir, 'skillopt.yaml'),
      overrides: ['cache.enabled=false', 'review.mode=human-first'],
    };
    const started = await host.sendRequest(EngineRequests.startRun, {
      ...source,
      outDir: join(dir, 'run'),
      resume: false,
    });
    // human-first: the run waits for the person at step 1; answer it over the protocol.
    const deadline = Date.now() + 20_000;
    while (!events.some((e) => e.event.type === 'review/requested') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const req = events.find((e) => e.event.type === 'review/requested')!.event as Extract<
      EngineEvent,
      { type: 'review/requested' }
    >;
    const keep = req.edits.map((e) => ({ editId: e.id, accept: true }));
    // An answer drawn for another question of this step (an earlier run's, a re-ask) answers nothing,
    // and neither does one naming no question while this one is open.
    const drop = req.edits.map((e) => ({ editId: e.id, accept: false }));
    for (const stale of [{ questionId: 'an-earlier-question' }, {}]) {
      const other = await host.sendRequest(EngineRequests.decide, {
        runId: started.runId,
        step: req.step,
        decisions: drop,
        ...stale,
      });
      assert.deepEqual(other, { ok: true, applied: 'stale' });
    }
    assert.ok(!events.some((e) => e.event.type === 'review/decided'), 'the question is still open');
    const answer = await host.sendRequest(EngineRequests.decide, {
      runId: started.runId,
      step: req.step,
      questionId: req.questionId,
      decisions: keep,
    });
    assert.deepEqual(answer, { ok: true, applied: 'pending-review' });
    const again = await host.sendRequest(EngineRequests.decide, {
      runId: started.runId,
      step: req.step,
      questionId: req.questionId,
      decisions: drop,
    });
    assert.deepEqual(again, { ok: true, applied: 'stale' }, 'a question is answered once');
    const stopped = await host.sendRequest(
      EngineRequests.stopRun,
      { runId: started.runId },
      { timeoutMs: 20_000 },
    );
    assert.equal(stopped.stopped, true);
    assert.ok(events.some((e) => e.event.type === 'run/stopped'));
    const ignored = await host.sendRequest(EngineRequests.decide, { runId: 'nope', step: 1, decisions: [] });
    assert.deepEqual(ignored, { ok: false, applied: 'ignored' });
  });

  it('forwards vscode-lm requests to the host and uses its answers', async () => {
    let asked = 0;
    host.onRequest(EngineRequests.lmRequest, (p) => {
      asked++;
      assert.ok(
        !p.messages.some((m) => (m as { role: string }).role === 'system'),
        'vscode.lm has no system role',
      );
      const task = p.messages.map((m) => m.content).join('\n');
      return {
        text: `<answer>${task.includes('capital of Canada') ? 'Ottawa' : 'unknown'}</answer>`,
        model: 'test-lm',
      };
    });
    const result = await host.sendRequest(
      EngineRequests.evaluate,
      {
        configPath: join(dir, 'skillopt.yaml'),
        overrides: ['cache.enabled=false', 'model.target_backend=vscode-lm', 'model.target=test/lm'],
        skillPath: join(dir, 'SKILL.md'),
        split: 'val',
        outDir: join(dir, 'eval'),
      },
      { timeoutMs: 20_000 },
    );
    assert.equal(asked, 19);
    assert.equal(result.n_items, 19);
  });

  it('refuses a binary skill for Evaluate before any call, naming the command', async () => {
    const binary = join(dir, 'tool.md');
    writeFileSync(binary, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2]));
    await assert.rejects(
      host.sendRequest(
        EngineRequests.evaluate,
        {
          configPath: join(dir, 'skillopt.yaml'),
          overrides: ['cache.enabled=false'],
          skillPath: binary,
          split: 'val',
          outDir: join(dir, 'eval-binary'),
        },
        { timeoutMs: 20_000 },
      ),
      (err: unknown) =>
        err instanceof RpcError && /NUL bytes/.test(err.message) && /the Evaluate command/.test(err.message),
    );
    assert.ok(!existsSync(join(dir, 'eval-binary', 'eval_only')), 'nothing scored');
  });

  it('runs the A/A check the Check Gate Noise command asks for, and refuses a bad count before any call', async () => {
    const params = {
      configPath: join(dir, 'skillopt.yaml'),
      overrides: ['cache.enabled=false'],
      skillPath: join(dir, 'SKILL.md'),
      split: 'val' as const,
    };
    const result = await host.sendRequest(
      EngineRequests.evaluate,
      { ...params, outDir: join(dir, 'aa'), aa: 3 },
      { timeoutMs: 30_000 },
    );
    assert.equal(result.aa?.runs, 3);
    assert.equal(result.aa?.comparisons, 6);
    assert.equal(result.aa?.items, 19);
    await assert.rejects(
      host.sendRequest(EngineRequests.evaluate, { ...params, outDir: join(dir, 'aa1'), aa: 1 }),
      (err: unknown) => err instanceof RpcError && /A\/A check needs 2 to 20 runs/.test(err.message),
    );
  });
});
