import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import type { AccountingSummary, UsageKey } from '../../../src/engine/llm/accounting';
import { Accounting } from '../../../src/engine/llm/accounting';
import { stageTokens, tokenSummary } from '../../../src/engine/llm/tokenSummary';
import { BudgetGuard } from '../../../src/engine/llm/budget';
import { PriceTable, type ModelPrice } from '../../../src/engine/llm/prices';

const ROLLOUT_4O: UsageKey = { stage: 'rollout', role: 'target', provider: 'openai', model: 'gpt-4o' };
const ANALYST_SONNET: UsageKey = {
  stage: 'analyst',
  role: 'optimizer',
  provider: 'anthropic',
  model: 'claude-sonnet-4-20250514',
};
const ROLLOUT_LOCAL: UsageKey = {
  stage: 'rollout',
  role: 'target',
  provider: 'openai_compatible',
  model: 'llama3.1:8b',
};

function call(a: Accounting, key: UsageKey, p: number, c: number, attempts = 1, seconds = 1): void {
  a.recordCall(key, { promptTokens: p, completionTokens: c, seconds, attempts });
}

function close(actual: number | null, expected: number): void {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);
}

/** The list rates of a price, without the cache rates. */
function listRates(
  p: ModelPrice | undefined,
): Pick<ModelPrice, 'input_per_mtok' | 'output_per_mtok'> | undefined {
  return p && { input_per_mtok: p.input_per_mtok, output_per_mtok: p.output_per_mtok };
}

