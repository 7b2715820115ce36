import assert from 'node:assert/strict';
import { defaultConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { AnthropicBackend } from '../../../src/engine/llm/anthropic';
import { AnthropicBatchApi } from '../../../src/engine/llm/batch/anthropic';
import { batchStages, targetBatchApi } from '../../../src/engine/llm/batch/fromConfig';
import { OpenAiBatchApi } from '../../../src/engine/llm/batch/openai';
import { AzureOpenAiBackend, OpenAiBackend } from '../../../src/engine/llm/openai';
import { batchProvider, PriceTable } from '../../../src/engine/llm/prices';
import { SimTargetBackend } from '../../../src/engine/llm/sim/target';

/** Which targets have a batch API, what each mode sends through it, and what a batch call costs. */
describe('batch API: backends, modes and prices', () => {
  const key = 'test-key-not-real';
  const refused = (fn: () => unknown, pattern: RegExp): void =>
    assert.throws(
      fn,
      (err: unknown) =>
        SkillOptError.is(err, 'config') &&
        err.place.key === 'evaluation.batch_api' &&
        pattern.test(err.message) &&
        /evaluation\.batch_api: off/.test(err.place.fix ?? ''),
    );

  it('gives OpenAI and Anthropic targets their batch API, and refuses the others with the way out', () => {
    const cfg = defaultConfig();
    const openai = targetBatchApi(cfg, new OpenAiBackend({ model: 'gpt-4.1-mini', apiKey: key }));
    assert.ok(openai instanceof OpenAiBatchApi);
    assert.equal(openai.provider, 'openai');
    const claude = targetBatchApi(cfg, new AnthropicBackend({ model: 'claude-haiku-4-5', apiKey: key }));
    assert.ok(claude instanceof AnthropicBatchApi);
    refused(
      () =>
        targetBatchApi(
          cfg,
          new AzureOpenAiBackend({ endpoint: 'https://x.openai.azure.com', deployment: 'd', apiKey: key }),
        ),
      /Global Batch deployment/,
    );
    refused(() => targetBatchApi(cfg, new SimTargetBackend('sim-target', [])), /sim target has no batch API/);
    const local = new OpenAiBackend({ model: 'qwen', baseUrl: 'http://127.0.0.1:8000/v1' });
    refused(() => targetBatchApi(cfg, local), /not OpenAI, and most compatible servers have no Batch API/);
    const declared = { ...cfg, model: { ...cfg.model, target_supports_batch: true } };
    assert.equal(targetBatchApi(declared, local).provider, 'openai_compatible');
  });

  it('sends the final test evaluation and eval-only with `final`, selections too with `selection`', () => {
    assert.deepEqual([...batchStages('off')], []);
    assert.deepEqual([...batchStages('final')].sort(), ['eval', 'test']);
    assert.deepEqual([...batchStages('selection')].sort(), ['eval', 'selection', 'test']);
  });

  it('prices batch calls at half the list price, the config’s prices included; unknown stays unknown', () => {
    const table = new PriceTable({ 'my-model': { input_per_mtok: 3, output_per_mtok: 9 } });
    const list = table.cost('gpt-4o', 'openai', 1_000_000, 1_000_000)!;
    assert.equal(table.cost('gpt-4o', batchProvider('openai'), 1_000_000, 1_000_000), list / 2);
    assert.equal(table.cost('claude-haiku-4-5', batchProvider('anthropic'), 2_000_000, 0), 1);
    assert.equal(table.cost('my-model', batchProvider('openai_compatible'), 1_000_000, 1_000_000), 6);
    assert.equal(table.cost('no-such-model', batchProvider('openai'), 1, 1), null);
  });
});
