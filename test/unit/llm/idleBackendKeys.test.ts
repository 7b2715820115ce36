import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/engine/config/load';
import { defaultConfig, type SkillOptConfig } from '../../../src/engine/config/schema';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';

const REFERENCE_CONFIGS = join(__dirname, '..', '..', 'fixtures', 'reference-configs', 'configs');

/** A backend's own settings on a run that does not use that backend: one notice per backend, never silent. */
describe('models: settings of a backend the run does not use', () => {
  let bin: string;
  before(() => {
    bin = mkdtempSync(join(tmpdir(), 'skillopt-idlekeys-'));
    writeFileSync(join(bin, 'codex'), '#!/bin/sh\n');
    chmodSync(join(bin, 'codex'), 0o755);
  });
  after(() => rmSync(bin, { recursive: true, force: true }));

  const idle = (cfg: SkillOptConfig): string[] =>
    buildModels(cfg, {
      env: { PATH: bin, OPENAI_API_KEY: 'sk-test' },
      trustedWorkspace: true,
      tasks: [],
      testItems: [],
      logger: silentLogger,
    }).notices.filter((n) => n.includes('read only by'));
  /** The default config with a sim optimizer, this target and these model keys. */
  const withKeys = (target: string, keys: Partial<SkillOptConfig['model']>): SkillOptConfig => {
    const cfg = defaultConfig();
    Object.assign(cfg.model, { optimizer_backend: 'sim', target_backend: target }, keys);
    return cfg;
  };

  it('names an agent CLI key on an OpenAI target, and the target in use', () => {
    const cfg = withKeys('openai', { claude_code_exec_profile: 'work', claude_code_exec_effort: 'high' });
    assert.deepEqual(idle(cfg), [
      'model.claude_code_exec_profile, model.claude_code_exec_effort: read only by the claude_code_exec target (model.target_backend: claude_code_exec), so they have no effect on this run: the optimizer is sim, the target openai',
    ]);
  });

  it('names shared and per-role Qwen keys on a simulated run, one line per backend and role', () => {
    const cfg = withKeys('sim', {
      qwen_chat_thinking_mode: 'enabled',
      target_qwen_chat_thinking_mode: 'disabled',
      minimax_region: 'cn_zh',
    });
    assert.deepEqual(idle(cfg), [
      'model.qwen_chat_thinking_mode: read only by the qwen_chat backend (model.optimizer_backend or target_backend: qwen_chat), so it has no effect on this run: the optimizer is sim, the target sim',
      "model.target_qwen_chat_thinking_mode: read only by the target's qwen_chat backend (model.target_backend: qwen_chat), so it has no effect on this run: the optimizer is sim, the target sim",
      'model.minimax_region: read only by the minimax_chat backend (model.optimizer_backend or target_backend: minimax_chat), so it has no effect on this run: the optimizer is sim, the target sim',
    ]);
  });

  it('says nothing of the keys of the backend in use, nor of defaults', () => {
    const cfg = withKeys('codex_exec', { codex_exec_profile: 'fast', claude_code_exec_path: 'claude' });
    assert.deepEqual(idle(cfg), []);
  });

  it("says nothing for the reference's shipped configs, which spell out every backend's defaults", () => {
    for (const dir of readdirSync(REFERENCE_CONFIGS).filter((d) => d !== 'features')) {
      const file = join(REFERENCE_CONFIGS, dir, 'default.yaml');
      const { config } = loadConfig(file, {
        overrides: ['model.optimizer_backend=sim', 'model.target_backend=sim'],
      });
      assert.deepEqual(idle(config), [], dir);
    }
  });
});
