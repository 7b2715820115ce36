import assert from 'node:assert/strict';
import { Accounting } from '../../../src/engine/llm/accounting';
import { promptCacheSummary, spendLine } from '../../../src/engine/llm/spendText';
import type { RunReport } from '../../../src/engine/train/report';
import { renderReport } from '../../../src/engine/train/reportMarkdown';

const HAIKU = { stage: 'rollout', role: 'target' as const, provider: 'anthropic', model: 'claude-haiku-4-5' };

function run(): Accounting {
  const a = new Accounting();
  // 10k input: 6k read from the cache, 2k written; 1k output.
  a.recordCall(HAIKU, {
    promptTokens: 10_000,
    completionTokens: 1_000,
    cachedTokens: 6_000,
    cacheWriteTokens: 2_000,
    seconds: 1,
    attempts: 1,
  });
  return a;
}

describe('spend text: the prompt cache share and saving', () => {
  it('summarises the share and the saving against uncached list prices', () => {
    const s = promptCacheSummary(run().totals());
    assert.equal(s.input_tokens, 10_000);
    assert.equal(s.cached_tokens, 6_000);
    assert.equal(s.cache_write_tokens, 2_000);
    assert.equal(s.cache_share, 0.6);
    // Reads save 0.9 x $1/M, writes cost 0.25 x $1/M more.
    assert.ok(Math.abs(s.saved_dollars! - (6_000 * 0.9 - 2_000 * 0.25) / 1e6) < 1e-12);
  });

  it('prints one end-of-run line with dollars, the cache share and the saving', () => {
    const line = spendLine(run().totals());
    // 2k plain at $1, 6k read at $0.10, 2k written at $1.25, 1k out at $5 per M.
    assert.equal(
      line,
      'Spend: 1 call, 10,000 prompt + 1,000 completion tokens, $0.0101 at list prices. ' +
        'Prompt cache: 60.0% of 10,000 input tokens read from the prompt cache (2,000 written), saved $0.0049 against uncached list prices.',
    );
  });

  it('says the saving is unknown, not $0, when a model has no cache price', () => {
    const a = new Accounting({ prices: { mine: { input_per_mtok: 1, output_per_mtok: 1 } } });
    a.recordCall(
      { ...HAIKU, provider: 'openai_compatible', model: 'mine' },
      { promptTokens: 100, completionTokens: 10, cachedTokens: 50, seconds: 0, attempts: 1 },
    );
    const line = spendLine(a.totals());
    assert.match(line, /unknown price for mine/);
    assert.match(line, /50\.0% of 100 input tokens .* saving unknown/);
  });

  it('shows the prompt cache in report.md under the spend table', () => {
    const report: RunReport = {
      ...baseReport(),
      spend_by_role: {
        target: {
          calls: 1,
          prompt_tokens: 10_000,
          completion_tokens: 1_000,
          dollars: 0.0101,
          cache_hits: 0,
          cached_tokens: 6_000,
        },
      },
      prompt_cache: promptCacheSummary(run().totals()),
      kept_lines: [],
    };
    const md = renderReport(report, '/tmp/run', false);
    assert.ok(md.includes('| target | 1 | 10000 | 6000 | 1000 | 0 | $0.0101 |'), md);
    assert.ok(md.includes('Prompt cache: 60.0% of 10,000 input tokens read from the prompt cache'), md);
  });

  it('report.md of a simulated run says so in the spend table, not "unknown price" and "0.0%, saved $0"', () => {
    const md = renderReport(
      {
        ...baseReport(),
        spend_by_role: {
          target: { calls: 3, prompt_tokens: 300, completion_tokens: 30, dollars: null, cache_hits: 0 },
        },
        prompt_cache: promptCacheSummary(new Accounting().totals()),
      },
      '/tmp/run',
      true,
    );
    assert.ok(md.includes('| target | 3 | 300 | 0 | 30 | 0 | none (simulated) |'), md);
    assert.match(
      md,
      /^Prompt cache: none \(simulated models have no price and no provider prompt cache\)\.$/m,
    );
    assert.doesNotMatch(md, /unknown price|saved \$0/);
  });

  it('says a simulated run has no price and no provider cache, instead of 0% and $0', () => {
    const a = new Accounting();
    a.recordCall(
      { role: 'target', model: 'sim-target', provider: 'sim', stage: 'rollout' },
      {
        promptTokens: 100,
        completionTokens: 10,
        seconds: 0,
        attempts: 1,
      },
    );
    assert.equal(
      spendLine(a.totals(), true),
      'Spend: 1 call, 100 prompt + 10 completion tokens, simulated models (no price, no provider prompt cache).',
    );
  });
});

