import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig } from '../../../src/engine/config/schema';
import { cancelRecordedBatches } from '../../../src/engine/llm/batch/cancel';
import { targetBatchApi } from '../../../src/engine/llm/batch/fromConfig';
import type { BatchApi } from '../../../src/engine/llm/batch/types';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import type { ChatRequest } from '../../../src/engine/llm/types';
import { writeJsonAtomic } from '../../../src/engine/store/atomic';
import { EVAL_FILE } from '../../../src/engine/store/layout';
import type { BatchState } from '../../../src/engine/store/runSchemas';
import { OpenAiBatchApi as LoopbackBatches } from '../../support/loopback/batchApis';
import { startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';

/** `skillopt eval --cancel-batch`'s engine side over the real `openai` SDK and the loopback Batch API. */
describe('cancelling recorded provider batches', () => {
  let dir: string;
  let server: LoopbackServer;
  const batches = new LoopbackBatches({ pollsToEnd: 3 });
  let api: BatchApi;
  const signal = new AbortController().signal;
  const req: ChatRequest = { role: 'target', stage: 'eval', messages: [{ role: 'user', content: 'Q?' }] };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-cancel-'));
    server = await startOpenAiServer(() => ({ kind: 'reply', text: 'A' }), { routes: batches.routes });
    const cfg = defaultConfig();
    api = targetBatchApi(
      { ...cfg, model: { ...cfg.model, target_supports_batch: true } },
      new OpenAiBackend({ model: 'loopback-target', baseUrl: server.url }),
    );
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** provider_batch.json in `folder`, as the runner writes it. */
  function record(folder: string, state: Partial<BatchState>): string {
    mkdirSync(join(dir, folder), { recursive: true });
    const file = join(dir, folder, EVAL_FILE.batch);
    writeJsonAtomic(file, {
      provider: api.provider,
      model: api.model,
      stage: 'eval',
      submitted_at: new Date().toISOString(),
      items: { 'item-0-x': 'q1', 'item-1-x': 'q2' },
      item_sha256: { q1: 'a', q2: 'b' },
      ...state,
    });
    return file;
  }

  const send = async (): Promise<string> =>
    (
      await api.submit(
        [
          { customId: 'item-0-x', req },
          { customId: 'item-1-x', req },
        ],
        'tag',
        signal,
      )
    ).batchId;

  it('cancels the running batch, and names the ended, the lost and the foreign ones without touching them', async () => {
    const running = await send();
    const ended = await send();
    for (let i = 0; i < 4; i++) await api.status(ended, signal);
    assert.equal((await api.status(ended, signal)).state, 'ended');
    const files = {
      running: record('eval_test', { batch_id: running }),
      ended: record(join('eval_test', 'repeat_2'), { batch_id: ended }),
      lost: record('eval_val', { submission: 'lost-tag' }),
      foreign: record('test_eval', { provider: 'anthropic', batch_id: 'msgbatch_1' }),
    };

    const got = await cancelRecordedBatches(dir, api, signal);
    const by = new Map(got.map((b) => [b.file, b]));
    assert.equal(got.length, 4);
    assert.equal(by.get(files.running)?.outcome, 'cancelled');
    assert.equal(by.get(files.running)?.status?.detail, 'cancelled');
    assert.equal(by.get(files.ended)?.outcome, 'ended');
    assert.equal(by.get(files.ended)?.status?.done, 2);
    assert.equal(by.get(files.lost)?.outcome, 'no_id');
    assert.deepEqual(
      [by.get(files.foreign)?.outcome, by.get(files.foreign)?.batchId],
      ['other_provider', 'msgbatch_1'],
    );
    assert.deepEqual(
      batches.cancelRequests,
      [running],
      'only the running batch of this provider was cancelled',
    );
    // The cancelled batch now reads as ended: a second cancel finds nothing to do.
    const again = await cancelRecordedBatches(dir, api, signal);
    assert.equal(again.find((b) => b.file === files.running)?.outcome, 'ended');
    assert.equal(batches.cancelRequests.length, 1);
  });

  it('finds nothing in a folder without batches, or one that does not exist, and leaves out the folder to skip', async () => {
    assert.deepEqual(await cancelRecordedBatches(join(dir, 'nowhere'), api, signal), []);
    const run = join('run', 'eval_only', 'best_test');
    const file = record(run, { batch_id: await send() });
    assert.deepEqual(await cancelRecordedBatches(join(dir, 'run'), api, signal, 'eval_only'), []);
    const got = await cancelRecordedBatches(join(dir, 'run'), api, signal);
    assert.deepEqual(
      got.map((b) => [b.file, b.outcome]),
      [[file, 'cancelled']],
    );
  });
});
