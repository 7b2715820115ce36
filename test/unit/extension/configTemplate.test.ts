import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/engine/config/load';
import { prepareRun } from '../../../src/engine/run';
import { agentTargetOptions } from '../../../src/extension/setup/agentTargets';
import {
  renderConfig,
  suggestName,
  yamlScalar,
  type SetupAnswers,
} from '../../../src/extension/setup/configTemplate';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');

describe('extension setup: the skillopt.yaml the guided setup writes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-setup-'));
    copyFileSync(join(example, 'SKILL.md'), join(dir, 'SKILL.md'));
    copyFileSync(join(example, 'tasks.jsonl'), join(dir, 'tasks.jsonl'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const sim: SetupAnswers = {
    name: 'house-style',
    skill: 'SKILL.md',
    data: { mode: 'ratio', path: 'tasks.jsonl' },
    scorer: 'exact',
    target: { backend: 'sim', model: 'sim-target' },
    optimizer: { backend: 'sim', model: 'sim-optimizer' },
    epochs: 2,
  };

  it('loads with the engine and prepares a sim run with a call estimate', () => {
    const path = join(dir, 'skillopt.yaml');
    writeFileSync(path, renderConfig(sim));
    const loaded = loadConfig(path);
    assert.deepEqual(loaded.warnings, []);
    const c = loaded.config;
    assert.equal(c.model.target_backend, 'sim');
    assert.equal(c.model.optimizer, 'sim-optimizer');
    assert.equal(c.train.num_epochs, 2);
    assert.equal(c.env.split_ratio, '4:3:3');
    assert.equal(c.env.scorer, 'exact');
    assert.equal(c.env.skill_init, join(dir, 'SKILL.md'));
    const prepared = prepareRun({ configPath: path, dryRun: true });
    const tasks = readFileSync(join(dir, 'tasks.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim()).length;
    const { train, val, test } = {
      train: prepared.splits.train.length,
      val: prepared.splits.val.length,
      test: prepared.splits.test.size,
    };
    assert.equal(train + val + test, tasks);
    // 4:3:3 shares, batch_size 8, two epochs.
    assert.ok(
      Math.abs(train - (tasks * 4) / 10) < 1 && Math.abs(val - (tasks * 3) / 10) < 1,
      `${train}/${val}/${test}`,
    );
    assert.equal(prepared.totalSteps, Math.ceil(train / 8) * 2);
    assert.ok(prepared.estimate.total > prepared.totalSteps);
  });

  it('writes OpenAI-compatible, Azure and vscode-lm choices the engine accepts', () => {
    const path = join(dir, 'skillopt.yaml');
    const text = renderConfig({
      ...sim,
      data: { mode: 'ratio', path: 'tasks.jsonl' },
      target: { backend: 'openai-compatible', model: 'llama3.1:8b', baseUrl: 'http://localhost:11434/v1' },
      optimizer: { backend: 'vscode-lm', model: 'copilot/gpt-4o' },
      azureEndpoint: 'https://example.openai.azure.com',
    });
    writeFileSync(path, text);
    const c = loadConfig(path).config;
    assert.equal(c.model.target_backend, 'openai');
    assert.equal(c.model.target, 'llama3.1:8b');
    assert.equal(c.model.target_base_url, 'http://localhost:11434/v1');
    assert.equal(c.model.optimizer_backend, 'vscode-lm');
    assert.equal(c.model.optimizer, 'copilot/gpt-4o');
    assert.equal(c.model.azure_openai_endpoint, 'https://example.openai.azure.com');
  });

  it('writes an agent CLI target as the CLI reads it: the preset name, and an empty model for the CLI default', () => {
    const path = join(dir, 'skillopt.yaml');
    for (const [backend, model] of [
      ['claude_code_exec', ''],
      ['codex_exec', 'gpt-5.5'],
      ['copilot_exec', 'claude-sonnet-4.5'],
    ] as const) {
      writeFileSync(path, renderConfig({ ...sim, target: { backend, model } }));
      const loaded = loadConfig(path);
      assert.deepEqual(loaded.warnings, []);
      assert.equal(loaded.config.model.target_backend, backend);
      assert.equal(loaded.config.model.target, model);
    }
  });

  it('offers each agent CLI with its version when installed, and how to install it when not', () => {
    const status = {
      install: 'npm install -g @openai/codex',
      pathKey: 'model.codex_exec_path',
      pathEnv: 'CODEX_EXEC_PATH',
    };
    const [installed, missing] = agentTargetOptions([
      {
        agent: 'claude',
        backend: 'claude_code_exec',
        label: 'Claude Code',
        program: 'claude',
        path: '/bin/claude',
        version: '2.1.3',
        install: 'npm install -g @anthropic-ai/claude-code',
        pathKey: 'model.claude_code_exec_path',
        pathEnv: 'CLAUDE_CODE_EXEC_PATH',
      },
      { agent: 'codex', backend: 'codex_exec', label: 'Codex', program: 'codex', ...status },
    ]);
    assert.equal(installed.installed, true);
    assert.equal(installed.description, 'installed · 2.1.3');
    assert.match(installed.detail, /^\/bin\/claude · .*\.claude\/skills\/$/);
    assert.equal(missing.installed, false);
    assert.equal(missing.description, 'not installed');
    assert.match(missing.detail, /npm install -g @openai\/codex \(or set CODEX_EXEC_PATH to its path\)/);
    assert.match(missing.missingMessage, /model\.codex_exec_path in skillopt\.yaml/);
  });

  it('writes a split folder instead of a task file', () => {
    const text = renderConfig({ ...sim, data: { mode: 'split_dir', dir: 'data/splits' } });
    assert.match(text, /^ {2}split_mode: split_dir$/m);
    assert.match(text, /^ {2}split_dir: data\/splits$/m);
    assert.doesNotMatch(text, /data_path/);
  });

  it('quotes YAML scalars that would change meaning', () => {
    assert.equal(yamlScalar('gpt-4.1'), 'gpt-4.1');
    assert.equal(yamlScalar('llama3.1:8b'), '"llama3.1:8b"');
    assert.equal(yamlScalar('yes'), '"yes"');
    assert.equal(yamlScalar('my tasks.jsonl'), '"my tasks.jsonl"');
    assert.equal(yamlScalar('123'), '"123"');
    assert.equal(suggestName('My Skills!'), 'my-skills');
    assert.equal(suggestName('***'), 'skill');
  });
});
