import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadConfig } from '../../../src/engine/config/load';
import { BACKEND_SPELLINGS, canonicalBackend } from '../../../src/engine/config/backendChoice';
import { BACKEND_NAMES, resolveBackendName } from '../../../src/engine/llm/backends';
import type { ConfigWarning } from '../../../src/engine/config/schema/problems';
import { expectConfigError, tempDir, write } from './helpers';

describe('config/backendChoice (--backend, model.backend)', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  const load = (yaml: string, legacyArgs: string[] = [], overrides: string[] = []) =>
    loadConfig(write(dir, 'c.yaml', yaml), { legacyArgs, overrides });
  const notices = (w: ConfigWarning[]) => w.filter((x) => x.key === 'model.backend');

  it('--backend claude sets both roles and their default model, with one notice', () => {
    const { config, warnings } = load('model:\n  optimizer_backend: openai_chat\n', ['--backend', 'claude']);
    assert.equal(config.model.optimizer_backend, 'claude_chat');
    assert.equal(config.model.target_backend, 'claude_chat');
    assert.equal(config.model.optimizer, 'claude-sonnet-4-6');
    assert.equal(config.model.target, 'claude-sonnet-4-6');
    const [notice] = notices(warnings);
    assert.match(
      notice.message,
      /model\.backend 'claude' → optimizer_backend claude_chat, target_backend claude_chat, model\.optimizer claude-sonnet-4-6, model\.target claude-sonnet-4-6/,
    );
    assert.equal(notice.file, '--backend');
  });

  it('maps target-only backends as the reference does: optimizer openai_chat, target that backend', () => {
    const cases: Array<[string, string, string]> = [
      ['qwen', 'qwen_chat', 'Qwen/Qwen3.5-4B'],
      ['minimax', 'minimax_chat', 'MiniMax-M3'],
      ['claude_code_exec', 'claude_code_exec', 'claude-sonnet-4-6'],
      ['copilot_exec', 'copilot_exec', ''],
    ];
    for (const [name, target, model] of cases) {
      const { config } = load(`model:\n  backend: ${name}\n`);
      assert.equal(config.model.optimizer_backend, 'openai_chat', name);
      assert.equal(config.model.target_backend, target, name);
      assert.equal(config.model.target, model, name);
      assert.equal(config.model.optimizer, 'gpt-5.5', name);
    }
    // MiniMax takes minimax_model when it is set.
    const { config } = load('model:\n  backend: minimax\n  minimax_model: MiniMax-M2.5\n');
    assert.equal(config.model.target, 'MiniMax-M2.5');
  });

  it('openai_compatible takes its model from (role_)openai_compatible_model, and refuses a second, different name', () => {
    const { config, warnings } = load(
      'model:\n  backend: openai_compatible\n  openai_compatible_model: deepseek-chat\n  target_openai_compatible_model: qwen2.5:7b\n',
    );
    assert.equal(config.model.optimizer, 'deepseek-chat');
    assert.equal(config.model.target, 'qwen2.5:7b');
    assert.match(
      notices(warnings)[0].message,
      /model\.optimizer deepseek-chat \(model\.openai_compatible_model\), model\.target qwen2\.5:7b \(model\.target_openai_compatible_model\)/,
    );
    const yaml =
      'model:\n  backend: openai_compatible\n  target: llama-3.3\n  openai_compatible_model: deepseek-chat\n';
    expectConfigError(() => load(yaml), {
      file: join(dir, 'c.yaml'),
      line: 4,
      key: 'model.openai_compatible_model',
      includes: ["model.target is 'llama-3.3' but model.openai_compatible_model is 'deepseek-chat'"],
    });
  });

  it('keeps roles and models the user chose: set on the command line, or a non-default value', () => {
    const a = load('model:\n  backend: claude\n  target_backend: openai\n  optimizer: claude-opus-4-1\n');
    assert.equal(a.config.model.optimizer_backend, 'claude_chat');
    assert.equal(a.config.model.target_backend, 'openai');
    assert.equal(a.config.model.optimizer, 'claude-opus-4-1');
    assert.equal(a.config.model.target, 'gpt-5.5');
    const b = load('', ['--backend', 'qwen', '--target_backend', 'openai_chat'], ['model.target=gpt-5.5']);
    assert.equal(b.config.model.target_backend, 'openai_chat');
    assert.equal(b.config.model.target, 'gpt-5.5');
  });

  it('leaves the defaults alone without a notice, and says so when a --backend changed nothing', () => {
    const quiet = load('model:\n  backend: azure_openai\n');
    assert.equal(quiet.config.model.optimizer_backend, 'openai_chat');
    assert.deepEqual(notices(quiet.warnings), []);
    const loud = load('model:\n  optimizer_backend: openai\n  target_backend: openai\n', [
      '--backend',
      'claude',
    ]);
    assert.match(notices(loud.warnings)[0].message, /no change \(both roles and models were set\)/);
  });

  it("reads our 'openai' as the OpenAI API and says how the reference differs", () => {
    const { config, warnings } = load('model:\n  backend: openai\n');
    assert.equal(config.model.optimizer_backend, 'openai');
    assert.equal(config.model.target_backend, 'openai');
    assert.match(notices(warnings)[0].message, /reads 'openai' as codex/);
  });

  it('gives an empty model name the backend default, as the reference clients do', () => {
    const { config } = load('model:\n  target_backend: anthropic\n  target: ""\n  optimizer_backend: sim\n');
    assert.equal(config.model.target, 'claude-sonnet-4-6');
    assert.equal(config.model.optimizer, 'gpt-5.5');
  });

  it('refuses the Codex CLI as optimizer and an unknown backend, naming the fix', () => {
    const file = write(dir, 'c.yaml', 'model:\n  backend: codex\n');
    expectConfigError(() => loadConfig(file), {
      file,
      line: 2,
      key: 'model.backend',
      includes: ['cannot be the optimizer', 'model.optimizer_backend'],
    });
    const bad = write(dir, 'b.yaml', 'model:\n  backend: cluade\n');
    expectConfigError(() => loadConfig(bad), {
      file: bad,
      line: 2,
      key: 'model.backend',
      includes: ['did you mean claude?'],
    });
  });

  it('knows every spelling the reference accepts', () => {
    for (const name of [
      'azure',
      'azure-openai',
      'codex',
      'cursor_agent',
      'github_copilot',
      'openai-compatible',
      'compat',
    ])
      assert.ok(canonicalBackend(name), name);
  });

  // The switch's spellings and the role backends' names live in two tables (config/backendChoice.ts,
  // llm/backends.ts); a spelling one knows and the other does not would pass validation and fail later.
  it('knows the same backend spellings as the role backends, each meaning the transport of its canonical name', () => {
    const kind = (name: string) =>
      resolveBackendName(name, { azureEndpoint: 'https://example.openai.azure.com', key: 'model.x' }).kind;
    for (const spelling of BACKEND_SPELLINGS) {
      const canonical = canonicalBackend(spelling);
      assert.ok(canonical, spelling);
      assert.equal(kind(spelling), kind(canonical), `${spelling} → ${canonical}`);
    }
    // `command` is a role backend only: the switch picks an agent preset instead.
    assert.deepEqual(
      BACKEND_NAMES.filter((n) => canonicalBackend(n) === undefined),
      ['command'],
    );
  });
});
