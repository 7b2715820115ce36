import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../../src/engine/config/load';
import { defaultConfig } from '../../../src/engine/config/schema';
import { idleBenchmarkKeyNotices } from '../../../src/engine/data/benchmarkRun';
import { benchmarkFor } from '../../../src/engine/data/benchmarks';
import { expectConfigError, lineOf, tempDir, write } from './helpers';

/**
 * The env section: a key no benchmark reads is refused with "did you mean" (never passed on
 * unread), and the keys the benchmark loaders read have types, so a wrong one is refused too.
 */
const LIVEMATH = resolve(__dirname, '../../fixtures/benchmarks/livemath.json');

describe('config/env keys', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  describe('a misspelt or unknown env key stops before anything runs', () => {
    const typos: Array<[string, string, string]> = [
      ['split_ration: "4:3:3"', 'env.split_ration', 'did you mean env.split_ratio?'],
      ['max_turn: 3', 'env.max_turn', 'did you mean env.max_turns?'],
      ['shufle_choices: false', 'env.shufle_choices', 'did you mean env.shuffle_choices?'],
      ['batch_size: 8', 'env.batch_size', 'did you mean train.batch_size?'],
      ['bogus_key: 1', 'env.bogus_key', 'remove it, or use one of the env keys: name, skill_init'],
    ];
    for (const [line, key, fix] of typos) {
      it(`${line} (YAML, with its line)`, () => {
        const text = `train:\n  seed: 1\nenv:\n  name: searchqa\n  ${line}\n`;
        const file = write(dir, 'c.yaml', text);
        expectConfigError(() => loadConfig(file), {
          file,
          line: lineOf(text, line),
          key,
          includes: [fix],
        });
      });
    }

    it('through --cfg-options (bare names: overrides.test.ts)', () => {
      const file = write(dir, 'c.yaml', 'env:\n  name: searchqa\n');
      expectConfigError(() => loadConfig(file, { overrides: ['env.split_ration=4:3:3'] }), {
        file: '--cfg-options',
        key: 'env.split_ration',
        includes: ['did you mean env.split_ratio?'],
      });
    });
  });

  describe('the benchmark loaders read typed values', () => {
    const wrong: Array<[string, string, string]> = [
      ['shuffle_choices: no', 'env.shuffle_choices', 'must be true or false, got "no"'],
      ['use_theorem: "true"', 'env.use_theorem', 'must be true or false, got "true"'],
      ['use_sketch: 1', 'env.use_sketch', 'must be true or false, got 1'],
      ['image_detail: ultra', 'env.image_detail', 'must be one of: auto, low, high'],
      ['max_queries_per_turn: four', 'env.max_queries_per_turn', 'must be an integer ≥ 1'],
      ['search_timeout_seconds: 0', 'env.search_timeout_seconds', 'must be a number > 0'],
      ['max_steps: 2.5', 'env.max_steps', 'must be an integer ≥ 1'],
    ];
    for (const [line, key, says] of wrong) {
      it(`refuses ${line}`, () => {
        const text = `env:\n  name: livemathematicianbench\n  ${line}\n`;
        const file = write(dir, 'c.yaml', text);
        expectConfigError(() => loadConfig(file), { file, line: 3, key, includes: [says] });
      });
    }

    it('casts command-line values as the other boolean keys are cast (1/0, yes/no, true/false)', () => {
      const file = write(dir, 'c.yaml', 'env:\n  name: livemathematicianbench\n');
      const { config } = loadConfig(file, {
        overrides: ['env.shuffle_choices=no', 'use_sketch=yes'],
        legacyArgs: ['--use_theorem', '1'],
      });
      assert.equal(config.env.shuffle_choices, false);
      assert.equal(config.env.use_sketch, true);
      assert.equal(config.env.use_theorem, true);
      expectConfigError(() => loadConfig(file, { legacyArgs: ['--use_theorem', 'maybe'] }), {
        file: '--use_theorem',
        key: 'env.use_theorem',
        includes: ['must be true or false'],
      });
    });

    it('LiveMathematicianBench follows --use_theorem 1 and shuffle_choices: false', () => {
      const file = write(dir, 'c.yaml', 'env:\n  name: livemathematicianbench\n  shuffle_choices: false\n');
      const { config } = loadConfig(file, { legacyArgs: ['--use_theorem', '1'] });
      const bench = benchmarkFor(config.env)!;
      assert.equal(bench.shuffleChoices, false);
      const { normalized } = JSON.parse(readFileSync(LIVEMATH, 'utf8')) as {
        normalized: Array<Record<string, unknown>>;
      };
      const task = bench.mapRecord!(normalized[0], 0)!;
      assert.equal(task.context, `Theorem:\n${String(normalized[0].theorem)}`);
      // Unset, the reference adapter's defaults: shuffled, no theorem.
      const plain = benchmarkFor({ ...defaultConfig().env, name: 'livemathematicianbench' })!;
      assert.equal(plain.shuffleChoices, true);
      assert.equal(plain.mapRecord!(normalized[0], 0)!.context, undefined);
    });
  });

  it("says when a benchmark's keys are set for a run that does not read them", () => {
    const env = { ...defaultConfig().env, shuffle_choices: false, max_steps: 50, max_tool_turns: 12 };
    assert.deepEqual(idleBenchmarkKeyNotices(env, 'searchqa'), [
      'env.shuffle_choices: read only by the livemathematicianbench benchmark (env.name: livemathematicianbench), so it has no effect on this run',
      'env.max_steps: read only by the alfworld benchmark (env.name: alfworld), so it has no effect on this run',
    ]);
    assert.deepEqual(idleBenchmarkKeyNotices({ ...env, max_steps: undefined }, 'livemathematicianbench'), []);
  });

  it('loads the reference configs of the benchmarks we run with their typed keys', () => {
    const configs = resolve(__dirname, '../../fixtures/reference-configs/configs');
    const { config } = loadConfig(join(configs, 'livemathematicianbench/default.yaml'), { cwd: dir });
    assert.deepEqual(
      [config.env.shuffle_choices, config.env.use_theorem, config.env.use_sketch],
      [true, false, false],
    );
    const office = loadConfig(join(configs, 'officeqa/default.yaml'), { cwd: dir }).config.env;
    assert.equal(office.max_queries_per_turn, 4);
    assert.equal(office.search_timeout_seconds, 20);
  });
});
