import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../../src/engine/config/load';
import { parse as parseYaml } from 'yaml';
import { formatConfigWarning } from '../../../src/engine/config/schema/problems';
import { validateConfigObject } from '../../../src/engine/config/schema/validate';
import { expectConfigError, FIXTURES, lineOf, tempDir, write } from './helpers';

describe('config/load', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  describe('_base_ inheritance', () => {
    const child = path.join(FIXTURES, 'inherit/child.yaml');

    it('merges two levels of bases, nested mappings key by key', () => {
      const { config, warnings, files, configDir } = loadConfig(child);
      assert.deepEqual(warnings, []);
      assert.equal(config.model.backend, 'azure_openai'); // grand
      assert.equal(config.model.optimizer, 'parent-optimizer'); // parent over grand
      assert.equal(config.model.target, 'child-target'); // child over grand
      assert.deepEqual(
        { ...config.train },
        { num_epochs: 3, train_size: 0, batch_size: 8, accumulation: 1, seed: 7 },
      );
      assert.deepEqual(config.limits.provider_concurrency, { openai: 4, anthropic: 6 });
      assert.deepEqual(config.env.scorer, { type: 'contains', case_sensitive: true });
      assert.equal(config.env.name, 'grand-env');
      assert.deepEqual(
        files,
        ['child.yaml', 'parent.yaml', 'grand.yaml'].map((f) => path.join(FIXTURES, 'inherit', f)),
      );
      assert.equal(configDir, path.join(FIXTURES, 'inherit'));
    });

    it('replaces lists instead of merging them', () => {
      assert.deepEqual(loadConfig(child).config.evaluation.leading_words, ['only']);
      assert.deepEqual(
        loadConfig(path.join(FIXTURES, 'inherit/parent.yaml')).config.evaluation.leading_words,
        ['first', 'second', 'third'],
      );
    });

    it('remembers which file and line set each key', () => {
      const { locate } = loadConfig(child);
      const grand = path.join(FIXTURES, 'inherit/grand.yaml');
      const grandText = fs.readFileSync(grand, 'utf8');
      assert.deepEqual(locate('train.num_epochs'), {
        file: grand,
        line: lineOf(grandText, 'num_epochs'),
        dir: path.dirname(grand),
      });
      assert.equal(locate('train.batch_size')?.line, lineOf(fs.readFileSync(child, 'utf8'), 'batch_size'));
      assert.equal(
        locate(['limits', 'provider_concurrency', 'anthropic'])?.file,
        path.join(FIXTURES, 'inherit/parent.yaml'),
      );
      assert.equal(locate('optimizer.learning_rate'), undefined);
    });

    it('reports a value error at the base file line that set it', () => {
      const base = write(dir, 'base.yaml', 'train:\n  seed: 1\n  accumulation: 0\n');
      const top = write(dir, 'top.yaml', '_base_: base.yaml\ntrain:\n  batch_size: 4\n');
      expectConfigError(() => loadConfig(top), {
        file: path.join(dir, 'base.yaml'),
        line: 3,
        key: 'train.accumulation',
        includes: ['got 0'],
      });
      assert.ok(fs.existsSync(base));
    });

    it('names base files relative to the config path as the user wrote it', () => {
      write(dir, 'configs/_base_/default.yaml', 'gradient:\n  merge_batch_size: 1\n');
      write(dir, 'configs/run/default.yaml', '_base_: ../_base_/default.yaml\n');
      expectConfigError(() => loadConfig('configs/run/default.yaml', { cwd: dir }), {
        file: 'configs/_base_/default.yaml',
        line: 2,
        key: 'gradient.merge_batch_size',
      });
    });

    it('accepts a list of bases, later ones winning', () => {
      write(dir, 'a.yaml', 'train:\n  seed: 1\n  batch_size: 5\n');
      write(dir, 'b.yaml', 'train:\n  seed: 2\n');
      const top = write(dir, 'top.yaml', '_base_: [a.yaml, b.yaml]\ntrain:\n  num_epochs: 9\n');
      const { config } = loadConfig(top);
      assert.deepEqual([config.train.seed, config.train.batch_size, config.train.num_epochs], [2, 5, 9]);
    });

    it('detects a cycle and names it', () => {
      const a = path.join(FIXTURES, 'cycle/a.yaml');
      const b = path.join(FIXTURES, 'cycle/b.yaml');
      expectConfigError(() => loadConfig(a), {
        file: b,
        line: 1,
        key: '_base_',
        includes: [`_base_ inheritance loops: ${a} → ${b} → ${a}`],
      });
    });

    it('fails on a missing base file at the _base_ line', () => {
      const top = write(dir, 'top.yaml', '# comment\n_base_: ../nowhere/base.yaml\n');
      expectConfigError(() => loadConfig(top), {
        file: top,
        line: 2,
        key: '_base_',
        includes: ['base config not found', 'nowhere/base.yaml'],
      });
    });

    it('fails on a missing config file', () => {
      expectConfigError(() => loadConfig('missing.yaml', { cwd: dir }), {
        file: 'missing.yaml',
        includes: ['config file not found'],
      });
    });
  });

  describe('YAML problems', () => {
    it('reports unparsable YAML with line and column', () => {
      const file = path.join(FIXTURES, 'broken.yaml');
      expectConfigError(() => loadConfig(file), { file, line: 4, includes: ['not valid YAML', 'column 1'] });
    });

    it('reports a duplicate key with its line', () => {
      const file = write(dir, 'dup.yaml', 'train:\n  seed: 1\n  seed: 2\n');
      expectConfigError(() => loadConfig(file), { file, line: 3, includes: ['not valid YAML', 'column'] });
    });

    it('rejects a top level that is not a mapping', () => {
      const file = write(dir, 'list.yaml', '- train\n- env\n');
      expectConfigError(() => loadConfig(file), { file, line: 1, includes: ['mapping of sections'] });
    });

    it('treats an empty file and empty sections as defaults', () => {
      const empty = write(dir, 'empty.yaml', '# nothing\n');
      assert.equal(loadConfig(empty).config.train.batch_size, 40);
      const sections = write(dir, 'sections.yaml', 'train:\nmodel:\n');
      assert.equal(loadConfig(sections).config.model.optimizer, 'gpt-5.5');
    });
  });

  describe('a SkillOpt user config (reference base + searchqa)', () => {
    const file = path.join(FIXTURES, 'skillopt/searchqa/default.yaml');

    it('loads without warnings and keeps every reference value', () => {
      // Reference users run from their repo root, where data/ and skillopt/ live.
      write(dir, 'data/searchqa_split/train/items.json', '[]');
      write(dir, 'skillopt/envs/searchqa/skills/initial.md', '# skill\n');
      const { config, warnings } = loadConfig(file, { cwd: dir });
      assert.deepEqual(warnings, []);
      assert.equal(config.model.backend, 'azure_openai');
      assert.equal(config.model.optimizer, 'gpt-5.5');
      assert.equal(config.model.reasoning_effort, 'high');
      assert.equal(config.model.codex_exec_path, '/opt/codex/bin/codex');
      assert.equal(config.model.codex_exec_sandbox, 'read-only');
      assert.equal(config.model.codex_exec_use_sdk, null);
      assert.equal(config.model.claude_code_exec_max_thinking_tokens, 16384);
      assert.equal(config.model.minimax_region, 'global_en');
      assert.equal(config.model.minimax_temperature, '0.7');
      assert.equal(config.model.azure_openai_endpoint, 'https://example-resource.openai.azure.com/');
      assert.equal(config.model.target_azure_openai_api_version, '2024-12-01-preview');
      assert.equal(config.model.optimizer_minimax_api_key, '');
      assert.equal(config.train.train_size, 400);
      assert.equal(config.optimizer.lr_scheduler, 'cosine');
      assert.equal(config.evaluation.eval_test, true);
      assert.equal(config.env.name, 'searchqa');
      assert.equal(config.env.split_mode, 'split_dir');
      assert.equal(config.env.workers, 24);
      assert.equal(config.env.split_dir, path.join(dir, 'data/searchqa_split'));
      assert.equal(config.env.skill_init, path.join(dir, 'skillopt/envs/searchqa/skills/initial.md'));
    });

    it('warns (file and line) when the skill file is missing', () => {
      const { warnings, config } = loadConfig(file, { cwd: dir });
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0].key, 'env.skill_init');
      assert.equal(warnings[0].file, file);
      assert.equal(warnings[0].line, lineOf(fs.readFileSync(file, 'utf8'), 'skill_init'));
      // Neither location exists: the config-relative path is kept.
      assert.equal(
        config.env.skill_init,
        path.join(FIXTURES, 'skillopt/searchqa/skillopt/envs/searchqa/skills/initial.md'),
      );
      assert.equal(config.env.split_dir, path.join(FIXTURES, 'skillopt/searchqa/data/searchqa_split'));
    });
  });

  describe('Codex aliases', () => {
    it('lets a child alias override the base canonical key', () => {
      write(
        dir,
        'base.yaml',
        'model:\n  codex_exec_path: /base/codex\n  codex_exec_sandbox: workspace-write\n',
      );
      const top = write(dir, 'top.yaml', '_base_: base.yaml\nmodel:\n  codex_cli_bin: /child/codex\n');
      const { config } = loadConfig(top);
      assert.equal(config.model.codex_exec_path, '/child/codex');
      assert.equal(config.model.codex_exec_sandbox, 'workspace-write');
    });

    it('prefers the canonical key over an alias in the same file, and the first alias over later ones', () => {
      const both = write(dir, 'both.yaml', 'model:\n  codex_exec_path: /canonical\n  codex_path: /alias\n');
      assert.equal(loadConfig(both).config.model.codex_exec_path, '/canonical');
      const two = write(dir, 'two.yaml', 'model:\n  codex_bin: /third\n  codex_path: /first\n');
      assert.equal(loadConfig(two).config.model.codex_exec_path, '/first');
    });
  });

  describe('flat legacy configs', () => {
    it('maps flat names into sections and other keys into env', () => {
      const { config, warnings } = loadConfig(path.join(FIXTURES, 'flat-legacy.yaml'));
      // model_backend is the one-switch choice: both roles follow it, with its notice.
      assert.deepEqual(
        warnings.map((w) => w.key),
        ['model.backend'],
      );
      assert.equal(config.model.optimizer_backend, 'openai_compatible');
      assert.equal(config.env.name, 'searchqa');
      assert.equal(config.model.backend, 'openai_compatible');
      assert.equal(config.model.optimizer, 'flat-optimizer');
      assert.equal(config.model.target, 'flat-target');
      assert.equal(config.model.codex_exec_path, '/usr/bin/codex');
      assert.equal(config.optimizer.learning_rate, 6);
      assert.equal(config.optimizer.min_learning_rate, 3);
      assert.equal(config.optimizer.skill_update_mode, 'rewrite_from_suggestions');
      assert.equal(config.train.batch_size, 20);
      assert.equal(config.train.num_epochs, 2);
      assert.equal(config.evaluation.use_gate, false);
      assert.equal(config.env.max_turns, 1);
      assert.equal(config.env.data_root, 'corpus');
    });

    it('lets a flat child override a structured base and the reverse', () => {
      write(dir, 'structured.yaml', 'train:\n  batch_size: 30\noptimizer:\n  learning_rate: 5\n');
      const flatChild = write(dir, 'flat.yaml', '_base_: structured.yaml\nbatch_size: 12\n');
      const a = loadConfig(flatChild).config;
      assert.deepEqual([a.train.batch_size, a.optimizer.learning_rate], [12, 5]);
      write(dir, 'flatbase.yaml', 'batch_size: 12\nedit_budget: 7\n');
      const structuredChild = write(dir, 'child.yaml', '_base_: flatbase.yaml\ntrain:\n  batch_size: 30\n');
      const b = loadConfig(structuredChild).config;
      assert.deepEqual([b.train.batch_size, b.optimizer.learning_rate], [30, 7]);
    });

    it('prefers the structured key over its flat twin in the same file', () => {
      const file = write(dir, 'mixed.yaml', 'batch_size: 12\ntrain:\n  batch_size: 30\n');
      assert.equal(loadConfig(file).config.train.batch_size, 30);
    });

    it('reports a flat key error at its own line under its structured name', () => {
      const text = 'env: searchqa\nedit_budget: 0\n';
      const file = write(dir, 'flat.yaml', text);
      expectConfigError(() => loadConfig(file), { file, line: 2, key: 'optimizer.learning_rate' });
    });
  });

  describe('unknown keys', () => {
    it('refuses a key it can name a fix for, with file, line and the fix', () => {
      const text = [
        'train:',
        '  batch_sise: 8',
        'optimizer:',
        '  edit_budget: 3',
        'gradient:',
        '  learning_rate: 2',
        'evalution:',
        '  use_gate: false',
        'limits:',
        '  target_concurency: 4',
      ].join('\n');
      const file = write(dir, 'typos.yaml', text + '\n');
      expectConfigError(() => loadConfig(file), {
        file,
        line: 2,
        key: 'train.batch_sise',
        includes: ['would be ignored (and 4 more problems). Fix: did you mean train.batch_size?'],
      });
      // Without loadConfig's flat-name table, edit_budget is just unknown: loadConfig counts it above.
      const result = validateConfigObject(parseYaml(text));
      assert.ok(!result.ok);
      assert.deepEqual(
        result.problems.map((p) => `${p.key}: ${p.problem}. Fix: ${p.fix}`),
        [
          'train.batch_sise: unknown key "batch_sise" in section train would be ignored. Fix: did you mean train.batch_size?',
          'gradient.learning_rate: unknown key "learning_rate" in section gradient would be ignored. Fix: did you mean optimizer.learning_rate?',
          'evalution: unknown section "evalution" would be ignored. Fix: did you mean evaluation?',
          'limits.target_concurency: unknown key "target_concurency" in section limits would be ignored. Fix: did you mean limits.target_concurrency?',
        ],
      );
    });

    it('counts a swap of two neighbouring letters as one typo (trian → train)', () => {
      const result = validateConfigObject(
        parseYaml('trian:\n  num_epochs: 2\noptimizer:\n  lr_schedluer: linear\n'),
      );
      assert.ok(!result.ok);
      assert.deepEqual(
        result.problems.map((p) => p.fix),
        ['did you mean train?', 'did you mean optimizer.lr_scheduler?'],
      );
    });

    it('warns about a key it knows nothing about and goes on', () => {
      const file = write(dir, 'extra.yaml', 'train:\n  batch_size: 8\n  wandb_project: demo\n');
      const { warnings, config } = loadConfig(file);
      assert.deepEqual(warnings.map(formatConfigWarning), [
        `${file}:3 (train.wandb_project): unknown key "wandb_project" in section train (ignored)`,
      ]);
      assert.equal(config.train.batch_size, 8);
    });

    it('refuses an env key nothing reads, naming the key and the env keys', () => {
      const file = write(dir, 'env.yaml', 'env:\n  name: mybench\n  data_root: corpus\n  bogus_key: 1\n');
      const err = expectConfigError(() => loadConfig(file), {
        file,
        line: 4,
        key: 'env.bogus_key',
        includes: ['nothing reads it', 'use one of the env keys: name, skill_init'],
      });
      assert.doesNotMatch(err.message, /did you mean/);
    });

    it('refuses a stray top-level scalar that is no env key, with the env key it resembles', () => {
      const file = write(dir, 'stray.yaml', 'train:\n  seed: 1\nmax_turn: 3\n');
      expectConfigError(() => loadConfig(file), {
        file,
        line: 3,
        key: 'env.max_turn',
        includes: ['did you mean env.max_turns?'],
      });
      // One that is an env key is passed there, with a warning.
      const known = write(dir, 'known.yaml', 'train:\n  seed: 1\nmax_turns: 3\n');
      const { warnings, config } = loadConfig(known);
      assert.equal(config.env.max_turns, 3);
      assert.match(warnings[0].message, /passed to the environment as env\.max_turns/);
    });

    it('accepts the retired max_analyst_rounds with a warning and drops it', () => {
      const file = write(dir, 'retired.yaml', 'gradient:\n  minibatch_size: 4\n  max_analyst_rounds: 3\n');
      const { warnings, config } = loadConfig(file);
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0].line, 3);
      assert.match(warnings[0].message, /retired and is ignored/);
      assert.equal('max_analyst_rounds' in config.gradient, false);
    });

    it('warns that train.steps_per_epoch is derived', () => {
      const file = write(dir, 'spe.yaml', 'train:\n  steps_per_epoch: 3\n');
      const { warnings } = loadConfig(file);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0].message, /always derived/);
    });
  });

  describe('relative paths', () => {
    it('resolves against the directory of the file that set them', () => {
      write(dir, 'base/skills/SKILL.md', '# s\n');
      write(
        dir,
        'base/base.yaml',
        'env:\n  skill_init: skills/SKILL.md\n  data_path: tasks.jsonl\ncache:\n  dir: .cache\n',
      );
      const top = write(dir, 'runs/top.yaml', '_base_: ../base/base.yaml\nenv:\n  out_root: out\n');
      const { config, warnings } = loadConfig(top, { cwd: dir });
      assert.deepEqual(warnings, []);
      assert.equal(config.env.skill_init, path.join(dir, 'base/skills/SKILL.md'));
      assert.equal(config.env.data_path, path.join(dir, 'base/tasks.jsonl'));
      assert.equal(config.env.out_root, path.join(dir, 'runs/out'));
      assert.equal(config.cache.dir, path.join(dir, 'base/.cache'));
      assert.equal(config.env.split_dir, '');
    });

    it('falls back to the cwd-relative path when only that one exists', () => {
      write(dir, 'data/tasks.jsonl', '{}\n');
      write(dir, 'configs/x/prompt.txt', 'sys\n');
      const file = write(
        dir,
        'configs/x/run.yaml',
        'env:\n  data_path: data/tasks.jsonl\n  target_system_prompt: prompt.txt\n',
      );
      const { config } = loadConfig(file, { cwd: dir });
      assert.equal(config.env.data_path, path.join(dir, 'data/tasks.jsonl'));
      assert.equal(config.env.target_system_prompt, path.join(dir, 'configs/x/prompt.txt'));
    });

    it('resolves command-line paths against the cwd and keeps absolute paths', () => {
      const file = write(dir, 'configs/run.yaml', 'env:\n  split_dir: /abs/splits\n');
      const { config } = loadConfig(file, { cwd: dir, overrides: ['env.data_path=tasks.jsonl'] });
      assert.equal(config.env.data_path, path.join(dir, 'tasks.jsonl'));
      assert.equal(config.env.split_dir, '/abs/splits');
    });
  });
});