describe('spend text: a run where only some roles are simulated', () => {
  it('shows what the real role paid, not "simulated models (no price)"', () => {
    const a = run();
    a.recordCall(
      { role: 'optimizer', model: 'sim-optimizer', provider: 'sim', stage: 'reflect' },
      { promptTokens: 500, completionTokens: 50, seconds: 0, attempts: 1 },
    );
    const t = a.totals();
    assert.ok(t.dollars !== null && t.dollars > 0, 'the sim calls left the price unknown');
    const line = spendLine(t, true);
    assert.match(
      line,
      /^Spend: 2 calls, 10,500 prompt \+ 1,050 completion tokens, \$0\.\d{4} at list prices \(the simulated roles cost nothing\)\. Prompt cache: /,
    );
    assert.doesNotMatch(line, /no price/);
  });

  it('counts failed calls beside the answered ones (their billed tokens are in the totals)', () => {
    const a = run();
    a.recordFailure(HAIKU, { promptTokens: 400, completionTokens: 100, seconds: 1, attempts: 1 });
    assert.match(
      spendLine(a.totals()),
      /^Spend: 1 call \(1 more failed\), 10,400 prompt \+ 1,100 completion tokens/,
    );
  });

  it('says how many replies came from the response cache, free, beside the paid calls', () => {
    const a = run();
    assert.doesNotMatch(spendLine(a.totals()), /response cache/);
    a.recordCacheHit(HAIKU);
    a.recordCacheHit(HAIKU);
    assert.match(
      spendLine(a.totals()),
      /^Spend: 1 call \(2 more answered from the response cache, free\), 10,000 prompt \+ 1,000 completion tokens, \$0\.0101 at list prices\./,
    );
  });

  it('says the totals are a lower bound when requests were cut off before their reply, and in report.md per role', () => {
    const a = run();
    assert.doesNotMatch(spendLine(a.totals()), /lower bound/);
    a.recordCutOff(HAIKU);
    a.recordCutOff({ ...HAIKU, stage: 'analyst', role: 'optimizer' });
    assert.equal(a.totals().cutOff, 2);
    assert.match(
      spendLine(a.totals()),
      /^Spend: 1 call, 10,000 prompt \+ 1,000 completion tokens, \$0\.0101 at list prices, a lower bound: 2 requests were cut off before their reply \(a stop, limits\.request_timeout_s or an agent target's env\.exec_timeout\), their tokens unknown, and the provider may bill them\. Prompt cache: /,
    );
    const report: RunReport = {
      ...baseReport(),
      spend_by_role: {
        target: { calls: 1, prompt_tokens: 1, completion_tokens: 1, dollars: 0, cache_hits: 0, cut_off: 1 },
        optimizer: { calls: 1, prompt_tokens: 1, completion_tokens: 1, dollars: 0, cache_hits: 0 },
      },
    };
    assert.match(
      renderReport(report, '/tmp/run', false),
      /Requests cut off before their reply \(a stop, limits\.request_timeout_s or an agent target's env\.exec_timeout\), their tokens unknown, and the provider may bill them, so the spend is a lower bound: target 1, optimizer 0\./,
    );
  });
});

function baseReport(): RunReport {
  return {
    scores: {
      selection: { initial: 0.5, best: 0.6, final: 0.6 },
      test: { initial: null, best: null, final: null },
    },
    edits: { proposed: 0, merged: 0, applied: 0, kept: 0, acceptance_rate: null },
    steps: { total: 0, accepted: 0, rejected: 0, inconclusive: 0, skipped: 0, human_decisions: 0 },
    gate_tests: [],
    skill_length: [],
    edit_budget: [],
    persistent_failures: [],
    reliability: { errored_items: 0, errored_by_kind: {}, fallbacks: 0 },
    spend_by_role: {},
    kept_lines: [],
  };
}
