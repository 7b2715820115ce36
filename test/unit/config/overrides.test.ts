import * as assert from 'node:assert/strict';
import { loadConfig } from '../../../src/engine/config/load';
import {
  castForPath,
  castOverrideValue,
  Origins,
  parseLegacyArgs,
} from '../../../src/engine/config/overrides';
import { expectConfigError, tempDir, write } from './helpers';

describe('config/overrides', () => {
  let dir: string;
  let cleanup: () => void;
  let file: string;
  const yaml = 'train:\n  batch_size: 8\n  seed: 1\noptimizer:\n  learning_rate: 4\nenv:\n  name: bench\n';
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    file = write(dir, 'run.yaml', yaml);
  });
  afterEach(() => cleanup());

  describe('castOverrideValue', () => {
    it('casts like the reference, plus null and flow collections', () => {
      const cases: Array<[string, unknown]> = [
        ['true', true],
        ['YES', true],
        ['False', false],
        ['no', false],
        ['42', 42],
        ['-7', -7],
        ['0.25', 0.25],
        ['1e3', 1000],
        ['.5', 0.5],
        ['gpt-4o', 'gpt-4o'],
        ['2:1:7', '2:1:7'],
        ['', ''],
        ['null', null],
        ['~', null],
        ['none', 'none'],
        ['[a, b]', ['a', 'b']],
        ['{type: contains, case_sensitive: true}', { type: 'contains', case_sensitive: true }],
        ['[unclosed', '[unclosed'],
      ];
      for (const [text, expected] of cases) assert.deepEqual(castOverrideValue(text), expected, text);
    });

    it('keeps the text for string fields and reads 1/0 for boolean fields', () => {
      assert.equal(castForPath(['model', 'optimizer'], '4'), '4');
      assert.equal(castForPath(['model', 'target_skill_name'], 'true'), 'true');
      assert.equal(castForPath(['evaluation', 'use_gate'], '0'), false);
      assert.equal(castForPath(['evaluation', 'use_gate'], '1'), true);
      assert.equal(castForPath(['evaluation', 'use_gate'], 'perhaps'), 'perhaps');
      assert.equal(castForPath(['model', 'codex_exec_web_search'], 'null'), null);
      assert.equal(castForPath(['model', 'optimizer_temperature'], 'null'), null);
      assert.equal(castForPath(['train', 'batch_size'], '12'), 12);
      assert.equal(castForPath(['env', 'anything'], '3'), 3);
    });
  });

  describe('--cfg-options', () => {
    it('sets section.key values with casting', () => {
      const { config } = loadConfig(file, {
        overrides: [
          'train.batch_size=16',
          'evaluation.use_gate=no',
          'evaluation.gate_mixed_weight=0.25',
          'model.optimizer=claude-sonnet-4-6',
          'env.split_ratio=3:1:6',
          'env.shuffle_choices=no',
        ],
      });
      assert.equal(config.train.batch_size, 16);
      assert.equal(config.evaluation.use_gate, false);
      assert.equal(config.evaluation.gate_mixed_weight, 0.25);
      assert.equal(config.model.optimizer, 'claude-sonnet-4-6');
      assert.equal(config.env.split_ratio, '3:1:6');
      assert.equal(config.env.shuffle_choices, false);
    });

    it('routes bare keys to their section and unknown bare keys to env', () => {
      const { config, warnings } = loadConfig(file, {
        overrides: [
          'batch_size=24',
          'edit_budget=6',
          'optimizer_model=o',
          'env=other',
          'review_mode=human-first',
          'data_root=corpus',
        ],
      });
      assert.equal(config.train.batch_size, 24);
      assert.equal(config.optimizer.learning_rate, 6);
      assert.equal(config.model.optimizer, 'o');
      assert.equal(config.env.name, 'other');
      assert.equal(config.review.mode, 'human-first');
      assert.equal(config.env.data_root, 'corpus');
      assert.deepEqual(warnings, []);
    });

    it('refuses a bare key that went to env and is no env key, with the key it resembles', () => {
      expectConfigError(() => loadConfig(file, { overrides: ['batch_sise=3'] }), {
        file: '--cfg-options',
        key: 'env.batch_sise',
        includes: ['did you mean train.batch_size?'],
      });
      expectConfigError(() => loadConfig(file, { overrides: ['numm_epochs=1'] }), {
        file: '--cfg-options',
        key: 'env.numm_epochs',
        includes: ['did you mean train.num_epochs?'],
      });
      expectConfigError(() => loadConfig(file, { overrides: ['bogus_key=1'] }), {
        file: '--cfg-options',
        key: 'env.bogus_key',
        includes: ['nothing reads it'],
      });
      expectConfigError(() => loadConfig(file, { legacyArgs: ['--max_turn', '3'] }), {
        file: '--max_turn',
        key: 'env.max_turn',
        includes: ['did you mean env.max_turns?'],
      });
    });

    it('sets entries of maps with dotted paths, names may contain dots', () => {
      const { config } = loadConfig(file, {
        overrides: [
          'limits.provider_concurrency.openai=4',
          'limits.provider_concurrency.azure.east=2',
          'prices.gpt-4.1.input_per_mtok=2',
          'prices.gpt-4.1.output_per_mtok=8',
          'env.scorer.type=contains',
        ],
      });
      assert.deepEqual(config.limits.provider_concurrency, { openai: 4, 'azure.east': 2 });
      assert.deepEqual(config.prices, { 'gpt-4.1': { input_per_mtok: 2, output_per_mtok: 8 } });
      assert.deepEqual(config.env.scorer, { type: 'contains' });
    });

    it('normalises Codex aliases in overrides', () => {
      const { config } = loadConfig(file, { overrides: ['model.codex_path=/x/codex', 'sandbox=read-only'] });
      assert.equal(config.model.codex_exec_path, '/x/codex');
      assert.equal(config.model.codex_exec_sandbox, 'read-only');
    });

    it('names --cfg-options in errors', () => {
      expectConfigError(() => loadConfig(file, { overrides: ['train.num_epochs=0'] }), {
        file: '--cfg-options',
        key: 'train.num_epochs',
        includes: ['integer ≥ 1'],
      });
      expectConfigError(() => loadConfig(file, { overrides: ['train.batch_size'] }), {
        file: '--cfg-options',
        includes: ['"train.batch_size" is not key=value'],
      });
      expectConfigError(() => loadConfig(file, { overrides: ['train..seed=1'] }), {
        file: '--cfg-options',
        includes: ['empty part'],
      });
      // A section only an override made is the override's, not the file's.
      expectConfigError(() => loadConfig(file, { overrides: ['trian.num_epochs=3'] }), {
        file: '--cfg-options',
        key: 'trian',
        includes: ['did you mean train?'],
      });
      const { warnings } = loadConfig(file, { overrides: ['bogus.x=3'] });
      assert.deepEqual(
        warnings.map((w) => [w.file, w.key]),
        [['--cfg-options', 'bogus']],
      );
    });

    it('drops the retired max_analyst_rounds with a warning', () => {
      const { warnings, config } = loadConfig(file, {
        overrides: ['gradient.max_analyst_rounds=3', 'max_analyst_rounds=2'],
      });
      assert.equal(warnings.length, 2);
      assert.ok(warnings.every((w) => /retired/.test(w.message)));
      assert.equal('max_analyst_rounds' in config.env, false);
    });

    it('warns about credentials on the command line', () => {
      const { warnings } = loadConfig(file, {
        overrides: ['model.azure_openai_api_key=fake-very-secret-value'],
      });
      assert.equal(warnings.length, 1);
      assert.match(warnings[0].message, /credential on the command line/);
    });
  });

  describe('legacy flags', () => {
    it('maps flags through the legacy table and unknown flags to env', () => {
      const { config } = loadConfig(file, {
        legacyArgs: [
          '--edit_budget',
          '6',
          '--min_edit_budget=3',
          '--backend',
          'claude',
          '--env',
          'sq',
          '--max-turns',
          '1',
          '--data_root',
          'corpus',
        ],
      });
      assert.equal(config.optimizer.learning_rate, 6);
      assert.equal(config.optimizer.min_learning_rate, 3);
      assert.equal(config.model.backend, 'claude');
      assert.equal(config.env.name, 'sq');
      assert.equal(config.env.max_turns, 1);
      assert.equal(config.env.data_root, 'corpus');
    });

    it('win over --cfg-options, which win over the file', () => {
      const { config, locate } = loadConfig(file, {
        overrides: ['train.batch_size=16', 'train.seed=5'],
        legacyArgs: ['--batch_size', '40'],
      });
      assert.equal(config.train.batch_size, 40);
      assert.equal(config.train.seed, 5);
      assert.equal(config.optimizer.learning_rate, 4);
      assert.deepEqual(locate('train.batch_size'), { file: '--batch_size' });
      assert.deepEqual(locate('train.seed'), { file: '--cfg-options' });
      assert.equal(locate('optimizer.learning_rate')?.line, 5);
    });

    it('parses booleans like the reference (true/1/yes)', () => {
      const { config } = loadConfig(file, {
        legacyArgs: ['--use_gate', '0', '--failure_only', '1', '--eval_test', 'yes'],
      });
      assert.deepEqual(
        [config.evaluation.use_gate, config.gradient.failure_only, config.evaluation.eval_test],
        [false, true, true],
      );
    });

    it('accepts --max_analyst_rounds and --steps_per_epoch with warnings', () => {
      const { warnings } = loadConfig(file, {
        legacyArgs: ['--max_analyst_rounds', '3', '--steps_per_epoch', '2'],
      });
      assert.deepEqual(
        warnings.map((w) => w.file),
        ['--max_analyst_rounds', '--steps_per_epoch'],
      );
      assert.match(warnings[0].message, /retired/);
    });

    it('names the flag in errors', () => {
      expectConfigError(() => loadConfig(file, { legacyArgs: ['--merge_batch_size', '1'] }), {
        file: '--merge_batch_size',
        key: 'gradient.merge_batch_size',
        includes: ['integer ≥ 2'],
      });
      expectConfigError(() => loadConfig(file, { legacyArgs: ['--seed'] }), {
        file: '--seed',
        includes: ['has no value'],
      });
      expectConfigError(() => loadConfig(file, { legacyArgs: ['seed', '3'] }), {
        file: 'command line',
        includes: ['unexpected command-line argument "seed"'],
      });
    });

    it('splits flag tokens', () => {
      assert.deepEqual(parseLegacyArgs(['--a', '1', '--b=x=y', '--c-d', '-5']), [
        { name: 'a', text: '1' },
        { name: 'b', text: 'x=y' },
        { name: 'c_d', text: '-5' },
      ]);
    });
  });

  describe('Origins', () => {
    it('locates the nearest ancestor and moves subtrees', () => {
      const o = new Origins();
      o.set(['env', 'scorer'], { file: 'a.yaml', line: 3 });
      o.set(['env', 'scorer', 'type'], { file: 'a.yaml', line: 4 });
      assert.equal(o.locate(['env', 'scorer', 'type'])?.line, 4);
      assert.equal(o.locate(['env', 'scorer', 'options', 'x'])?.line, 3);
      o.move(['env', 'scorer'], ['env', 'grader']);
      assert.equal(o.locate(['env', 'scorer']), undefined);
      assert.equal(o.get(['env', 'grader', 'type'])?.line, 4);
      o.clearUnder(['env', 'grader']);
      assert.equal(o.locate(['env', 'grader', 'type']), undefined);
    });
  });
});