describe('llm/prices', () => {
  const table = new PriceTable({
    'llama3.1:8b': { input_per_mtok: 0, output_per_mtok: 0 },
    'gpt-4o': { input_per_mtok: 1, output_per_mtok: 2 },
  });

  it('looks up by exact name, then by a known name plus a snapshot suffix', () => {
    const builtin = new PriceTable();
    assert.deepEqual(listRates(builtin.lookup('gpt-4o-mini', 'openai')), {
      input_per_mtok: 0.15,
      output_per_mtok: 0.6,
    });
    assert.deepEqual(listRates(builtin.lookup('gpt-4o-mini-2024-07-18', 'openai')), {
      input_per_mtok: 0.15,
      output_per_mtok: 0.6,
    });
    assert.deepEqual(listRates(builtin.lookup('GPT-4o-2024-08-06', 'azure_openai')), {
      input_per_mtok: 2.5,
      output_per_mtok: 10,
    });
    assert.deepEqual(listRates(builtin.lookup('claude-opus-4-1-20250805', 'anthropic')), {
      input_per_mtok: 15,
      output_per_mtok: 75,
    });
    assert.deepEqual(listRates(builtin.lookup('claude-sonnet-4-5-20250929', 'anthropic')), {
      input_per_mtok: 3,
      output_per_mtok: 15,
    });
    assert.deepEqual(listRates(builtin.lookup('claude-3-5-haiku-latest', 'anthropic')), {
      input_per_mtok: 0.8,
      output_per_mtok: 4,
    });
  });

  it('knows the cache rates: OpenAI per model, Anthropic reads 0.1x and 5-minute writes 1.25x input', () => {
    const builtin = new PriceTable();
    const mini = builtin.lookup('gpt-4.1-mini', 'openai')!;
    assert.equal(mini.cached_input_per_mtok, 0.1);
    assert.equal(mini.cache_write_per_mtok, 0.4, 'OpenAI charges nothing extra to write its cache');
    const sonnet = builtin.lookup('claude-sonnet-4-5', 'anthropic')!;
    close(sonnet.cached_input_per_mtok ?? null, 0.3);
    close(sonnet.cache_write_per_mtok ?? null, 3.75);
    // 1M prompt tokens: 200k plain, 500k read, 300k written; 100k output.
    close(
      builtin.cost('claude-sonnet-4-5', 'anthropic', 1_000_000, 100_000, {
        cachedTokens: 500_000,
        cacheWriteTokens: 300_000,
      }),
      0.2 * 3 + 0.5 * 0.3 + 0.3 * 3.75 + 0.1 * 15,
    );
    close(
      builtin.cacheSavings('claude-sonnet-4-5', 'anthropic', 1_000_000, {
        cachedTokens: 500_000,
        cacheWriteTokens: 300_000,
      }),
      0.5 * 2.7 - 0.3 * 0.75,
    );
  });

  it('prices cached tokens as unknown, never $0, when the cache rate is not known', () => {
    const user = new PriceTable({ 'my-model': { input_per_mtok: 1, output_per_mtok: 2 } });
    close(user.cost('my-model', 'openai_compatible', 1000, 0), 0.001);
    assert.equal(user.cost('my-model', 'openai_compatible', 1000, 0, { cachedTokens: 500 }), null);
    assert.equal(user.cost('my-model', 'openai_compatible', 1000, 0, { cacheWriteTokens: 500 }), null);
    assert.equal(user.cacheSavings('my-model', 'openai_compatible', 1000, { cachedTokens: 500 }), null);
    const withRates = new PriceTable({
      'my-model': { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.5 },
    });
    close(withRates.cost('my-model', 'openai_compatible', 1000, 0, { cachedTokens: 500 }), 0.00075);
  });

  it('prices the offline sim backend at exactly nothing, whatever its model is called', () => {
    const builtin = new PriceTable();
    assert.equal(builtin.cost('sim-target', 'sim', 1000, 1000), 0);
    assert.equal(builtin.cost('gpt-4o', 'sim', 1000, 1000, { cachedTokens: 500, cacheWriteTokens: 10 }), 0);
  });

  it('leaves unknown family members, other providers and local models unpriced', () => {
    const builtin = new PriceTable();
    for (const [model, provider] of [
      ['gpt-5.5', 'azure_openai'],
      ['gpt-4o-custom-finetune', 'openai'],
      ['claude-opus-4-7', 'anthropic'],
      ['gpt-4o', 'openai_compatible'],
      ['gpt-4o', 'anthropic'],
      ['gpt-4o', undefined],
    ] as Array<[string, string | undefined]>) {
      assert.equal(builtin.lookup(model, provider), undefined, `${model} @ ${provider}`);
      assert.equal(builtin.cost(model, provider, 1000, 1000), null);
    }
  });

  it('lets the config add and override prices for any provider', () => {
    assert.deepEqual(table.lookup('gpt-4o', 'openai'), { input_per_mtok: 1, output_per_mtok: 2 });
    assert.deepEqual(table.lookup('gpt-4o-2024-11-20', 'openai'), { input_per_mtok: 1, output_per_mtok: 2 });
    assert.equal(table.cost('llama3.1:8b', 'openai_compatible', 5000, 5000), 0);
    close(table.cost('gpt-4o-mini', 'openai', 1_000_000, 1_000_000), 0.75);
  });
});

