import assert from 'node:assert/strict';
import { defaultConfig } from '../../../src/engine/config/schema';
import { PriceTable } from '../../../src/engine/llm/prices';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';

/** The notices of a run with a simulated optimizer and this target. */
function notices(
  model: Record<string, unknown>,
  prices: Record<string, unknown> = {},
  vars: NodeJS.ProcessEnv = {},
): string[] {
  const cfg = defaultConfig();
  Object.assign(cfg.model, { optimizer_backend: 'sim', ...model });
  Object.assign(cfg.prices, prices);
  // Any existing file stands in for the agent programs: nothing is run.
  const env = {
    PATH: process.env.PATH ?? '',
    CODEX_EXEC_PATH: process.execPath,
    COPILOT_EXEC_PATH: process.execPath,
    CLAUDE_CODE_EXEC_PATH: process.execPath,
    ...vars,
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

describe('Claude through Bedrock or Vertex: the Anthropic list price, said once', () => {
  const cloud = (n: string): boolean => n.includes("priced at the Anthropic API's list price");
  const sonnet = new PriceTable().lookup('claude-sonnet-4-5', 'anthropic');

  it('prices a Bedrock or Vertex id as the Anthropic model it names', () => {
    const table = new PriceTable();
    assert.ok(sonnet);
    for (const id of [
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'global.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'anthropic.claude-sonnet-4-5-20250929-v1:0',
      'claude-sonnet-4-5@20250929',
    ])
      assert.deepEqual(table.lookup(id, 'anthropic'), sonnet, id);
    // Only for Anthropic's own models: not under another provider, not a newer family member.
    assert.equal(table.lookup('us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'openai'), undefined);
    assert.equal(table.lookup('us.anthropic.claude-sonnet-4-7-20260101-v1:0', 'anthropic'), undefined);
  });

  it('says so for Claude Code switched to Bedrock or Vertex, and for an optimizer given a cloud id', () => {
    const bedrock = notices({ target_backend: 'claude_code_exec' }, {}, { CLAUDE_CODE_USE_BEDROCK: '1' });
    assert.deepEqual(bedrock.filter(cloud).length, 1, bedrock.join('\n'));
    assert.match(bedrock.find(cloud)!, /^target via Amazon Bedrock \(CLAUDE_CODE_USE_BEDROCK\): priced at/);
    assert.match(bedrock.find(cloud)!, /Fix: set prices\.<model>\.input_per_mtok/);
    const vertex = notices({ target_backend: 'claude_code_exec' }, {}, { CLAUDE_CODE_USE_VERTEX: 'true' });
    assert.match(vertex.find(cloud)!, /^target via Google Vertex AI/);
    const optimizer = notices(
      {
        target_backend: 'sim',
        optimizer_backend: 'anthropic',
        optimizer: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      },
      {},
      { ANTHROPIC_API_KEY: 'sk-ant-test' },
    );
    assert.match(optimizer.find(cloud)!, /^optimizer via Amazon Bedrock \(us\.anthropic\./);
  });

  it('says nothing for the Anthropic API, a switch set to 0, or a model priced in the config', () => {
    assert.deepEqual(notices({ target_backend: 'claude_code_exec' }).filter(cloud), []);
    assert.deepEqual(
      notices({ target_backend: 'claude_code_exec' }, {}, { CLAUDE_CODE_USE_BEDROCK: '0' }).filter(cloud),
      [],
    );
    const id = 'claude-sonnet-4-5@20250929';
    const priced = notices(
      { target_backend: 'sim', optimizer_backend: 'anthropic', optimizer: id },
      { [id]: { input_per_mtok: 3.3, output_per_mtok: 16.5 } },
      { ANTHROPIC_API_KEY: 'sk-ant-test' },
    );
    assert.deepEqual(priced.filter(cloud), []);
  });
});
