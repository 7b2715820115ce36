import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { recordedBatches } from '../../../src/engine/llm/batch/cancel';
import { EVAL_FILE, RUN_FILE } from '../../../src/engine/store/layout';
import type { EngineEvent } from '../../../src/protocol/events';
import { EngineRequests } from '../../../src/protocol/engine';
import { RpcError, type RpcConnection } from '../../../src/protocol/rpc';
import { engineSession } from './engineSession';
import { OpenAiBatchApi } from '../../support/loopback/batchApis';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedFinalBatchOverrides, scriptedModels } from '../../support/loopback/scriptedModels';
import { exampleTasks } from '../train/batchHelpers';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');

type BatchProgress = Extract<EngineEvent, { type: 'batch/progress' }>;

/**
 * `run/cancelBatches` (the extension's Cancel Provider Batch) through the engine process's protocol,
 * over the real `openai` SDK and the loopback Batch API: a run stopped while its final test
 * evaluation waits on a batch, then the batch cancelled as `skillopt train --cancel-batch` would.
 */
describe('engine process: cancelling a stopped run’s provider batches (loopback Batch API)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: LoopbackServer;
  let host: RpcConnection;
  let events: Array<{ runId: string; event: EngineEvent }>;
  // The batch never ends on its own: only the cancel ends it.
  const api = new OpenAiBatchApi({ pollsToEnd: 100_000 });

  before(async () => {
    server = await startOpenAiServer(scriptedModels(exampleTasks()), { routes: api.routes });
  });
  after(async () => {
    await server.close();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-worker-cancel-'));
    cpSync(example, dir, { recursive: true });
    ({ host, events } = await engineSession(30_000));
  });
  afterEach(() => {
    host.close('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  const source = (): { configPath: string; overrides: string[] } => ({
    configPath: join(dir, 'skillopt.yaml'),
    overrides: scriptedFinalBatchOverrides(server.url, 0.05),
  });

  it('refuses while the run trains; after Stop cancels each batch still running and says what each answered', async () => {
    const outDir = join(dir, 'run');
    const { runId } = await host.sendRequest(EngineRequests.startRun, { ...source(), outDir, resume: false });
    const deadline = Date.now() + 90_000;
    const progress = (): BatchProgress[] =>
      events
        .filter((e) => e.runId === runId)
        .map((e) => e.event)
        .filter((e): e is BatchProgress => e.type === 'batch/progress');
    while (!progress().some((e) => e.state === 'running') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(progress().length, 'the run sent its test evaluation as a batch');

    await assert.rejects(
      host.sendRequest(EngineRequests.cancelBatches, { ...source(), outDir }),
      (err: unknown) =>
        err instanceof RpcError &&
        /this run is still training/.test(err.message) &&
        /Fix: stop the run first \(Stop Run\)/.test(err.message),
    );
    assert.equal(api.cancelRequests.length, 0, 'nothing was cancelled under a running run');

    assert.deepEqual(await host.sendRequest(EngineRequests.stopRun, { runId }), { stopped: true });
    // A batch of the run's eval_only/ evaluations is theirs to cancel (skillopt eval --cancel-batch).
    const evalOnly = join(outDir, 'eval_only', 'best_test');
    mkdirSync(evalOnly, { recursive: true });
    const recorded = recordedBatches(outDir);
    assert.ok(recorded.length, 'the run folder records its batch');
    cpSync(recorded[0]!, join(evalOnly, EVAL_FILE.batch));

    const got = await host.sendRequest(EngineRequests.cancelBatches, { ...source(), outDir });
    assert.equal(got.outDir, outDir);
    assert.ok(got.batches.length >= 1);
    for (const b of got.batches) {
      assert.equal(b.outcome, 'cancelled');
      assert.equal(b.provider, 'openai_compatible');
      assert.equal(b.stage, 'test');
      assert.ok(b.file.startsWith(outDir + sep) && b.file.endsWith(EVAL_FILE.batch), b.file);
      assert.ok(!b.file.includes(`${sep}eval_only${sep}`), b.file);
      assert.equal(b.status?.detail, 'cancelled');
      assert.ok(b.status.total > 0 && b.status.done <= b.status.total);
    }
    const ids = got.batches.map((b) => b.batchId!).sort();
    assert.deepEqual([...api.cancelRequests].sort(), ids);
    for (const e of progress()) assert.ok(ids.includes(e.batchId), `${e.batchId} was cancelled`);
    assert.equal(existsSync(join(outDir, RUN_FILE.lock)), false, 'the lock was let go');

    // Cancelled is ended: a second cancel asks the provider nothing more.
    const again = await host.sendRequest(EngineRequests.cancelBatches, { ...source(), outDir });
    assert.deepEqual(
      again.batches.map((b) => b.outcome),
      got.batches.map(() => 'ended'),
    );
    assert.equal(api.cancelRequests.length, ids.length);
  });

  it('refuses a target without a batch API, naming the key, and finds nothing in a folder without batches', async () => {
    await assert.rejects(
      host.sendRequest(EngineRequests.cancelBatches, {
        configPath: join(dir, 'skillopt.yaml'),
        outDir: join(dir, 'sim-run'),
      }),
      (err: unknown) =>
        err instanceof RpcError &&
        /^evaluation\.batch_api: the sim target has no batch API .*, so no batch of this target can be running/.test(
          err.message,
        ) &&
        /Fix: a batch sent with another target is cancelled with that target's config/.test(err.message),
    );
    const none = await host.sendRequest(EngineRequests.cancelBatches, {
      ...source(),
      outDir: join(dir, 'none'),
    });
    assert.deepEqual(none.batches, []);
  });
});