describe('llm/accounting', () => {
  it('records calls, hits, retries, failures and dollars per (stage, role, provider, model)', () => {
    const a = new Accounting();
    call(a, ROLLOUT_4O, 1000, 500, 1, 1.5);
    call(a, ROLLOUT_4O, 3000, 500, 3, 2.5);
    a.recordCacheHit(ROLLOUT_4O);
    a.recordFailure(ROLLOUT_4O, { seconds: 4, attempts: 5 });
    call(a, ANALYST_SONNET, 10_000, 2_000);
    const snap = a.snapshot();
    assert.equal(snap.entries.length, 2);
    const [rollout, analyst] = snap.entries;
    assert.deepEqual(
      { ...rollout, dollars: null },
      {
        ...ROLLOUT_4O,
        calls: 2,
        promptTokens: 4000,
        completionTokens: 1000,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        seconds: 8,
        cacheHits: 1,
        retries: 6,
        failures: 1,
        cutOff: 0,
        reportedDollars: 0,
        dollars: null,
        cacheSavedDollars: 0,
      },
    );
    close(rollout.dollars, (4000 * 2.5 + 1000 * 10) / 1e6);
    close(analyst.dollars, (10_000 * 3 + 2_000 * 15) / 1e6);
    const t = snap.totals;
    assert.equal(t.calls, 3);
    assert.equal(t.promptTokens, 14_000);
    assert.equal(t.completionTokens, 3_000);
    assert.equal(t.cacheHits, 1);
    assert.equal(t.retries, 6);
    assert.equal(t.failures, 1);
    close(t.dollars, 0.02 + 0.06);
    close(t.knownDollars, 0.08);
    assert.deepEqual(t.unpricedModels, []);
  });

  it('reports unknown dollars as null, never 0, and keeps the priced part as a lower bound', () => {
    const a = new Accounting();
    call(a, ROLLOUT_4O, 1_000_000, 0);
    call(a, ROLLOUT_LOCAL, 500, 50);
    a.recordCacheHit({ ...ROLLOUT_LOCAL, model: 'mystery' });
    const snap = a.snapshot();
    assert.equal(snap.entries.find((e) => e.model === 'llama3.1:8b')!.dollars, null);
    assert.equal(snap.totals.dollars, null);
    close(snap.totals.knownDollars, 2.5);
    assert.deepEqual(
      snap.totals.unpricedModels,
      ['llama3.1:8b'],
      'a model with only cache hits cost nothing',
    );
    const priced = new Accounting({ prices: { 'llama3.1:8b': { input_per_mtok: 0, output_per_mtok: 0 } } });
    call(priced, ROLLOUT_LOCAL, 500, 50);
    assert.equal(priced.totals().dollars, 0);
  });

  it('counts fallbacks per stage and keeps the recent reasons', () => {
    const a = new Accounting();
    a.recordFallback('merge', 'reply was not JSON');
    a.recordFallback('merge', 'missing edits');
    a.recordFallback('ranking', 'bad indices');
    assert.deepEqual(a.snapshot().fallbacks, { merge: 2, ranking: 1 });
    assert.equal(a.totals().fallbacks, 3);
    assert.deepEqual(a.recentFallbacks()[1], { stage: 'merge', reason: 'missing edits' });
  });

  it('gives per-step deltas and the history.json / summary.json token shapes', () => {
    const a = new Accounting();
    call(a, ROLLOUT_4O, 100, 10);
    a.recordFallback('merge', 'x');
    const before = a.snapshot();
    call(a, ROLLOUT_4O, 200, 20, 2);
    call(a, ANALYST_SONNET, 1000, 100);
    call(
      a,
      { ...ANALYST_SONNET, role: 'target', stage: 'analyst', model: 'gpt-4o', provider: 'openai' },
      1,
      1,
    );
    a.recordCacheHit({ ...ROLLOUT_4O, stage: 'selection' });
    a.recordFallback('ranking', 'y');
    const d = a.delta(before);
    assert.deepEqual(
      d.entries.map((e) => [
        e.stage,
        e.model,
        e.calls,
        e.promptTokens,
        e.completionTokens,
        e.retries,
        e.cacheHits,
      ]),
      [
        ['rollout', 'gpt-4o', 1, 200, 20, 1, 0],
        ['analyst', 'claude-sonnet-4-20250514', 1, 1000, 100, 0, 0],
        ['analyst', 'gpt-4o', 1, 1, 1, 0, 0],
        ['selection', 'gpt-4o', 0, 0, 0, 0, 1],
      ],
    );
    close(d.entries[0].dollars, (200 * 2.5 + 20 * 10) / 1e6);
    assert.deepEqual(d.fallbacks, { ranking: 1 });
    assert.deepEqual(stageTokens(d), {
      rollout: { calls: 1, prompt_tokens: 200, completion_tokens: 20 },
      analyst: { calls: 2, prompt_tokens: 1001, completion_tokens: 101 },
    });
    assert.deepEqual(tokenSummary(a.snapshot()), {
      rollout: { calls: 2, prompt_tokens: 300, completion_tokens: 30, total_tokens: 330 },
      analyst: { calls: 2, prompt_tokens: 1001, completion_tokens: 101, total_tokens: 1102 },
      _total: { calls: 4, prompt_tokens: 1301, completion_tokens: 131, total_tokens: 1432 },
    });
  });

  it('tells listeners of every change (totals() has the figures) and survives a throwing one', () => {
    const errors: string[] = [];
    const a = new Accounting({ logger: { log: (_l, _c, m) => errors.push(m) } });
    const seen: Array<[number, number]> = [];
    const stop = a.onChange(() => {
      const t = a.totals();
      seen.push([t.calls, t.cacheHits]);
    });
    a.onChange(() => {
      throw new Error('listener bug');
    });
    call(a, ROLLOUT_4O, 1, 1);
    a.recordCacheHit(ROLLOUT_4O);
    stop();
    call(a, ROLLOUT_4O, 1, 1);
    assert.deepEqual(seen, [
      [1, 0],
      [1, 1],
    ]);
    assert.equal(errors.length, 3);
    assert.match(errors[0], /listener bug/);
  });

  it('merges earlier usage so a resumed run continues its totals', () => {
    const earlier = new Accounting();
    call(earlier, ROLLOUT_4O, 100, 10);
    earlier.recordFallback('merge', 'x');
    const now = new Accounting();
    call(now, ROLLOUT_4O, 1, 1);
    now.merge(earlier.snapshot());
    const t: AccountingSummary = now.totals();
    assert.equal(t.calls, 2);
    assert.equal(t.promptTokens, 101);
    assert.equal(t.fallbacks, 1);
  });
});

