import assert from 'node:assert/strict';
import { describeCost, estimateCost } from '../../src/engine/costEstimate';
import { prepareRun } from '../../src/engine/run';
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
      models: { keys: { openai: 'sk-test-not-a-real-key' } },
    });

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
    assert.match(describeCost(dear, false), /^Estimated cost: \$\d+\.\d\d – \$\d+\.\d\d at list prices/);
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

  it('says "unknown price" for a model it has no price for, never $0, and takes prices: from the config', () => {
    const unknown = estimateCost(prepare(['model.optimizer=gpt-4o', 'model.target=my-local-model']));
    assert.equal(unknown.low, null);
    assert.deepEqual(unknown.unpricedModels, ['my-local-model']);
    assert.match(describeCost(unknown, false), /unknown price for my-local-model/);
    const priced = estimateCost(
      prepare([
        'model.optimizer=gpt-4o',
        'model.target=my-local-model',
        'prices={"my-local-model": {"input_per_mtok": 1, "output_per_mtok": 2}}',
      ]),
    );
    assert.ok(priced.low !== null && priced.low > 0);
  });
});
