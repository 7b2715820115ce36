import assert from 'node:assert/strict';
import { runTriggers } from '../../../src/engine/activation/evaluate';
import { triggerScore } from '../../../src/engine/activation/rate';
import { defaultConfig } from '../../../src/engine/config/schema';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';
import { LOAD_SKILL_TOOL } from '../../../src/engine/prompts/activation';
import { listedDescription } from '../../support/loopback/agentModel';
import { anthropicPromptText, startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { LoopbackServer, RecordedRequest, Reply } from '../../support/loopback/core';
import { openAiPromptText, startOpenAiServer } from '../../support/loopback/openaiServer';
import { responsesPromptText, startResponsesServer } from '../../support/loopback/responsesServer';

/**
 * Chat targets see the host's skill listing and a function that opens a skill; the real OpenAI
 * and Anthropic SDKs carry it to loopback servers whose model calls the function when the listed
 * description shares a word with the request.
 */
const QUERIES = [
  { id: 'a', query: 'What is the capital of Peru?', shouldTrigger: true },
  { id: 'b', query: 'Name the capital of Kenya.', shouldTrigger: true },
  { id: 'c', query: 'Write a haiku about autumn.', shouldTrigger: false },
];
const SKILL = '---\nname: capitals\ndescription: Answers about capital cities.\n---\n\nRULE-7\n';

function listingModel(text: (req: RecordedRequest) => string) {
  return (req: RecordedRequest): Reply => {
    const prompt = text(req);
    const description = listedDescription(prompt, 'capitals') ?? '';
    const query = QUERIES.find((q) => prompt.includes(q.query))?.query ?? '';
    const words = (s: string): string[] => s.toLowerCase().match(/[a-z]{6,}/g) ?? [];
    const hit = words(query).some((w) => words(description).includes(w));
    return hit
      ? { kind: 'reply', toolCalls: [{ name: LOAD_SKILL_TOOL, input: { name: 'capitals' } }] }
      : { kind: 'reply', text: 'A haiku, directly.' };
  };
}

for (const wire of ['openai', 'responses', 'anthropic'] as const) {
  describe(`activation: a ${wire} chat target decides from the skill listing (real SDK, loopback)`, () => {
    let server: LoopbackServer;
    before(async () => {
      server =
        wire === 'openai'
          ? await startOpenAiServer(listingModel(openAiPromptText))
          : wire === 'responses'
            ? await startResponsesServer(listingModel(responsesPromptText))
            : await startAnthropicServer(listingModel(anthropicPromptText));
    });
    after(() => server.close());

    it('sends the listing and the load function, and counts a call of it as a load', async () => {
      const cfg = defaultConfig();
      Object.assign(cfg.model, {
        optimizer_backend: 'sim',
        target_backend: wire === 'anthropic' ? 'anthropic' : 'openai',
        ...(wire === 'responses' ? { openai_api: 'responses' } : {}),
        target: 'loopback-model',
        target_base_url: server.url,
      });
      cfg.cache.enabled = false;
      cfg.limits.max_retries = 0;
      const models = buildModels(cfg, {
        tasks: [],
        testItems: [],
        logger: silentLogger,
        env: { OPENAI_API_KEY: 'fake-openai-key', ANTHROPIC_API_KEY: 'fake-anthropic-key' },
      });
      const runs = await runTriggers(SKILL, QUERIES, {
        target: models.target,
        mode: 'chat',
        repeats: 2,
        hostBudgetChars: 15000,
        signal: new AbortController().signal,
      });
      const score = triggerScore(QUERIES, runs);
      assert.equal(score.runs, 6);
      assert.equal(score.recall, 1);
      assert.equal(score.falseTriggerRate, 0);
      assert.equal(score.rate, 1);
      const body = server.requests[0].body as { tools?: Array<Record<string, unknown>> };
      const tool =
        wire === 'openai' ? (body.tools?.[0]?.function as Record<string, unknown>) : body.tools?.[0];
      assert.equal(tool?.name, LOAD_SKILL_TOOL);
      assert.ok(
        wire === 'anthropic' ? tool?.input_schema : tool?.parameters,
        'the arguments schema goes with it',
      );
      assert.match(JSON.stringify(server.requests[0].body), /<available_skills>/);
    });
  });
}
