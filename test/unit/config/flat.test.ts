import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  FLAT_TO_PATH,
  FLATTEN_MAP,
  redactOverride,
  redactSecrets,
  toFlatConfig,
} from '../../../src/engine/config/flat';
import { loadConfig } from '../../../src/engine/config/load';
import { defaultConfig } from '../../../src/engine/config/schema';
import { PYTHON_RUN_CONFIG, tempDir, write } from './helpers';

const reference = JSON.parse(fs.readFileSync(PYTHON_RUN_CONFIG, 'utf8')) as Record<string, unknown>;
const derived = { train_size: 40, steps_per_epoch: 1, batches_per_epoch: 1, samples_per_epoch: 40 };

describe('config/flat', () => {
  describe('flat round trip of the reference config.json', () => {
    it('loads the flat file and writes back the same value for every key', () => {
      const { config, warnings } = loadConfig(PYTHON_RUN_CONFIG);
      // The only remark is the skill file, which does not exist on this machine.
      assert.deepEqual(
        warnings.map((w) => w.key),
        ['env.skill_init'],
      );
      const flat = toFlatConfig(config, derived);
      for (const [key, value] of Object.entries(reference)) {
        if (key === 'skill_init') continue;
        assert.deepEqual(flat[key], value, key);
      }
      // Relative paths are resolved against the folder of the file that set them.
      assert.equal(flat.skill_init, path.join(path.dirname(PYTHON_RUN_CONFIG), String(reference.skill_init)));
    });

    it('keeps the reference key order, with derived fields last', () => {
      const { config } = loadConfig(PYTHON_RUN_CONFIG);
      const keys = Object.keys(toFlatConfig(config, derived));
      const referenceMapped = Object.keys(reference).filter((k) => FLAT_TO_PATH.has(k));
      assert.deepEqual(
        keys.filter((k) => referenceMapped.includes(k)),
        referenceMapped,
      );
      assert.deepEqual(keys.slice(-3), ['steps_per_epoch', 'batches_per_epoch', 'samples_per_epoch']);
    });

    it('maps the structured sections to the reference flat names', () => {
      const { config } = loadConfig(PYTHON_RUN_CONFIG);
      assert.equal(config.model.backend, 'openai_compatible');
      assert.equal(config.model.optimizer, 'mock-optimizer');
      assert.equal(config.optimizer.learning_rate, 4);
      assert.equal(config.optimizer.min_learning_rate, 2);
      assert.equal(config.train.num_epochs, 2);
      assert.equal(config.train.train_size, 40);
      assert.equal(config.env.name, 'searchqa');
      assert.equal(config.env.split_mode, 'split_dir');
      assert.equal(config.env.workers, 40);
      assert.equal(config.env.out_root, '/home/alice/experiments/outputs/searchqa_mini');
      assert.equal('steps_per_epoch' in config.env, false);
      assert.equal('samples_per_epoch' in config.env, false);
    });
  });

  describe('toFlatConfig', () => {
    it('writes our keys under their own names and the derived train_size', () => {
      const config = defaultConfig();
      config.limits.provider_concurrency = { openai: 3 };
      config.prices = { m: { input_per_mtok: 1, output_per_mtok: 2 } };
      config.env.data_root = 'corpus';
      const flat = toFlatConfig(config, {
        ...derived,
        train_size: 123,
        resolved_qwen_thinking_modes: { target: 'enabled' },
      });
      assert.equal(flat.train_size, 123);
      assert.equal(flat.edit_budget, 4);
      assert.equal(flat.min_edit_budget, 2);
      assert.equal(flat.model_backend, 'azure_openai');
      assert.equal(flat.env, '');
      assert.equal(flat.anchor_mode, 'strict');
      assert.equal(flat.optimizer_concurrency, 16);
      assert.deepEqual(flat.provider_concurrency, { openai: 3 });
      assert.equal(flat.cache_enabled, true);
      assert.equal(flat.cache_dir, '');
      assert.equal(flat.review_mode, 'auto');
      assert.deepEqual(flat.prices, { m: { input_per_mtok: 1, output_per_mtok: 2 } });
      assert.equal(flat.data_root, 'corpus');
      assert.equal(flat.scorer, 'normalized_exact');
      assert.equal('leading_words' in flat, false);
      assert.equal('azure_endpoint' in flat, false);
      assert.deepEqual(Object.keys(flat).slice(-4), [
        'steps_per_epoch',
        'batches_per_epoch',
        'samples_per_epoch',
        'resolved_qwen_thinking_modes',
      ]);
    });

    it('round-trips our own keys through a flat file', () => {
      const { dir, cleanup } = tempDir();
      try {
        const config = defaultConfig();
        config.limits.max_dollars = 12.5;
        config.cache.all_roles = true;
        config.review.mode = 'gate-then-human';
        config.optimizer.anchor_mode = 'reference';
        config.model.target_command = 'run {prompt}';
        config.env.scorer = { type: 'contains', case_sensitive: false };
        const file = write(dir, 'config.json', JSON.stringify(toFlatConfig(config, derived), null, 2));
        const back = loadConfig(file).config;
        assert.equal(back.limits.max_dollars, 12.5);
        assert.equal(back.cache.all_roles, true);
        assert.equal(back.review.mode, 'gate-then-human');
        assert.equal(back.optimizer.anchor_mode, 'reference');
        assert.equal(back.model.target_command, 'run {prompt}');
        assert.deepEqual(back.env.scorer, { type: 'contains', case_sensitive: false });
        assert.deepEqual(back, { ...config, train: { ...config.train, train_size: 40 } });
      } finally {
        cleanup();
      }
    });

    it('has one flat name per structured key', () => {
      const names = FLATTEN_MAP.map(([, name]) => name);
      assert.equal(new Set(names).size, names.length);
    });
  });

  describe('redactOverride', () => {
    it('masks the value of a --cfg-options secret, as config.json does, and nothing else', () => {
      assert.equal(
        redactOverride('model.azure_openai_api_key=fake-verysecret-0123456789'),
        'model.azure_openai_api_key=fake...6789',
      );
      assert.equal(
        redactOverride('model.target_max_completion_tokens=512'),
        'model.target_max_completion_tokens=512',
      );
      assert.equal(redactOverride('train.batch_size=8'), 'train.batch_size=8');
      assert.equal(redactOverride('model.openai_api_key='), 'model.openai_api_key=');
      assert.equal(redactOverride('no-equals-sign'), 'no-equals-sign');
    });

    it('leaves model.prompt_cache_key alone: a switch (auto, on, off), not a credential', () => {
      // A printed resume command with it masked failed when pasted ("must be one of: auto, on, off").
      assert.equal(redactOverride('model.prompt_cache_key=on'), 'model.prompt_cache_key=on');
      assert.deepEqual(
        redactSecrets({ prompt_cache_key: 'off', openai_api_key: 'fake-proj-ABCDEFGHIJKLMNOPQRST' }),
        {
          prompt_cache_key: 'off',
          openai_api_key: 'fake...QRST',
        },
      );
    });
  });

  describe('redactSecrets', () => {
    it('masks secrets among the reference config.json keys and leaves the rest alone', () => {
      const input: Record<string, unknown> = {
        ...reference,
        azure_openai_api_key: 'azkey-0123456789-abcd',
        minimax_api_key: 'short',
        optimizer_openai_compatible_api_key: 'fake-proj-ABCDEFGHIJKLMNOP',
        target_azure_openai_api_key: '',
      };
      const out = redactSecrets(input);
      // A short key shows nothing: four and four characters would give most of it away.
      assert.equal(out.azure_openai_api_key, '***');
      assert.equal(out.minimax_api_key, '***');
      assert.equal(out.optimizer_openai_compatible_api_key, 'fake...MNOP');
      assert.equal(out.target_azure_openai_api_key, '');
      assert.equal(out.max_completion_tokens, 16384);
      assert.equal(out.claude_code_exec_max_thinking_tokens, 16384);
      assert.equal(out.rewrite_max_completion_tokens, 64000);
      const untouched = Object.keys(reference).filter((k) => !/key|token|secret/i.test(k));
      for (const k of untouched) assert.deepEqual(out[k], reference[k], k);
      assert.equal(input.azure_openai_api_key, 'azkey-0123456789-abcd', 'input not modified');
    });

    it('keeps a token count written as text (minimax_max_tokens: "8000"), not a token', () => {
      const out = redactSecrets({
        minimax_max_tokens: '8000',
        qwen_chat_max_tokens: ' 4096 ',
        auth_token: '123456789',
        max_tokens: 'abcdefghij',
      });
      assert.deepEqual(out, {
        minimax_max_tokens: '8000',
        qwen_chat_max_tokens: ' 4096 ',
        auth_token: '***',
        max_tokens: '***',
      });
    });

    it('recurses through nested objects and lists', () => {
      const out = redactSecrets({
        env: { judge: { API_KEY: '12345678', auth_token: '123456789' } },
        hooks: [{ client_secret: 'abcdefghijklmnopqrstuvwxyz' }, 'plain'],
        tokens: { used: 5 },
      });
      assert.deepEqual(out, {
        env: { judge: { API_KEY: '***', auth_token: '***' } },
        hooks: [{ client_secret: 'abcd...wxyz' }, 'plain'],
        tokens: { used: 5 },
      });
    });
  });
});
