import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultConfig } from '../../../src/engine/config/schema';
import { silentLogger } from '../../../src/engine/log';
import { detectAgentClis } from '../../../src/engine/llm/agents/detect';
import { buildAgentBackend } from '../../../src/engine/llm/agents/fromConfig';
import { PRESETS } from '../../../src/engine/llm/agents/presets';
import { agentCliBin } from '../../support/agentClis';

/** The agent CLIs scripts/install-agent-clis.mjs installs, found as a run would find them. */
describe('llm/agents: which agent CLIs are installed', () => {
  const { bin } = agentCliBin();

  it('finds each real CLI on PATH with the version of its npm package', function () {
    if (!bin) this.skip();
    const pinned = (
      JSON.parse(readFileSync(join(bin!, '..', '..', 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies;
    const found = detectAgentClis({ PATH: bin });
    assert.deepEqual(
      found.map((c) => [c.backend, c.path, c.version]),
      [
        ['claude_code_exec', join(bin!, 'claude'), pinned['@anthropic-ai/claude-code']],
        ['codex_exec', join(bin!, 'codex'), pinned['@openai/codex']],
        ['copilot_exec', join(bin!, 'copilot'), pinned['@github/copilot']],
      ],
    );
  });

  it('says how to install one that is missing, and honours a configured path and the *_EXEC_PATH variable', function () {
    if (!bin) this.skip();
    const found = detectAgentClis(
      { PATH: '/nonexistent', CODEX_EXEC_PATH: join(bin!, 'codex') },
      { copilot: join(bin!, 'copilot') },
    );
    const [claude, codex, copilot] = found;
    assert.equal(claude.path, undefined);
    assert.equal(claude.version, undefined);
    assert.equal(claude.install, 'npm install -g @anthropic-ai/claude-code');
    assert.deepEqual(
      [claude.pathKey, claude.pathEnv],
      ['model.claude_code_exec_path', 'CLAUDE_CODE_EXEC_PATH'],
    );
    assert.equal(codex.path, join(bin!, 'codex'));
    assert.equal(copilot.path, join(bin!, 'copilot'));
    assert.ok(copilot.version);
  });
});

describe('llm/agents: the program a run starts is the one the picker found', () => {
  const { bin } = agentCliBin();

  for (const preset of Object.values(PRESETS)) {
    it(`${preset.backend}: ${preset.pathEnv} names the program when model.${preset.pathKey} is not set`, function () {
      if (!bin) this.skip();
      const program = join(bin!, preset.program);
      const env = { PATH: '/nonexistent', [preset.pathEnv]: program };
      const cfg = defaultConfig();
      cfg.model.target_backend = preset.backend;
      const backend = buildAgentBackend(cfg, { env, trustedWorkspace: true, logger: silentLogger });
      assert.equal(backend.programName, program);
      const picked = detectAgentClis(env).find((c) => c.agent === preset.name)!;
      assert.equal(picked.path, program);
      // A path set in the config wins over the variable, for the run and the picker alike.
      (cfg.model as unknown as Record<string, string>)[preset.pathKey] = join(bin!, 'elsewhere');
      assert.throws(
        () => buildAgentBackend(cfg, { env, trustedWorkspace: true, logger: silentLogger }),
        /was not found on PATH/,
      );
    });
  }
});
