import assert from 'node:assert/strict';
import { join } from 'node:path';
import { effectiveSplitSeed } from '../../../src/engine/data/splitRatio';
import { prepareRun } from '../../../src/engine/run';
import { exampleConfig, tempDir } from '../train/helpers';

describe('env.split_seed: 0 means train.seed (reference datasets/base.py)', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-splitseed-');
  });
  afterEach(() => dir.cleanup());

  const trainIds = (overrides: string[]): string[] =>
    prepareRun({
      configPath: exampleConfig,
      outDir: join(dir.path, 'run'),
      dryRun: true,
      overrides: ['cache.enabled=false', ...overrides],
    }).splits.train.map((t) => t.id);

  it('shuffles with train.seed when split_seed is 0, and with split_seed otherwise', () => {
    const zeroWithSeed7 = trainIds(['env.split_seed=0', 'train.seed=7']);
    assert.deepEqual(zeroWithSeed7, trainIds(['env.split_seed=7', 'train.seed=42']));
    assert.notDeepEqual(zeroWithSeed7, trainIds(['env.split_seed=42', 'train.seed=7']));
    assert.equal(effectiveSplitSeed(0, 7), 7);
    assert.equal(effectiveSplitSeed(3, 7), 3);
  });

  it('names the generated split folder with the seed it used, as the reference does', () => {
    const prepared = prepareRun({
      configPath: exampleConfig,
      outDir: join(dir.path, 'run'),
      overrides: ['cache.enabled=false', 'env.split_seed=0', 'train.seed=9'],
    });
    assert.equal(prepared.splits.manifest?.split_seed, 9);
    assert.match(prepared.splits.splitDir, /_seed9$/);
  });
});
