import assert from 'node:assert/strict';
import { prepareRun } from '../../../src/engine/run';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import type { PromptCacheSummary } from '../../../src/engine/llm/spendText';
import { startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { withPromptCache } from '../../support/loopback/promptCache';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
  scriptedWireOverrides,
  stageOf,
} from '../../support/loopback/scriptedModels';
import { exampleConfig, read, readJson, runSim, tempDir } from './helpers';

/**
 * A whole training run through the real `openai` SDK with provider prompt caching: the server plays
 * OpenAI's prompt cache by `prompt_cache_key`, and the cached tokens it reports must reach the
 * ledger, summary.json and report.md.
 */
describe('training loop with provider prompt caching (OpenAI wire, loopback)', function () {
  this.timeout(90_000);
  let server: LoopbackServer;
  let dir: ReturnType<typeof tempDir>;

  before(async () => {
    dir = tempDir('skillopt-pcache-wire-');
    const probe = prepareRun({ configPath: exampleConfig, outDir: dir.path, dryRun: true });
    const all = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    server = await startOpenAiServer(withPromptCache('openai', scriptedModels(all)).handler);
  });
  after(async () => {
    await server.close();
    dir.cleanup();
  });

  it('sends a key per skill version and role, and counts the cached tokens everywhere', async () => {
    const prepared = prepareRun({
      configPath: exampleConfig,
      outDir: dir.path,
      overrides: ['cache.enabled=false', ...scriptedWireOverrides(server.url), 'model.prompt_cache_key=on'],
    });
    const { outcome } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');

    const bodies = server.requests.map(
      (r) => r.body as { model: string; prompt_cache_key?: string; messages: Array<{ content: string }> },
    );
    const target = bodies.filter((b) => b.model === scriptedTargetModel);
    const keyBySkill = new Map<string, string>();
    for (const b of target) {
      assert.match(b.prompt_cache_key ?? '', /^skillopt-target-[0-9a-f]{32}$/);
      const system = b.messages[0].content;
      const known = keyBySkill.get(system);
      if (known) assert.equal(b.prompt_cache_key, known, 'one key per skill version');
      keyBySkill.set(system, b.prompt_cache_key!);
    }
    assert.ok(keyBySkill.size > 1, 'several skill versions were evaluated');
    assert.equal(new Set(keyBySkill.values()).size, keyBySkill.size, 'each skill version has its own key');
    const analysts = bodies.filter(
      (b) =>
        b.model === scriptedOptimizerModel &&
        stageOf(b.messages.map((m, i) => ({ role: i ? 'user' : 'system', content: m.content }))) ===
          'analyst',
    );
    assert.ok(analysts.length > 0);
    for (const b of analysts) assert.match(b.prompt_cache_key ?? '', /^skillopt-optimizer-/);

    const ledger = read(dir.path, 'ledger.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerRow);
    const cached = ledger.reduce((n, r) => n + (r.cached_tokens ?? 0), 0);
    const prompt = ledger.reduce((n, r) => n + (r.prompt_tokens ?? 0), 0);
    assert.ok(cached > 0, 'the ledger has cached tokens');
    const summary = readJson<{ prompt_cache: PromptCacheSummary }>(dir.path, 'summary.json');
    assert.equal(summary.prompt_cache.cached_tokens, cached);
    assert.equal(summary.prompt_cache.input_tokens, prompt);
    assert.equal(summary.prompt_cache.cache_share, cached / prompt);
    // Local models have no price: the saving is unknown, never $0.
    assert.equal(summary.prompt_cache.saved_dollars, null);
    assert.match(
      read(dir.path, 'report.md'),
      /Prompt cache: \d+\.\d% of [\d,]+ input tokens read from the prompt cache, saving unknown/,
    );
  });
});
