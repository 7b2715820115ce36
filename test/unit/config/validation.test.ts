import * as assert from 'node:assert/strict';
import { loadConfig } from '../../../src/engine/config/load';
import { configSchema, defaultConfig } from '../../../src/engine/config/schema';
import type { SkillOptConfig } from '../../../src/engine/config/schema';
import { problemsToError } from '../../../src/engine/config/schema/problems';
import { validateConfigObject } from '../../../src/engine/config/schema/validate';
import type { TrainSettings } from '../../../src/engine/train/settings';
import { expectConfigError, lineOf, tempDir, write } from './helpers';

describe('config/schema', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  describe('defaults', () => {
    it('has the reference defaults for the reference sections', () => {
      const c = defaultConfig();
      assert.deepEqual(
        [
          c.model.backend,
          c.model.optimizer,
          c.model.target,
          c.model.optimizer_backend,
          c.model.target_backend,
        ],
        ['azure_openai', 'gpt-5.5', 'gpt-5.5', 'openai_chat', 'openai_chat'],
      );
      assert.equal(c.model.reasoning_effort, 'medium');
      assert.equal(c.model.rewrite_max_completion_tokens, 64000);
      assert.equal(c.model.azure_openai_ad_scope, 'https://cognitiveservices.azure.com/.default');
      assert.equal(c.model.minimax_model, 'MiniMax-M3');
      assert.deepEqual(
        { ...c.train },
        { num_epochs: 4, train_size: 0, batch_size: 40, accumulation: 1, seed: 42 },
      );
      assert.deepEqual(
        { ...c.gradient },
        {
          minibatch_size: 8,
          merge_batch_size: 8,
          analyst_workers: 16,
          failure_only: false,
          use_deep_reflect: false,
          deep_reflect_failures: 4,
          deep_reflect_successes: 2,
          deep_reflect_threshold: 0.25,
          deep_reflect_rounds: 3,
          deep_reflect_every_step: false,
        },
      );
      assert.deepEqual(
        { ...c.optimizer },
        {
          learning_rate: 4,
          min_learning_rate: 2,
          lr_scheduler: 'cosine',
          lr_control_mode: 'fixed',
          skill_update_mode: 'patch',
          use_slow_update: true,
          slow_update_samples: 20,
          slow_update_gate_with_selection: true, // the paper's setting; the reference defaults to false
          longitudinal_pair_policy: 'mixed',
          use_meta_skill: true,
          use_skill_aware_reflection: false,
          skill_aware_appendix_source: 'both',
          skill_aware_consolidate_threshold: 0,
          anchor_mode: 'strict',
          decay_on_reject: false,
          use_meta_reflect: false,
          package_edits: {
            editable: ['SKILL.md', 'references/**'],
            read_only: [],
            max_files: 50,
            max_file_bytes: 32_768,
          },
        },
      );
      assert.deepEqual(
        { ...c.evaluation },
        {
          use_gate: true,
          gate_metric: 'hard',
          gate_mixed_weight: 0.5,
          use_semantic_density: false,
          semantic_density_weight: 0.05,
          sel_env_num: 0,
          test_env_num: 0,
          eval_test: true,
          patience: 0,
          batch_api: 'off',
          batch_poll_s: 30,
          repeats: 1,
          gate_test: 'strict',
          alpha: 0.05,
          on_inconclusive: 'reject',
          max_repeats: 0,
          judge_model: '',
          early_stop: false,
          no_skill_baseline: true,
        },
      );
      assert.deepEqual({ ...c.speed }, { speculate: false });
      assert.deepEqual(
        { ...c.env },
        {
          name: '',
          skill_init: '',
          max_skill_bytes: 200_000,
          out_root: '',
          split_mode: 'ratio',
          split_ratio: '2:1:7',
          split_seed: 42,
          split_dir: '',
          data_path: '',
          split_output_dir: '',
          exec_timeout: 120,
          limit: 0,
          max_turns: 1,
          max_completion_tokens: 16384,
          max_tool_turns: 12,
          use_local_tools: true,
          search_mode: 'offline',
          scorer: 'normalized_exact',
          answer_tag: 'answer',
          target_system_prompt: '',
        },
      );
    });

    it('has our keys with their defaults', () => {
      const c = defaultConfig();
      assert.deepEqual(
        [
          c.model.optimizer_base_url,
          c.model.target_base_url,
          c.model.target_temperature,
          c.model.optimizer_temperature,
          c.model.thinking_budget,
          c.model.target_command,
          c.model.target_skill_name,
          c.model.target_delivery,
          c.model.target_env_passthrough,
          c.model.target_workspace_root,
          c.model.target_keep_workspaces,
        ],
        ['', '', 0, null, 0, '', 'skill', 'native', [], '', false],
      );
      assert.deepEqual(
        { ...c.limits },
        {
          optimizer_concurrency: 16,
          target_concurrency: 32,
          agent_concurrency: 0,
          provider_concurrency: {},
          request_timeout_s: 300,
          max_retries: 5,
          max_tokens: 0,
          max_dollars: 0,
          max_wall_time_s: 0,
          max_errored_share: 0.5,
        },
      );
      assert.deepEqual({ ...c.cache }, { enabled: true, dir: '', all_roles: false });
      assert.deepEqual(c.prices, {});
      assert.deepEqual({ ...c.review }, { mode: 'auto' });
    });

    it('types enum keys narrowly enough for the training settings', () => {
      const c: SkillOptConfig = defaultConfig();
      const scheduler: TrainSettings['lrScheduler'] = c.optimizer.lr_scheduler;
      const metric: TrainSettings['gateMetric'] = c.evaluation.gate_metric;
      const policy: TrainSettings['pairPolicy'] = c.optimizer.longitudinal_pair_policy;
      assert.deepEqual([scheduler, metric, policy], ['cosine', 'hard', 'mixed']);
    });

    it('accepts every backend spelling, ours and the reference ones', () => {
      for (const backend of [
        'openai',
        'azure_openai',
        'anthropic',
        'vscode-lm',
        'command',
        'sim',
        'openai_chat',
        'qwen_chat',
        'codex_exec',
      ]) {
        const r = validateConfigObject({ model: { optimizer_backend: backend, target_backend: backend } });
        assert.ok(r.ok, backend);
      }
      const empty = validateConfigObject({ model: { target_backend: ' ' } });
      assert.equal(empty.ok, false);
    });

    it('accepts a scorer object with options', () => {
      const r = validateConfigObject({ env: { scorer: { type: 'regex', pattern: '^a' } } });
      assert.ok(r.ok);
      assert.deepEqual(r.config.env.scorer, { type: 'regex', pattern: '^a' });
    });
  });

  describe('validation errors name file, line, key and a fix', () => {
    const cases: Array<{ name: string; yaml: string; needle: string; key: string; includes: string[] }> = [
      {
        name: 'learning_rate < 1',
        yaml: 'optimizer:\n  learning_rate: 0\n',
        needle: 'learning_rate',
        key: 'optimizer.learning_rate',
        includes: ['integer ≥ 1', 'got 0'],
      },
      {
        name: 'min_learning_rate > learning_rate',
        yaml: 'optimizer:\n  learning_rate: 3\n  min_learning_rate: 5\n',
        needle: 'min_learning_rate',
        key: 'optimizer.min_learning_rate',
        includes: ['min_learning_rate (5) is larger than learning_rate (3)'],
      },
      {
        name: 'merge_batch_size < 2',
        yaml: 'gradient:\n  merge_batch_size: 1\n',
        needle: 'merge_batch_size',
        key: 'gradient.merge_batch_size',
        includes: ['integer ≥ 2'],
      },
      {
        name: 'batch_size < 1',
        yaml: 'train:\n  seed: 3\n  batch_size: 0\n',
        needle: 'batch_size',
        key: 'train.batch_size',
        includes: ['integer ≥ 1'],
      },
      {
        name: 'accumulation < 1',
        yaml: 'train:\n  accumulation: -2\n',
        needle: 'accumulation',
        key: 'train.accumulation',
        includes: ['got -2'],
      },
      {
        name: 'num_epochs < 1',
        yaml: 'train:\n  num_epochs: 0\n',
        needle: 'num_epochs',
        key: 'train.num_epochs',
        includes: ['integer ≥ 1'],
      },
      {
        name: 'fractional batch_size',
        yaml: 'train:\n  batch_size: 2.5\n',
        needle: 'batch_size',
        key: 'train.batch_size',
        includes: ['got 2.5'],
      },
      {
        name: 'quoted number',
        yaml: 'train:\n  batch_size: "ten"\n',
        needle: 'batch_size',
        key: 'train.batch_size',
        includes: ['got "ten"'],
      },
      {
        name: 'split_ratio with two parts',
        yaml: 'env:\n  split_ratio: "2:1"\n',
        needle: 'split_ratio',
        key: 'env.split_ratio',
        includes: ['train:val:test', 'three positive whole numbers'],
      },
      {
        name: 'split_ratio with a zero',
        yaml: 'env:\n  name: x\n  split_ratio: "2:0:7"\n',
        needle: 'split_ratio',
        key: 'env.split_ratio',
        includes: ['"2:0:7"'],
      },
      {
        name: 'split_ratio not numbers',
        yaml: 'env:\n  split_ratio: a:b:c\n',
        needle: 'split_ratio',
        key: 'env.split_ratio',
        includes: ['e.g. "2:1:7"'],
      },
      {
        // The reference refuses fractions too; the fix names the whole-number ratio they mean.
        name: 'split_ratio as fractions with spaces',
        yaml: 'env:\n  split_ratio: "0.6, 0.2, 0.2"\n',
        needle: 'split_ratio',
        key: 'env.split_ratio',
        includes: ['got "0.6, 0.2, 0.2"', 'whole-number weights train:val:test: "3:1:1"'],
      },
      {
        name: 'split_ratio as fractions with colons',
        yaml: 'env:\n  split_ratio: "0.8:0.1:0.1"\n',
        needle: 'split_ratio',
        key: 'env.split_ratio',
        includes: ['must contain whole numbers', '"8:1:1"'],
      },
      {
        name: 'gate_metric',
        yaml: 'evaluation:\n  gate_metric: best\n',
        needle: 'gate_metric',
        key: 'evaluation.gate_metric',
        includes: ['one of: hard, soft, mixed', 'got "best"'],
      },
      {
        name: 'gate_mixed_weight',
        yaml: 'evaluation:\n  gate_mixed_weight: 1.5\n',
        needle: 'gate_mixed_weight',
        key: 'evaluation.gate_mixed_weight',
        includes: ['between 0 and 1'],
      },
      {
        name: 'split_mode',
        yaml: 'env:\n  split_mode: folders\n',
        needle: 'split_mode',
        key: 'env.split_mode',
        includes: ['one of: ratio, split_dir'],
      },
      {
        name: 'review.mode',
        yaml: 'review:\n  mode: manual\n',
        needle: 'mode',
        key: 'review.mode',
        includes: ['auto, gate-then-human, human-first'],
      },
      {
        name: 'negative limit',
        yaml: 'limits:\n  max_dollars: -1\n',
        needle: 'max_dollars',
        key: 'limits.max_dollars',
        includes: ['number ≥ 0'],
      },
      {
        name: 'negative retries',
        yaml: 'limits:\n  max_retries: -1\n',
        needle: 'max_retries',
        key: 'limits.max_retries',
        includes: ['integer ≥ 0'],
      },
      {
        name: 'zero timeout',
        yaml: 'limits:\n  request_timeout_s: 0\n',
        needle: 'request_timeout_s',
        key: 'limits.request_timeout_s',
        includes: ['number > 0'],
      },
      {
        name: 'provider concurrency entry',
        yaml: 'limits:\n  provider_concurrency:\n    openai: 4\n    anthropic: 0\n',
        needle: 'anthropic',
        key: 'limits.provider_concurrency.anthropic',
        includes: ['integer ≥ 1'],
      },
      {
        name: 'price entry',
        yaml: 'prices:\n  gpt-4.1:\n    input_per_mtok: 2\n    output_per_mtok: -8\n',
        needle: 'output_per_mtok',
        key: 'prices.gpt-4.1.output_per_mtok',
        includes: ['dollars per million tokens'],
      },
      {
        name: 'price entry typo',
        yaml: 'prices:\n  m:\n    input_per_mtok: 2\n    output_per_mtok: 8\n    cached_per_mtok: 1\n',
        needle: '  m:',
        key: 'prices.m',
        includes: ['cached_per_mtok'],
      },
      {
        name: 'skill_update_mode',
        yaml: 'optimizer:\n  skill_update_mode: evolve\n',
        needle: 'skill_update_mode',
        key: 'optimizer.skill_update_mode',
        includes: [
          'unknown skill_update_mode "evolve"',
          'patch, rewrite_from_suggestions, full_rewrite_minibatch',
        ],
      },
      {
        name: 'lr_control_mode',
        yaml: 'optimizer:\n  lr_control_mode: adaptive\n',
        needle: 'lr_control_mode',
        key: 'optimizer.lr_control_mode',
        includes: ['fixed, autonomous, none'],
      },
      {
        name: 'longitudinal_pair_policy',
        yaml: 'optimizer:\n  longitudinal_pair_policy: odd\n',
        needle: 'policy',
        key: 'optimizer.longitudinal_pair_policy',
        includes: ['mixed, changed, unchanged'],
      },
      {
        name: 'lr_scheduler',
        yaml: 'optimizer:\n  lr_scheduler: step\n',
        needle: 'lr_scheduler',
        key: 'optimizer.lr_scheduler',
        includes: ['constant, linear, cosine, autonomous'],
      },
      {
        name: 'section not a mapping',
        yaml: 'train: 5\n',
        needle: 'train',
        key: 'train',
        includes: ['must be a mapping'],
      },
      {
        name: 'boolean as string',
        yaml: 'evaluation:\n  use_gate: "maybe"\n',
        needle: 'use_gate',
        key: 'evaluation.use_gate',
        includes: ['true or false'],
      },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const file = write(dir, 'bad.yaml', c.yaml);
        expectConfigError(() => loadConfig(file), {
          file,
          line: lineOf(c.yaml, c.needle),
          key: c.key,
          includes: c.includes,
        });
      });
    }

    // datasets/base.py `_parse_split_ratio`: parts split on ":", stripped, empty ones dropped, Python int().
    it('accepts every split_ratio the reference accepts, spaces, signs and leading zeros included', () => {
      for (const ratio of ['2 : 1 : 7', ' 2:1:7', '02:1:07', '+2:1:7', '2:1:7:', '1_0:1:1']) {
        const file = write(dir, 'ratio.yaml', `env:\n  split_ratio: ${JSON.stringify(ratio)}\n`);
        assert.equal(loadConfig(file).config.env.split_ratio, ratio);
      }
    });

    it('refuses a fractional split_ratio given with --cfg-options, naming the ratio it means', () => {
      const file = write(dir, 'ratio.yaml', 'env:\n  name: x\n');
      expectConfigError(() => loadConfig(file, { overrides: ['env.split_ratio=0.6, 0.2, 0.2'] }), {
        file: '--cfg-options',
        key: 'env.split_ratio',
        includes: ['"3:1:1"'],
      });
    });

    it('lets an unset min_learning_rate follow a smaller learning_rate', () => {
      const file = write(dir, 'lr.yaml', 'optimizer:\n  learning_rate: 1\n');
      const { config } = loadConfig(file);
      assert.deepEqual([config.optimizer.learning_rate, config.optimizer.min_learning_rate], [1, 1]);
    });

    it('throws the first problem and counts the rest', () => {
      const yaml = 'train:\n  batch_size: 0\n  num_epochs: 0\nevaluation:\n  gate_metric: x\n';
      const file = write(dir, 'many.yaml', yaml);
      const err = expectConfigError(() => loadConfig(file), {
        file,
        line: 2,
        key: 'train.batch_size',
        includes: ['(and 2 more problems)'],
      });
      assert.equal(err.place.key, 'train.batch_size');
      assert.match(err.message, /Fix: set train\.batch_size to an integer ≥ 1$/);
    });
  });

  describe('validateConfigObject', () => {
    it('collects every problem without throwing', () => {
      const r = validateConfigObject(
        {
          train: { batch_size: 0 },
          optimizer: { skill_update_mode: 'nope', learning_rate: 2, min_learning_rate: 3 },
          env: { split_ratio: '1:1' },
        },
        { defaultFile: 'cfg.yaml' },
      );
      assert.equal(r.ok, false);
      assert.deepEqual(
        r.problems.map((p) => [p.key, p.file]),
        [
          ['optimizer.skill_update_mode', 'cfg.yaml'],
          ['optimizer.min_learning_rate', 'cfg.yaml'],
          ['train.batch_size', 'cfg.yaml'],
          ['env.split_ratio', 'cfg.yaml'],
        ],
      );
      const err = problemsToError(r.problems);
      assert.equal(
        err.message,
        'cfg.yaml (optimizer.skill_update_mode): unknown skill_update_mode "nope" (and 3 more problems). Fix: use one of patch, rewrite_from_suggestions, full_rewrite_minibatch (also accepted: edits, rewrite, suggestions, rewrite_suggestions, full_rewrite, minibatch_full_rewrite, skill_rewrite_minibatch)',
      );
    });

    it('uses the locate callback for lines', () => {
      const r = validateConfigObject(
        { gradient: { merge_batch_size: 1 } },
        {
          locate: (p) =>
            p.join('.') === 'gradient.merge_batch_size' ? { file: 'x.yaml', line: 9 } : undefined,
        },
      );
      assert.equal(r.ok, false);
      assert.deepEqual(r.problems[0], {
        key: 'gradient.merge_batch_size',
        problem: 'must be an integer ≥ 2, got 1',
        fix: 'set gradient.merge_batch_size to an integer ≥ 2',
        file: 'x.yaml',
        line: 9,
      });
    });

    it('rejects a non-mapping config', () => {
      const r = validateConfigObject(['train']);
      assert.equal(r.ok, false);
      assert.match(r.problems[0].problem, /must be a mapping of sections/);
    });

    it('parses an empty object to the defaults', () => {
      const r = validateConfigObject({});
      assert.ok(r.ok);
      assert.deepEqual(r.config, configSchema.parse({}));
      assert.deepEqual(r.warnings, []);
    });
  });

  describe('alias normalisation', () => {
    const modes: Array<[string, string]> = [
      ['patch', 'patch'],
      ['edits', 'patch'],
      ['rewrite', 'rewrite_from_suggestions'],
      ['rewrite_from_suggestions', 'rewrite_from_suggestions'],
      ['suggestions', 'rewrite_from_suggestions'],
      ['rewrite_suggestions', 'rewrite_from_suggestions'],
      ['full_rewrite', 'full_rewrite_minibatch'],
      ['full_rewrite_minibatch', 'full_rewrite_minibatch'],
      ['minibatch_full_rewrite', 'full_rewrite_minibatch'],
      ['Skill_Rewrite_Minibatch', 'full_rewrite_minibatch'],
    ];
    for (const [given, canonical] of modes) {
      it(`skill_update_mode ${given} → ${canonical}`, () => {
        const r = validateConfigObject({ optimizer: { skill_update_mode: given } });
        assert.ok(r.ok);
        assert.equal(r.config.optimizer.skill_update_mode, canonical);
      });
    }

    it('maps every lr_control_mode alias', () => {
      const table: Record<string, string> = {
        fixed: 'fixed',
        manual: 'fixed',
        scheduler: 'fixed',
        scheduled: 'fixed',
        autonomous: 'autonomous',
        auto: 'autonomous',
        optimizer: 'autonomous',
        none: 'none',
        off: 'none',
        no_lr: 'none',
      };
      for (const [given, canonical] of Object.entries(table)) {
        const r = validateConfigObject({ optimizer: { lr_control_mode: given } });
        assert.ok(r.ok, given);
        assert.equal(r.config.optimizer.lr_control_mode, canonical, given);
      }
    });

    it('maps every longitudinal_pair_policy alias', () => {
      const table: Record<string, string> = {
        mixed: 'mixed',
        default: 'mixed',
        random: 'mixed',
        all: 'mixed',
        changed: 'changed',
        change: 'changed',
        delta: 'changed',
        '10_01': 'changed',
        '01_10': 'changed',
        unchanged: 'unchanged',
        stable: 'unchanged',
        same: 'unchanged',
        '00_11': 'unchanged',
      };
      for (const [given, canonical] of Object.entries(table)) {
        const r = validateConfigObject({ optimizer: { longitudinal_pair_policy: given } });
        assert.ok(r.ok, given);
        assert.equal(r.config.optimizer.longitudinal_pair_policy, canonical, given);
      }
    });

    it('forces lr_control_mode none in full-rewrite mode, warning only when it was set', () => {
      const quiet = validateConfigObject({ optimizer: { skill_update_mode: 'full_rewrite' } });
      assert.ok(quiet.ok);
      assert.equal(quiet.config.optimizer.lr_control_mode, 'none');
      assert.deepEqual(quiet.warnings, []);
      const loud = validateConfigObject({
        optimizer: { skill_update_mode: 'full_rewrite', lr_control_mode: 'auto' },
      });
      assert.ok(loud.ok);
      assert.equal(loud.config.optimizer.lr_control_mode, 'none');
      assert.equal(loud.warnings.length, 1);
      assert.equal(loud.warnings[0].key, 'optimizer.lr_control_mode');
    });

    it('says so when an appendix option is set while skill-aware reflection is off', () => {
      const reference = validateConfigObject({
        optimizer: { skill_aware_appendix_source: 'both', skill_aware_consolidate_threshold: 0 },
      });
      assert.ok(reference.ok);
      assert.deepEqual(reference.warnings, []);
      const off = validateConfigObject({
        optimizer: { skill_aware_appendix_source: 'failure_only', skill_aware_consolidate_threshold: 5 },
      });
      assert.ok(off.ok);
      assert.deepEqual(
        off.warnings.map((w) => w.key),
        ['optimizer.skill_aware_appendix_source', 'optimizer.skill_aware_consolidate_threshold'],
      );
      assert.match(off.warnings[0].message, /use_skill_aware_reflection is false/);
      const on = validateConfigObject({
        optimizer: { use_skill_aware_reflection: true, skill_aware_consolidate_threshold: 5 },
      });
      assert.ok(on.ok);
      assert.deepEqual(on.warnings, []);
    });

    it('says the edit-budget keys have no effect in full_rewrite_minibatch (no edit budget), the defaults nothing', () => {
      const reference = validateConfigObject({
        optimizer: {
          skill_update_mode: 'full_rewrite_minibatch',
          lr_control_mode: 'none',
          learning_rate: 4,
          min_learning_rate: 2,
          lr_scheduler: 'cosine',
        },
      });
      assert.ok(reference.ok);
      assert.deepEqual(reference.warnings, []);
      const set = validateConfigObject({
        optimizer: {
          skill_update_mode: 'full_rewrite',
          lr_control_mode: 'none',
          learning_rate: 7,
          lr_scheduler: 'linear',
        },
      });
      assert.ok(set.ok);
      assert.deepEqual(
        set.warnings.map((w) => [w.key, w.message]),
        [
          [
            'optimizer.learning_rate',
            'optimizer.learning_rate, optimizer.lr_scheduler: full_rewrite_minibatch has no edit budget (each step keeps one whole rewritten skill), so they have no effect; remove them or use patch or rewrite_from_suggestions',
          ],
        ],
      );
    });

    it('says a key set while the feature that reads it is off has no effect, the defaults nothing', () => {
      const keysOf = (config: Record<string, unknown>): string[] => {
        const r = validateConfigObject(config);
        assert.ok(r.ok);
        return r.warnings.map((w) => `${w.key}: ${w.message}`);
      };
      assert.deepEqual(
        keysOf({
          optimizer: {
            use_slow_update: false,
            use_meta_skill: false,
            slow_update_samples: 20,
            longitudinal_pair_policy: 'mixed',
          },
          evaluation: {
            use_semantic_density: false,
            semantic_density_weight: 0.05,
            gate_metric: 'hard',
            gate_mixed_weight: 0.5,
          },
        }),
        [],
      );
      assert.deepEqual(
        keysOf({
          optimizer: {
            use_slow_update: false,
            use_meta_skill: false,
            slow_update_samples: 5,
            slow_update_gate_with_selection: false,
            longitudinal_pair_policy: 'changed',
          },
          evaluation: { semantic_density_weight: 0.2, leading_words: ['always'], gate_mixed_weight: 0.9 },
        }),
        [
          'optimizer.slow_update_samples: optimizer.slow_update_samples, optimizer.longitudinal_pair_policy have no effect while optimizer.use_slow_update and optimizer.use_meta_skill are false; turn one on or remove them',
          'optimizer.slow_update_gate_with_selection: optimizer.slow_update_gate_with_selection has no effect while optimizer.use_slow_update is false; turn it on or remove it',
          'evaluation.semantic_density_weight: evaluation.semantic_density_weight, evaluation.leading_words have no effect while evaluation.use_semantic_density is false; turn it on or remove them',
          'evaluation.gate_mixed_weight: evaluation.gate_mixed_weight has no effect while evaluation.gate_metric is hard (it weighs hard and soft for gate_metric: mixed); set gate_metric: mixed or remove it',
        ],
      );
      // Patch mode makes no rewrite call, so the rewrite's reply cap is idle (the reference reads past it).
      assert.deepEqual(keysOf({ model: { rewrite_max_completion_tokens: 1000 } }), [
        "model.rewrite_max_completion_tokens: model.rewrite_max_completion_tokens has no effect while optimizer.skill_update_mode is patch (it caps the rewrite modes' replies); set skill_update_mode: rewrite_from_suggestions or full_rewrite_minibatch, or remove it",
      ]);
      assert.deepEqual(
        keysOf({
          model: { rewrite_max_completion_tokens: 1000 },
          optimizer: { skill_update_mode: 'rewrite_from_suggestions' },
        }),
        [],
      );
      // use_gate: false force-accepts steps, yet the slow update's own gate still reads the gate's keys.
      assert.deepEqual(
        keysOf({ evaluation: { use_gate: false, gate_test: 'paired', max_item_regressions: 1 } }),
        [
          "evaluation.gate_test: evaluation.gate_test, evaluation.max_item_regressions act only on the slow update's gate (optimizer.slow_update_gate_with_selection) while evaluation.use_gate is false (steps and the meta reflect are force-accepted); set use_gate: true or remove them",
        ],
      );
      assert.deepEqual(
        keysOf({
          optimizer: { slow_update_gate_with_selection: false },
          evaluation: { use_gate: false, max_item_regressions: 0 },
        }),
        [
          'evaluation.max_item_regressions: evaluation.max_item_regressions has no effect while evaluation.use_gate is false (steps and the meta reflect are force-accepted); set use_gate: true or remove it',
        ],
      );
      assert.deepEqual(keysOf({ evaluation: { gate_test: 'paired', max_item_regressions: 1 } }), []);
      // Meta-skill on: the pairs are sampled for it, so their keys act.
      assert.deepEqual(
        keysOf({ optimizer: { use_slow_update: false, use_meta_skill: true, slow_update_samples: 5 } }),
        [],
      );
    });

    it('fills azure_openai_* from the legacy azure_* names when blank', () => {
      const r = validateConfigObject({
        model: { azure_endpoint: 'https://legacy/', azure_api_key: 'k', azure_openai_api_key: 'explicit' },
      });
      assert.ok(r.ok);
      assert.equal(r.config.model.azure_openai_endpoint, 'https://legacy/');
      assert.equal(r.config.model.azure_openai_api_key, 'explicit');
    });
  });

  describe('limits.max_minutes', () => {
    it('is read as max_wall_time_s in seconds with a one-line notice, from a file and from --cfg-options', () => {
      const r = validateConfigObject({ limits: { max_minutes: 5 } });
      assert.ok(r.ok);
      assert.equal(r.config.limits.max_wall_time_s, 300);
      assert.equal('max_minutes' in r.config.limits, false);
      assert.deepEqual(
        r.warnings.map((w) => [w.key, w.message]),
        [['limits.max_minutes', 'limits.max_minutes: 5 is read as limits.max_wall_time_s: 300; rename it']],
      );
      const dir = tempDir();
      try {
        const file = write(dir.dir, 'c.yaml', 'train:\n  num_epochs: 1\n');
        const loaded = loadConfig(file, { overrides: ['limits.max_minutes=0.5'] });
        assert.equal(loaded.config.limits.max_wall_time_s, 30);
        assert.match(loaded.warnings.map((w) => w.message).join('\n'), /max_minutes: 0\.5 is read as/);
      } finally {
        dir.cleanup();
      }
    });

    it('is refused beside max_wall_time_s, and when it is not a number', () => {
      const both = validateConfigObject({ limits: { max_minutes: 5, max_wall_time_s: 60 } });
      assert.equal(both.ok, false);
      assert.match(
        problemsToError(both.problems).message,
        /max_minutes and limits\.max_wall_time_s both set/,
      );
      const text = validateConfigObject({ limits: { max_minutes: 'soon' } });
      assert.equal(text.ok, false);
      assert.match(problemsToError(text.problems).message, /max_minutes must be a number/);
    });
  });
});