describe('llm/budget', () => {
  it('stops on the token cap with a clear reason', () => {
    const a = new Accounting();
    const guard = new BudgetGuard({ maxTokens: 200_000 }, a);
    call(a, ROLLOUT_4O, 150_000, 40_000);
    assert.equal(guard.check(), null);
    call(a, ROLLOUT_4O, 10_000, 3_114);
    assert.equal(guard.check(), 'token budget of 200000 reached (203114 used)');
    assert.throws(
      () => guard.assertWithinBudget(),
      (err: unknown) =>
        SkillOptError.is(err, 'budget') &&
        err.message ===
          'limits: token budget of 200000 reached (203114 used). Fix: raise the cap under `limits:` (max_tokens, max_dollars, max_wall_time_s) and resume the run',
    );
  });

  it('stops on the dollar cap when prices are known', () => {
    const a = new Accounting();
    const guard = new BudgetGuard({ maxDollars: 5 }, a);
    call(a, ROLLOUT_4O, 1_000_000, 200_000); // $2.50 + $2.00
    assert.equal(guard.check(), null);
    call(a, ROLLOUT_4O, 100_000, 10_000); // + $0.35
    assert.equal(guard.check(), null);
    call(a, ROLLOUT_4O, 100_000, 50_000); // + $0.75
    assert.equal(guard.check(), 'dollar budget of $5.00 reached ($5.60 spent)');
    assert.deepEqual(guard.warnings, []);
  });

  it('warns once that an unpriced model makes the dollar cap unverifiable, and does not stop on it', () => {
    const a = new Accounting();
    const warned: string[] = [];
    const guard = new BudgetGuard({ maxDollars: 1 }, a, Date.now, { onWarning: (m) => warned.push(m) });
    call(a, ROLLOUT_LOCAL, 5_000_000, 5_000_000);
    call(a, { ...ROLLOUT_LOCAL, model: 'qwen3:4b' }, 1, 1);
    assert.equal(guard.check(), null);
    assert.equal(guard.check(), null);
    assert.deepEqual(warned, [
      'the dollar budget of $1.00 cannot be verified: no price is known for llama3.1:8b, qwen3:4b. ' +
        'Add them under `prices:` in the config ({model: {input_per_mtok, output_per_mtok}}) to enforce it',
    ]);
    assert.deepEqual(guard.warnings, warned);
    // Priced spend alone over the cap still stops the run.
    call(a, ROLLOUT_4O, 400_000, 10_000);
    assert.equal(guard.check(), 'dollar budget of $1.00 reached ($1.10 spent)');
  });

  it('stops on the wall-time cap using the injected clock', () => {
    let now = 1_000_000;
    const guard = new BudgetGuard(
      { maxWallSeconds: 3600, maxTokens: 0, maxDollars: 0 },
      new Accounting(),
      () => now,
    );
    now += 3_599_000;
    assert.equal(guard.check(), null);
    now += 13_500;
    assert.equal(guard.check(), 'wall-time budget of 3600 s reached (3612 s elapsed)');
  });
});
