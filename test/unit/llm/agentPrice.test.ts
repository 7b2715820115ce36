import assert from 'node:assert/strict';
import { defaultConfig } from '../../../src/engine/config/schema';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';

/** The notices of a run with a simulated optimizer and this target. */
function notices(model: Record<string, unknown>, prices: Record<string, unknown> = {}): string[] {
  const cfg = defaultConfig();
  Object.assign(cfg.model, { optimizer_backend: 'sim', ...model });
  Object.assign(cfg.prices, prices);
  // Any existing file stands in for the agent programs: nothing is run.
  const env = {
    PATH: process.env.PATH ?? '',
    CODEX_EXEC_PATH: process.execPath,
    COPILOT_EXEC_PATH: process.execPath,
    CLAUDE_CODE_EXEC_PATH: process.execPath,
  };
  return buildModels(cfg, { tasks: [], testItems: [], logger: silentLogger, trustedWorkspace: true, env })
    .notices;
}

const unsetModel = (n: string): boolean => n.startsWith('model.target is not set');

describe('an agent target without model.target: its spend is tokens only, said once', () => {
  const custom = { target_backend: 'command', target_command: 'true {prompt}' };

  it('says so for a custom command, with how to name and price the model', () => {
    const said = notices(custom).filter(unsetModel);
    assert.equal(said.length, 1, notices(custom).join('\n'));
    assert.match(said[0]!, /its spend is shown in tokens only \(under the name gpt-5\.5\)/);
    assert.match(
      said[0]!,
      /Fix: set model\.target to the model your command runs .*prices\.<that model>\.input_per_mtok/,
    );
  });

  it('says so for a preset agent CLI that prices nothing itself (Codex)', () => {
    const said = notices({ target_backend: 'codex_exec' }).filter(unsetModel);
    assert.equal(said.length, 1);
    assert.match(said[0]!, /it is passed to the CLI/);
  });

  it('says nothing once model.target is set, or a price is given, or for Claude Code (it prices its own calls)', () => {
    assert.deepEqual(notices({ ...custom, target: 'my-model' }).filter(unsetModel), []);
    assert.deepEqual(
      notices(custom, { 'gpt-5.5': { input_per_mtok: 1, output_per_mtok: 2 } }).filter(unsetModel),
      [],
    );
    assert.deepEqual(notices({ target_backend: 'sim' }).filter(unsetModel), []);
    assert.deepEqual(notices({ target_backend: 'claude_code_exec' }).filter(unsetModel), []);
  });
});
