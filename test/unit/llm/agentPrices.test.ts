import assert from 'node:assert/strict';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AgentRunError } from '../../../src/engine/llm/agents/errors';
import { parseClaude } from '../../../src/engine/llm/agents/transcript';
import { CommandBackend, type AgentName, type AgentSettings } from '../../../src/engine/llm/command';
import { cliPricedProvider, PriceTable } from '../../../src/engine/llm/prices';
import type { ChatRequest } from '../../../src/engine/llm/types';
import { queuedClient } from './queuedBackend';

/**
 * An agent target's calls are priced by the provider its CLI talks to, or at the cost the CLI
 * reports when it knows the list price of every model it used; the config's `prices:` wins.
 * (test/unit/agents/realCliDollarCap.test.ts runs the real CLIs under a dollar cap.)
 */
const jsonl = (...events: unknown[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
const REQ: ChatRequest = { role: 'target', stage: 'rollout', messages: [{ role: 'user', content: 'Q?' }] };

describe('llm/agents: what an agent run costs', () => {
  it('each preset is priced under the API its CLI talks to; a custom command is unknown', () => {
    const billed = (agent: AgentName | undefined, settings: AgentSettings = {}, env = {}): string =>
      new CommandBackend({
        ...(agent ? { agent } : { command: 'my-agent {prompt}' }),
        trusted: true,
        settings,
        parentEnv: env,
      }).billedProvider;
    assert.equal(billed('claude'), 'anthropic');
    assert.equal(billed('claude', { baseUrl: 'http://127.0.0.1:9/' }), 'anthropic');
    assert.equal(billed('codex'), 'openai');
    assert.equal(billed('codex', { baseUrl: 'https://api.openai.com/v1/' }), 'openai');
    assert.equal(billed('codex', { baseUrl: 'http://127.0.0.1:9/v1' }), 'openai_compatible');
    assert.equal(billed('codex', {}, { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }), 'openai_compatible');
    // Through GitHub a Copilot plan pays per premium request: no token price.
    assert.equal(billed('copilot'), 'github_copilot');
    assert.equal(billed('copilot', { baseUrl: 'https://api.openai.com/v1' }), 'openai');
    assert.equal(billed('copilot', { baseUrl: 'http://127.0.0.1:9/v1' }), 'openai_compatible');
    assert.equal(
      billed('copilot', {}, { COPILOT_PROVIDER_BASE_URL: 'https://x', COPILOT_PROVIDER_TYPE: 'anthropic' }),
      'anthropic',
    );
    assert.equal(billed('copilot', { baseUrl: 'https://x', providerType: 'azure' }), 'azure_openai');
    assert.equal(billed(undefined), 'command');

    const table = new PriceTable();
    assert.equal(table.cost('claude-sonnet-4-5', 'command', 1e6, 0), null);
    assert.equal(table.cost('claude-sonnet-4-5', 'anthropic', 1e6, 0), 3);
    assert.equal(table.cost('gpt-5', 'openai', 1e6, 0), 1.25);
    assert.equal(table.cost('gpt-5', 'github_copilot', 1e6, 0), null);
  });

  it("Claude Code's own cost counts only when it knows the list price of every model it used", () => {
    const result = (modelUsage: Record<string, unknown>): string =>
      jsonl({
        type: 'result',
        subtype: 'success',
        result: 'ok',
        total_cost_usd: 0.5,
        usage: { input_tokens: 10, output_tokens: 1 },
        modelUsage,
      });
    const list = { costUSD: 0.4, costBasis: 'list' };
    assert.equal(parseClaude(result({ 'claude-sonnet-4-5': list }), 's').costAtListPrices, true);
    assert.equal(
      parseClaude(
        result({ 'claude-sonnet-4-5': list, 'my-model': { costUSD: 0.1, costBasis: 'unknown' } }),
        's',
      ).costAtListPrices,
      false,
    );
    // A CLI that says nothing of its basis: its figure is not trusted.
    assert.equal(parseClaude(result({}), 's').costAtListPrices, false);
  });

  it('the reported cost is kept in a row of its own; failed attempts before it, and the config price, use the table', async () => {
    const run = async (prices: PriceTable): Promise<Accounting> => {
      const accounting = new Accounting({ prices });
      const { client, outcomes } = queuedClient(accounting, {
        billedProvider: 'anthropic',
        model: 'claude-sonnet-4-5',
      });
      outcomes.push(
        new AgentRunError('crash', 'killed', {
          transient: true,
          spent: { promptTokens: 1e6, completionTokens: 0 },
        }),
        { text: 'ok', usage: { promptTokens: 2e6, completionTokens: 0, costUsd: 0.25 } },
      );
      await client.chat(REQ);
      return accounting;
    };
    const a = await run(new PriceTable());
    const rows = a.snapshot().entries.map((e) => [e.provider, e.calls, e.promptTokens, e.dollars]);
    assert.deepEqual(rows, [
      // The crashed attempt's million tokens at Claude Sonnet 4.5's $3.
      ['anthropic', 0, 1e6, 3],
      // The answered run at the CLI's own figure, not 2M × $3.
      [cliPricedProvider('anthropic'), 1, 2e6, 0.25],
    ]);
    assert.equal(a.totals().dollars, 3.25);
    // A price in the config wins over the CLI's figure.
    const own = await run(new PriceTable({ 'claude-sonnet-4-5': { input_per_mtok: 1, output_per_mtok: 1 } }));
    assert.equal(own.totals().dollars, 3);
  });
});
