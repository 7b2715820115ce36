import assert from 'node:assert/strict';
import { defaultConfig, type SkillOptConfig } from '../../../src/engine/config/schema';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';

/**
 * model.reasoning_effort set where this tool sends none: the reference passes it to the Claude CLI
 * (`--effort`) and to every Azure model; here Anthropic's Messages API, OpenAI models that take no
 * effort and the OpenAI-compatible families get none, which a notice says instead of dropping it.
 */
describe('llm/effortNotice: model.reasoning_effort is sent or said not to be', () => {
  const noticesOf = async (model: Record<string, unknown>): Promise<string[]> => {
    const cfg: SkillOptConfig = defaultConfig();
    Object.assign(cfg.model, { optimizer_backend: 'sim', target_backend: 'sim', ...model });
    const setup = buildModels(cfg, {
      tasks: [],
      testItems: [],
      logger: silentLogger,
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-0001', OPENAI_API_KEY: 'sk-test-0001' },
    });
    await setup.close();
    return setup.notices.filter((n) => /reasoning_effort/.test(n));
  };

  it('Anthropic roles: not sent, with what to use instead', async () => {
    assert.deepEqual(
      await noticesOf({ reasoning_effort: 'high', target_backend: 'anthropic', target: 'claude-sonnet-4-6' }),
      [
        "target: model.reasoning_effort high is not sent to the Anthropic Messages API (the reference hands it to the Claude CLI's --effort); set model.thinking_budget for extended thinking",
      ],
    );
  });

  it('an OpenAI model that takes no effort: not sent, said; a reasoning model takes it unsaid', async () => {
    assert.deepEqual(
      await noticesOf({ reasoning_effort: 'low', optimizer_backend: 'openai', optimizer: 'gpt-4.1' }),
      [
        'optimizer: model.reasoning_effort low is not sent to gpt-4.1, which takes none (only o-series and gpt-5 models do)',
      ],
    );
    assert.deepEqual(
      await noticesOf({ reasoning_effort: 'low', optimizer_backend: 'openai', optimizer: 'gpt-5.5' }),
      [],
    );
  });

  it('the Qwen, MiniMax and OpenAI-compatible backends: not sent (nor in the reference), said', async () => {
    assert.deepEqual(
      await noticesOf({
        reasoning_effort: 'xhigh',
        target_backend: 'qwen_chat',
        target: 'Qwen/Qwen3.5-4B',
        qwen_chat_api_key: 'qwen-test-0001',
      }),
      [
        'target: model.reasoning_effort xhigh is not sent to the qwen_chat backend (the reference drops it there too)',
      ],
    );
  });

  it('the default (medium), blank, and simulated roles say nothing', async () => {
    assert.deepEqual(await noticesOf({ target_backend: 'anthropic', target: 'claude-sonnet-4-6' }), []);
    assert.deepEqual(await noticesOf({ reasoning_effort: '', target_backend: 'anthropic' }), []);
    assert.deepEqual(await noticesOf({ reasoning_effort: 'high' }), []);
  });
});
