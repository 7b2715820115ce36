import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { leastCalls } from '../../src/engine/callEstimate';
import { cacheableCalls, lowEndCacheTokens } from '../../src/engine/costCache';
import { describeCost, describeCostLines, estimateCost } from '../../src/engine/costEstimate';
import { PRESETS } from '../../src/engine/llm/agents/presets';
import { PriceTable } from '../../src/engine/llm/prices';
import { prepareRun } from '../../src/engine/run';
import { agentCliBin } from '../support/agentClis';
import { exampleConfig, tempDir } from './train/helpers';

/** A price before the run: a dollar range from the call estimate and the price table. */
describe('cost estimate before a run', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-cost-');
  });
  afterEach(() => dir.cleanup());

  const prepare = (overrides: string[]): ReturnType<typeof prepareRun> =>
    prepareRun({
      configPath: exampleConfig,
      outDir: dir.path,
      dryRun: true,
      overrides: ['model.optimizer_backend=openai', 'model.target_backend=openai', ...overrides],
      models: { keys: { openai: 'sk-test-not-a-real-key', anthropic: 'sk-ant-test-not-a-real-key' } },
    });

  /** A skill long enough for any provider to cache (about 3,000 tokens). */
  const longSkill = (): string => {
    const path = join(dir.path, 'LONG_SKILL.md');
    const rules = Array.from(
      { length: 150 },
      (_, i) => `- Rule ${i + 1}: answer in the house style, briefly.`,
    );
    writeFileSync(path, `# House style\n\n${rules.join('\n')}\n`);
    return `env.skill_init=${path}`;
  };
  const anthropic = (model: string): string[] => [
    'model.optimizer_backend=anthropic',
    'model.target_backend=anthropic',
    `model.optimizer=${model}`,
    `model.target=${model}`,
  ];

  it('gives a dollar range that grows with the models’ prices and the number of epochs', () => {
    const cheap = estimateCost(prepare(['model.optimizer=gpt-4o-mini', 'model.target=gpt-4o-mini']));
    const dear = estimateCost(prepare(['model.optimizer=gpt-4o', 'model.target=gpt-4o']));
    assert.ok(cheap.low !== null && cheap.high !== null && dear.low !== null && dear.high !== null);
    assert.ok(cheap.low > 0 && cheap.low < cheap.high, `${cheap.low} – ${cheap.high}`);
    // gpt-4o costs 16.7× gpt-4o-mini per token, both ways.
    assert.ok(Math.abs(dear.low / cheap.low - 2.5 / 0.15) < 0.01);
    const longer = estimateCost(
      prepare(['model.optimizer=gpt-4o', 'model.target=gpt-4o', 'train.num_epochs=4']),
    );
    assert.ok(longer.high! > dear.high!);
    assert.match(describeCost(dear), /^Estimated cost: \$\d+\.\d\d – \$\d+\.\d\d at list prices/);
  });

  it('prices analysts reading short trajectories at the low end, trajectories as long as the run keeps at the high end', () => {
    const run = prepare(['model.optimizer=gpt-4o', 'model.target=gpt-4o', 'model.prompt_caching=false']);
    const kept = estimateCost(run);
    // Trajectories kept twice as long: analyst prompts at the high end grow, the low end stays.
    run.settings.trajectoryChars *= 2;
    const longer = estimateCost(run);
    assert.equal(longer.low, kept.low);
    assert.ok(longer.high! > kept.high!, `${longer.high} against ${kept.high}`);
  });

  it('leaves the calls a step makes only when it must out of the low end: merges, ranking, consolidation', () => {
    const models = ['model.optimizer=gpt-4o', 'model.target=gpt-4o', 'model.prompt_caching=false'];
    // Smaller merge groups mean more merge calls at most (3 analysts: 2 groups + the final merge).
    const wide = prepare(models);
    const narrow = prepare([...models, 'gradient.merge_batch_size=2']);
    assert.ok(narrow.estimate.perStep.merge > wide.estimate.perStep.merge);
    const [w, n] = [estimateCost(wide), estimateCost(narrow)];
    assert.ok(n.high! > w.high!, `${n.high} against ${w.high}`);
    // A group of one patch is not merged, edits within the budget are not ranked: the low end
    // pays neither, whatever the most they could be.
    assert.equal(n.low, w.low);
    const consolidating = estimateCost(
      prepare([
        ...models,
        'optimizer.use_skill_aware_reflection=true',
        'optimizer.skill_aware_consolidate_threshold=5',
      ]),
    );
    const aware = estimateCost(prepare([...models, 'optimizer.use_skill_aware_reflection=true']));
    assert.ok(consolidating.high! > aware.high!);
    assert.equal(consolidating.low, aware.low);
    // The low end's calls: one per item, the rollouts the plan makes, one analyst a step, the
    // baseline, two test evaluations and the no-skill ones; none a step makes only with a candidate.
    const least = leastCalls(narrow.estimate, 40);
    assert.deepEqual(
      Object.entries(least.perStep).filter(([, n]) => n > 0),
      [['analyst', 1]],
    );
    assert.ok(Object.values(least.perEpochEnd).every((n) => n === 0));
    assert.equal(least.once.rollout, 40);
    assert.equal(least.once.baseline, narrow.estimate.once.baseline);
    assert.equal(least.once.test, (2 * narrow.estimate.once.test) / 3);
    assert.equal(least.once.final_selection, 0);
  });

  it('counts one appendix consolidation per step only when skill-aware reflection can consolidate', () => {
    const plain = prepare(['optimizer.use_skill_aware_reflection=true']).estimate;
    assert.equal(plain.perStep.appendix_consolidate, undefined);
    const consolidating = prepare([
      'optimizer.use_skill_aware_reflection=true',
      'optimizer.skill_aware_consolidate_threshold=5',
    ]);
    assert.equal(consolidating.estimate.perStep.appendix_consolidate, 1);
    assert.equal(consolidating.estimate.total, plain.total + consolidating.totalSteps);
  });

  it('counts every refinement turn of the target in the calls and the high end, one call per item at the low end', () => {
    const models = ['model.optimizer=gpt-4o-mini', 'model.target=gpt-4o-mini'];
    const one = prepare(models);
    const three = prepare([...models, 'env.max_turns=3']);
    assert.equal(three.estimate.targetTurns, 3);
    assert.equal(one.estimate.targetTurns, undefined);
    // Target stages count three calls an item; the optimizer's stages are unchanged.
    assert.equal(three.estimate.perStep.rollout, 3 * one.estimate.perStep.rollout);
    assert.equal(three.estimate.perStep.selection, 3 * one.estimate.perStep.selection);
    assert.equal(three.estimate.once.baseline, 3 * one.estimate.once.baseline);
    assert.equal(three.estimate.perStep.analyst, one.estimate.perStep.analyst);
    assert.equal(three.estimate.perStep.merge, one.estimate.perStep.merge);
    const targetCalls = (e: typeof one.estimate): number =>
      (e.perStep.rollout + e.perStep.selection) * one.totalSteps +
      (e.perEpochEnd.slow_rollout ?? 0) +
      (e.perEpochEnd.selection ?? 0) +
      Object.entries(e.once).reduce((n, [k, v]) => n + (k === 'judge' ? 0 : v), 0);
    assert.equal(three.estimate.total - one.estimate.total, 2 * targetCalls(one.estimate));
    const c1 = estimateCost(one);
    const c3 = estimateCost(three);
    assert.ok(c1.low !== null && c1.high !== null && c3.low !== null && c3.high !== null);
    assert.ok(Math.abs(c3.low - c1.low) < 1e-12, `${c3.low} vs ${c1.low}`);
    assert.ok(c3.high > c1.high && c3.tokens.high > c1.tokens.high, `${c3.high} vs ${c1.high}`);
    assert.ok(
      three.warnings.some((w) => /env\.max_turns 3: .*the call estimate counts all of them/.test(w)),
      three.warnings.join('\n'),
    );
    // Meta reflect's selection scoring is the target's (turns and all); its own call the optimizer's.
    const meta = ['optimizer.use_meta_reflect=true'];
    const oneMeta = prepare([...models, ...meta]);
    const threeMeta = prepare([...models, ...meta, 'env.max_turns=3']);
    assert.equal(threeMeta.estimate.perEpochEnd.meta_reflect, 1);
    assert.equal(
      threeMeta.estimate.perEpochEnd.meta_reflect_selection,
      3 * oneMeta.estimate.perEpochEnd.meta_reflect_selection,
    );
    const [m1, m3] = [estimateCost(oneMeta), estimateCost(threeMeta)];
    assert.ok(Math.abs(m3.low! - m1.low!) < 1e-12, `${m3.low} vs ${m1.low}`);
  });

  it('says "unknown price" for a model it has no price for, never $0, and takes prices: from the config', () => {
    const unknown = estimateCost(prepare(['model.optimizer=gpt-4o', 'model.target=my-local-model']));
    assert.equal(unknown.low, null);
    assert.deepEqual(unknown.unpricedModels, ['my-local-model']);
    assert.match(describeCost(unknown), /unknown price for my-local-model/);
    const priced = estimateCost(
      prepare([
        'model.optimizer=gpt-4o',
        'model.target=my-local-model',
        'prices={"my-local-model": {"input_per_mtok": 1, "output_per_mtok": 2}}',
      ]),
    );
    assert.ok(priced.low !== null && priced.low > 0);
  });

  it('prices the evaluations sent through the batch API at half the list price', () => {
    const models = ['model.optimizer=gpt-4o', 'model.target=gpt-4o'];
    const list = estimateCost(prepare(models));
    const final = estimateCost(prepare([...models, 'evaluation.batch_api=final']));
    const selection = estimateCost(prepare([...models, 'evaluation.batch_api=selection']));
    assert.equal(list.batchCalls, undefined);
    assert.ok(final.batchCalls! > 0 && selection.batchCalls! > final.batchCalls!);
    assert.ok(list.low! > final.low! && final.low! > selection.low!);
    // The same tokens: only their price changed.
    assert.deepEqual(final.tokens, list.tokens);
    assert.match(describeCost(final), /batch calls at half/);
  });

  describe('prompt caching', () => {
    it('counts one cache write per skill version and a read for every later call sharing it', () => {
      const estimate = {
        perStep: { rollout: 8, selection: 5, analyst: 3, merge: 1 },
        perEpochEnd: { slow_rollout: 4, selection: 5 },
        once: { baseline: 5, test: 30, no_skill: 10 },
        total: 0,
      };
      // 2 steps, 2 epochs: (8 + 5) × 2 + (4 + 5) + (5 + 30) calls; versions 2 × 2 + (2 + 1) + (1 + 3).
      assert.deepEqual(
        cacheableCalls('target', estimate, 2, 2, () => false),
        { calls: 70, versions: 11 },
      );
      // Batched stages are priced as batches, with no cache hit assumed.
      assert.deepEqual(
        cacheableCalls('target', estimate, 2, 2, (s) => s === 'test'),
        { calls: 40, versions: 8 },
      );
      // Failure and success analysts have system prompts of their own.
      assert.deepEqual(
        cacheableCalls('optimizer', estimate, 2, 2, () => false),
        { calls: 6, versions: 4 },
      );
      assert.deepEqual(lowEndCacheTokens({ calls: 70, versions: 11 }, 2000), {
        cacheWriteTokens: 22_000,
        cachedTokens: 118_000,
      });
    });

    it('prices the write surcharge where the provider has one (Anthropic 1.25×, OpenAI none)', () => {
      const prices = new PriceTable();
      const once = lowEndCacheTokens({ calls: 1, versions: 1 }, 2000);
      const plain = prices.cost('claude-sonnet-4-5', 'anthropic', 2000, 0)!;
      assert.ok(
        Math.abs(prices.cost('claude-sonnet-4-5', 'anthropic', 2000, 0, once)! - plain * 1.25) < 1e-12,
      );
      const gpt = prices.cost('gpt-4o', 'openai', 2000, 0)!;
      assert.equal(prices.cost('gpt-4o', 'openai', 2000, 0, once), gpt);
    });

    it('lowers only the low end, by the saving it reports, and says so in one line', () => {
      const on = estimateCost(prepare([...anthropic('claude-sonnet-4-5'), longSkill()]));
      const off = estimateCost(
        prepare([...anthropic('claude-sonnet-4-5'), longSkill(), 'model.prompt_caching=false']),
      );
      assert.ok(on.low! < off.low!, `${on.low} < ${off.low}`);
      assert.equal(on.high, off.high);
      assert.ok(on.promptCache!.lowEndSaving! > 0);
      assert.ok(Math.abs(off.low! - on.low! - on.promptCache!.lowEndSaving!) < 1e-9);
      const lines = describeCostLines(on);
      assert.equal(lines.length, 2);
      assert.match(
        lines[1],
        /^Prompt cache: the low end reads the skill prefix \(target ~\d\.\dk tokens, optimizer ~\d\.\dk tokens\) from the prompt cache after the first call per skill version; Anthropic cache writes cost 1\.25× input; the high end assumes no cache hits$/,
      );
      assert.match(off.promptCache!.note, /no cache_control \(model\.prompt_caching: false\)/);
      assert.equal(off.promptCache!.lowEndSaving, 0);
    });

    it('assumes OpenAI caches on its own, at the model’s cached-input rate', () => {
      const cached = estimateCost(prepare(['model.optimizer=gpt-4o', 'model.target=gpt-4o', longSkill()]));
      // A config price without cache rates: the same run with no cache saving, and a note saying why.
      const uncached = estimateCost(
        prepare([
          'model.optimizer=gpt-4o',
          'model.target=gpt-4o',
          longSkill(),
          'prices={"gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10}}',
        ]),
      );
      assert.ok(Math.abs(uncached.low! - cached.low! - cached.promptCache!.lowEndSaving!) < 1e-9);
      assert.ok(cached.promptCache!.lowEndSaving! > 0);
      assert.equal(cached.high, uncached.high);
      assert.doesNotMatch(cached.promptCache!.note, /1\.25/);
      assert.match(uncached.promptCache!.note, /gpt-4o has no cache rates under prices:/);
    });

    it('assumes no saving for a skill prefix under the provider’s cache minimum', () => {
      // The bundled example's skill is a few hundred characters; Opus 4.5 caches from 4,096 tokens.
      const short = estimateCost(prepare(anthropic('claude-opus-4-5')));
      assert.equal(short.promptCache!.lowEndSaving, 0);
      assert.match(
        short.promptCache!.note,
        /^Prompt cache: no cache saving assumed where the target's skill prefix \(~[\d.]+k? tokens\) is under claude-opus-4-5's 4096-token cache minimum; the optimizer's/,
      );
    });
  });

  describe('simulated roles', () => {
    it('prices the real role and leaves the simulated one out; all simulated costs nothing', () => {
      const both = estimateCost(prepare(['model.optimizer=gpt-4o', 'model.target=gpt-4o']));
      const simOptimizer = estimateCost(
        prepare(['model.optimizer_backend=sim', 'model.target=gpt-4o', 'model.optimizer=sim']),
      );
      assert.deepEqual(simOptimizer.simulatedRoles, ['optimizer']);
      assert.ok(simOptimizer.low !== null && simOptimizer.high !== null);
      assert.ok(
        simOptimizer.low > 0 && simOptimizer.high < both.high!,
        `${simOptimizer.high} < ${both.high}`,
      );
      const line = describeCost(simOptimizer);
      assert.match(line, /^Estimated cost: \$\d+\.\d\d – \$\d+\.\d\d at list prices/);
      assert.match(line, /the optimizer is simulated, no cost/);
      const sims = estimateCost(
        prepare([
          'model.optimizer_backend=sim',
          'model.target_backend=sim',
          'model.optimizer=sim',
          'model.target=sim',
        ]),
      );
      assert.deepEqual(sims.simulatedRoles, ['target', 'optimizer']);
      // Simulated models cost nothing and get no cache line.
      assert.deepEqual(describeCostLines(sims), ['Estimated cost: none (simulated models)']);
    });
  });

  describe('agent targets', () => {
    it("counts each task's CLI requests and their system prompt and tools, priced by the CLI's provider", function () {
      const { bin } = agentCliBin();
      if (!bin) this.skip();
      const run = (backend: string): ReturnType<typeof estimateCost> =>
        estimateCost(
          prepareRun({
            configPath: exampleConfig,
            outDir: dir.path,
            dryRun: true,
            overrides: [
              'model.optimizer_backend=anthropic',
              'model.optimizer=claude-sonnet-4-5',
              `model.target_backend=${backend}`,
              'model.target=claude-sonnet-4-5',
            ],
            models: {
              keys: { anthropic: 'sk-ant-test-not-a-real-key' },
              env: { PATH: bin },
              trustedWorkspace: true,
            },
          }),
        );
      const chat = run('anthropic');
      const agent = run('claude_code_exec');
      assert.ok(agent.low !== null && agent.high !== null && chat.low !== null && chat.high !== null);
      const prepared = prepareRun({
        configPath: exampleConfig,
        outDir: dir.path,
        dryRun: true,
        overrides: ['model.optimizer_backend=sim', 'model.target_backend=sim'],
      });
      const e = prepared.estimate;
      // The low end's target calls: at least one rollout a step, the baseline, two test evaluations.
      const targetCalls = prepared.totalSteps + (e.once.baseline ?? 0) + (2 * (e.once.test ?? 0)) / 3;
      // At least two requests a task, each with Claude Code's ~18.5k-token system prompt and tools.
      const overhead = 2 * PRESETS.claude.requestOverheadTokens;
      assert.ok(
        agent.tokens.low - chat.tokens.low >= targetCalls * overhead * 0.99,
        `${agent.tokens.low} vs ${chat.tokens.low} (${targetCalls} target calls)`,
      );
      assert.ok(
        agent.high > chat.high && agent.low > chat.low,
        `${agent.low}–${agent.high} vs ${chat.low}–${chat.high}`,
      );
      assert.match(describeCost(agent), /^Estimated cost: \$/);
    });
  });
});
