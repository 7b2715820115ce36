import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import { AnthropicBackend } from '../../../src/engine/llm/anthropic';
import {
  apiKeyFromEnv,
  BACKEND_NAMES,
  createSdkBackend,
  resolveBackendName,
} from '../../../src/engine/llm/backends';
import { createModelClient } from '../../../src/engine/llm/client';
import { AzureOpenAiBackend, OpenAiBackend } from '../../../src/engine/llm/openai';
import { isLocalUrl } from '../../../src/engine/llm/secrets';
import type { LoopbackServer } from '../../support/loopback/openaiServer';
import { reply, startOpenAiServer } from '../../support/loopback/openaiServer';

describe('llm/backends', () => {
  it('maps our names and the reference names to transports', () => {
    const table: Array<[string, string, boolean]> = [
      ['openai', 'openai', false],
      ['azure_openai', 'azure_openai', false],
      ['azure-openai', 'azure_openai', false],
      ['azure', 'azure_openai', false],
      ['anthropic', 'anthropic', false],
      ['vscode-lm', 'vscode-lm', false],
      ['command', 'command', false],
      ['sim', 'sim', false],
      ['openai_compatible', 'openai', true],
      ['compat', 'openai', true],
      ['qwen_chat', 'openai', true],
      ['claude_chat', 'anthropic', true],
      ['claude', 'anthropic', true],
      ['copilot_chat', 'vscode-lm', true],
      ['copilot', 'vscode-lm', true],
      // The presets' own names: nothing to say; an alias names its preset; Cursor is refused later.
      ['codex_exec', 'command', false],
      ['claude_code_exec', 'command', false],
      ['copilot_exec', 'command', false],
      ['codex', 'command', true],
      ['cursor_exec', 'command', false],
      [' Claude_Chat ', 'anthropic', true],
    ];
    for (const [name, kind, hasNotice] of table) {
      const r = resolveBackendName(name);
      assert.equal(r.kind, kind, name);
      assert.equal(r.notice !== undefined, hasNotice, name);
    }
    assert.equal(
      resolveBackendName('claude_chat').notice,
      "model backend 'claude_chat' runs through the Anthropic Messages API here",
    );
    assert.equal(resolveBackendName('codex_exec').targetOnly, true);
    assert.equal(resolveBackendName('qwen_chat').defaultBaseUrl, 'http://localhost:8000/v1');
  });

  it('sends openai_chat to Azure, and refuses it without an Azure endpoint instead of using the OpenAI API', () => {
    assert.deepEqual(resolveBackendName('openai_chat', { azureEndpoint: 'https://r.openai.azure.com' }), {
      kind: 'azure_openai',
      notice: "model backend 'openai_chat' runs through Azure OpenAI (https://r.openai.azure.com)",
    });
    assert.deepEqual(
      resolveBackendName('openai_chat', {
        azureEndpoint: 'https://r.openai.azure.com',
        azureMode: 'openai_compatible',
      }),
      {
        kind: 'openai',
        defaultBaseUrl: 'https://r.openai.azure.com',
        notice:
          "model backend 'openai_chat' runs through the OpenAI SDK against https://r.openai.azure.com (auth mode openai_compatible)",
      },
    );
    assert.throws(
      () => resolveBackendName('openai_chat', { azureEndpoint: ' ', key: 'model.optimizer_backend' }),
      (e: unknown) =>
        SkillOptError.is(e, 'config') &&
        e.message ===
          "model.optimizer_backend: model backend 'openai_chat' is Azure OpenAI, but no Azure endpoint is set. Fix: set model.azure_openai_endpoint (or AZURE_OPENAI_ENDPOINT), or choose the public OpenAI API with openai as the backend",
    );
  });

  it('rejects an unknown name, listing the valid ones', () => {
    assert.throws(
      () => resolveBackendName('gemini', { key: 'model.target_backend', file: 'skillopt.yaml' }),
      (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'config'));
        assert.ok(
          err.message.startsWith(
            "skillopt.yaml (model.target_backend): unknown model backend 'gemini'. Fix: use one of: openai, azure_openai, anthropic, vscode-lm, command, sim, openai_chat,",
          ),
        );
        return true;
      },
    );
    assert.ok(BACKEND_NAMES.includes('vscode-lm'));
  });

  it('builds SDK backends from a plain spec', () => {
    const openai = createSdkBackend({ kind: 'openai', model: 'gpt-4o', apiKey: 'fake-spec-test-0005' });
    assert.ok(openai instanceof OpenAiBackend);
    assert.equal(openai.provider, 'openai');
    const local = createSdkBackend({ kind: 'openai', model: 'qwen3', baseUrl: 'http://localhost:11434/v1' });
    assert.equal(local.provider, 'openai_compatible');
    assert.equal((local.cacheParams as { tokenField: string }).tokenField, 'max_tokens');
    const azure = createSdkBackend({
      kind: 'azure_openai',
      model: 'gpt-5.5',
      apiKey: 'k-azure-spec-0006',
      azureEndpoint: 'https://r.openai.azure.com',
    });
    assert.ok(azure instanceof AzureOpenAiBackend);
    assert.deepEqual(azure.secrets?.(), ['k-azure-spec-0006']);
    const claude = createSdkBackend({
      kind: 'anthropic',
      model: 'claude-haiku-4-5',
      apiKey: 'fake-anthropic-spec-0007',
      thinkingBudget: 2048,
    });
    assert.ok(claude instanceof AnthropicBackend);
    assert.equal(claude.cacheParams.defaultThinkingBudget, 2048);
    assert.throws(
      () => createSdkBackend({ kind: 'azure_openai', model: 'gpt-4o', apiKey: 'k-azure-spec-0006' }),
      (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'config'));
        assert.match(
          err.message,
          /^model\.azure_openai_endpoint: no Azure OpenAI endpoint for deployment gpt-4o\. Fix: /,
        );
        return true;
      },
    );
  });

  it('reads keys from the documented environment variables only', () => {
    const env = {
      OPENAI_API_KEY: ' fake-env ',
      AZURE_OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: 'fake-anthropic-env',
    };
    assert.equal(apiKeyFromEnv('openai', env), 'fake-env');
    assert.equal(apiKeyFromEnv('azure_openai', env), undefined);
    assert.equal(apiKeyFromEnv('anthropic', env), 'fake-anthropic-env');
  });

  it('treats loopback and private-network hosts as local', () => {
    const local = [
      'http://localhost:11434/v1',
      'http://127.0.0.1:8000',
      'http://[::1]:1234',
      'http://192.168.1.20:8000/v1',
      'http://10.0.0.5',
      'http://172.20.0.2',
      'http://gpu.local:8000',
    ];
    const remote = [
      'https://api.openai.com/v1',
      'https://openrouter.ai/api/v1',
      'http://172.32.0.1',
      'not a url',
      undefined,
    ];
    assert.deepEqual(
      local.map(isLocalUrl),
      local.map(() => true),
    );
    assert.deepEqual(
      remote.map(isLocalUrl),
      remote.map(() => false),
    );
  });

  describe('spec to working client', () => {
    let server: LoopbackServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('routes a qwen_chat target through the OpenAI SDK to a compatible server', async () => {
      server = await startOpenAiServer([reply('<answer>Paris</answer>')]);
      const resolved = resolveBackendName('qwen_chat');
      assert.equal(resolved.kind, 'openai');
      const backend = createSdkBackend({
        kind: 'openai',
        model: 'Qwen/Qwen3.5-4B',
        baseUrl: server.url,
        temperature: 0.7,
      });
      const result = await createModelClient({ role: 'target', backend }).chat({
        role: 'target',
        stage: 'rollout',
        messages: [{ role: 'user', content: 'Capital of France?' }],
        maxTokens: 8000,
      });
      assert.equal(result.text, '<answer>Paris</answer>');
      assert.deepEqual(server.requests[0].body, {
        model: 'Qwen/Qwen3.5-4B',
        messages: [{ role: 'user', content: 'Capital of France?' }],
        max_tokens: 8000,
        temperature: 0.7,
      });
    });
  });
});
