/**
 * API keys from SecretStorage reach the model over the wire, and only there: the key set with
 * SkillOpt: Set API Key travels host → engine process → OpenAI SDK → a loopback server that speaks
 * the Chat Completions format, and appears nowhere in the run folder or the settings.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { EvalResult } from '../../../src/protocol/engine';
import { reply, startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { closeEditors, skillopt, workspacePath } from './support';

const key = 'fake-skillopt-secret-storage-0123456789';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('SkillOpt extension: API keys from SecretStorage', function () {
  this.timeout(120_000);
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await closeEditors();
    await vscode.commands.executeCommand('skillopt.setApiKey', 'openai', '');
    await server?.close();
  });

  it('sends the stored key to an OpenAI-compatible server and writes it nowhere', async () => {
    // The host must not have the variable, or the engine would use it instead of the stored key.
    assert.equal(process.env.OPENAI_API_KEY, undefined);
    await skillopt();
    server = await startOpenAiServer(() => reply('<answer>2024-03-05</answer>'));
    const dir = workspacePath('keyed');
    mkdirSync(dir, { recursive: true });
    for (const f of ['SKILL.md', 'tasks.jsonl']) cpSync(workspacePath('house-style', f), join(dir, f));
    writeFileSync(
      join(dir, 'skillopt.yaml'),
      [
        'model:',
        '  target_backend: openai',
        '  target: gpt-test',
        `  target_base_url: ${server.url}`,
        '  optimizer_backend: sim',
        'env:',
        '  skill_init: SKILL.md',
        '  data_path: tasks.jsonl',
        '  split_ratio: "4:3:3"',
        'cache:',
        '  enabled: false',
        '',
      ].join('\n'),
    );
    assert.equal(await vscode.commands.executeCommand('skillopt.setApiKey', 'openai', key), true);
    const result = await vscode.commands.executeCommand<EvalResult | undefined>('skillopt.evaluateSkill', {
      skillPath: join(dir, 'SKILL.md'),
      configPath: join(dir, 'skillopt.yaml'),
      split: 'val',
    });
    assert.ok(result, 'eval returned scores');
    assert.equal(server.requests.length, result.n_items, 'one request per task');
    for (const r of server.requests) assert.equal(r.headers.authorization, `Bearer ${key}`);
    for (const f of filesUnder(result.out_dir)) {
      assert.ok(!readFileSync(f, 'utf8').includes(key), `the key is in ${f}`);
    }
    const settings = JSON.stringify(vscode.workspace.getConfiguration('skillopt'));
    assert.ok(!settings.includes(key), 'the key is in the settings');
  });
});
