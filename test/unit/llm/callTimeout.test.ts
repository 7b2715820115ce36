import assert from 'node:assert/strict';
import { defaultConfig, type SkillOptConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';
import type { ModelRole } from '../../../src/engine/llm/types';
import type { LoopbackServer } from '../../support/loopback/openaiServer';
import { hang, startOpenAiServer } from '../../support/loopback/openaiServer';

/**
 * Which key bounds one model call, read off the error of a call the loopback server never answers
 * (the real OpenAI SDK in between). The reference's rollouts pass env.exec_timeout to every target
 * call, and a backend family's own timeout key (qwen_chat_timeout_seconds) must not be cut short by
 * limits.request_timeout_s.
 */
describe('llm/callTimeout: a call gets the timeout the config names for it', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** The error of one call by `role` to a server that never answers, under limits.request_timeout_s 0.3. */
  const timedOut = async (
    role: ModelRole,
    model: (url: string) => Record<string, unknown>,
    env: Partial<SkillOptConfig['env']> = {},
  ): Promise<SkillOptError> => {
    server = await startOpenAiServer([hang()]);
    const cfg: SkillOptConfig = defaultConfig();
    Object.assign(cfg.model, { optimizer_backend: 'sim', target_backend: 'sim', ...model(server.url) });
    Object.assign(cfg.env, env);
    cfg.limits.max_retries = 0;
    cfg.limits.request_timeout_s = 0.3;
    cfg.cache.enabled = false;
    const setup = buildModels(cfg, { tasks: [], testItems: [], logger: silentLogger, env: {} });
    try {
      await (role === 'target' ? setup.target : setup.optimizer).chat({
        role,
        stage: role === 'target' ? 'rollout' : 'analyst',
        messages: [{ role: 'user', content: 'q' }],
        maxTokens: 100,
      });
    } catch (err) {
      assert.ok(SkillOptError.is(err), String(err));
      return err;
    } finally {
      await setup.close();
    }
    return assert.fail('a call the server never answers must time out');
  };
  const openaiTarget = (url: string) => ({
    target_backend: 'openai',
    target_base_url: url,
    target: 'gpt-test',
    target_api_key: 'sk-test-0001',
  });

  it('env.exec_timeout, when set, bounds each chat target call (the reference rollouts pass it), and the fix names it', async () => {
    const err = await timedOut('target', openaiTarget, { exec_timeout: 0.8 });
    assert.match(err.message, /no reply within 800 ms/);
    assert.match(err.place.fix ?? '', /raise env\.exec_timeout/);
  });

  it('env.exec_timeout at its default leaves chat target calls to limits.request_timeout_s', async () => {
    const err = await timedOut('target', openaiTarget);
    assert.match(err.message, /no reply within 300 ms/);
    assert.match(err.place.fix ?? '', /raise limits\.request_timeout_s/);
  });

  it('env.exec_timeout does not bound the optimizer', async () => {
    const err = await timedOut(
      'optimizer',
      (url) => ({
        optimizer_backend: 'openai',
        optimizer_base_url: url,
        optimizer: 'gpt-test',
        optimizer_api_key: 'sk-test-0001',
      }),
      { exec_timeout: 0.8 },
    );
    assert.match(err.message, /no reply within 300 ms/);
  });

  it("a Qwen role's qwen_chat_timeout_seconds is its calls' timeout, not cut at limits.request_timeout_s", async () => {
    const err = await timedOut('optimizer', (url) => ({
      optimizer_backend: 'qwen_chat',
      optimizer: 'Qwen/Qwen3.5-4B',
      qwen_chat_base_url: url,
      qwen_chat_api_key: 'qwen-test-key-0001',
      optimizer_qwen_chat_timeout_seconds: 0.8,
    }));
    assert.match(err.message, /no reply within 800 ms/);
    assert.match(err.place.fix ?? '', /raise model\.optimizer_qwen_chat_timeout_seconds/);
  });
});
