import assert from 'node:assert/strict';
import { defaultConfig, type SkillOptConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { silentLogger } from '../../../src/engine/log';
import { familySettings } from '../../../src/engine/llm/chatFamilies';
import { buildModels } from '../../../src/engine/models';
import type { LoopbackServer } from '../../support/loopback/openaiServer';
import { reply, startOpenAiServer } from '../../support/loopback/openaiServer';

/** Qwen and MiniMax options as those servers expect them, read off the request the real SDK sends. */
describe('llm/chatFamilies: Qwen thinking and MiniMax options on the wire', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const models = (model: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
    const cfg: SkillOptConfig = defaultConfig();
    Object.assign(cfg.model, { optimizer_backend: 'sim', ...model });
    cfg.limits.max_retries = 0;
    return buildModels(cfg, { tasks: [], testItems: [], logger: silentLogger, env });
  };
  /** One rollout call with a completion cap above the family's (16384, as analysts ask). */
  const ask = (setup: ReturnType<typeof models>) =>
    setup.target.chat({
      role: 'target',
      stage: 'rollout',
      messages: [{ role: 'user', content: 'q' }],
      maxTokens: 16384,
    });

  it('qwen: a per-role thinking mode is sent as chat_template_kwargs, with the reference cap and temperature', async () => {
    for (const [mode, expected] of [
      ['disabled', { enable_thinking: false }],
      ['enabled', { enable_thinking: true }],
      [true, { enable_thinking: true }],
    ] as const) {
      server = await startOpenAiServer([reply('<answer>4</answer>')]);
      const setup = models({
        target_backend: 'qwen',
        target: 'Qwen/Qwen3.5-4B',
        qwen_chat_thinking_mode: 'server_default',
        target_qwen_chat_thinking_mode: mode,
        qwen_chat_base_url: server.url,
        target_qwen_chat_api_key: 'qwen-test-key-0001',
      });
      await ask(setup);
      const req = server.requests[0];
      assert.deepEqual(req.body, {
        chat_template_kwargs: expected,
        model: 'Qwen/Qwen3.5-4B',
        messages: [{ role: 'user', content: 'q' }],
        max_tokens: 8000,
        temperature: 0.7,
      });
      assert.equal(req.headers.authorization, 'Bearer qwen-test-key-0001');
      await server.close();
      server = undefined;
    }
  });

  it('qwen: server_default sends no chat_template_kwargs and says so; the legacy enable_thinking turns it on', async () => {
    server = await startOpenAiServer([reply('ok'), reply('ok')]);
    const quiet = models({
      target_backend: 'qwen_chat',
      target: 'q',
      qwen_chat_base_url: server.url,
      qwen_chat_temperature: 'none',
      qwen_chat_max_tokens: 2048,
    });
    await ask(quiet);
    assert.deepEqual(server.requests[0].body, {
      model: 'q',
      messages: [{ role: 'user', content: 'q' }],
      max_tokens: 2048,
    });
    assert.ok(
      quiet.notices.some((n) => /qwen_chat target: thinking is left to the server/.test(n)),
      quiet.notices.join('\n'),
    );
    const legacy = models(
      { target_backend: 'qwen_chat', target: 'q' },
      { QWEN_CHAT_BASE_URL: server.url, TARGET_QWEN_CHAT_ENABLE_THINKING: 'true' },
    );
    await legacy.target.chat({
      role: 'target',
      stage: 'rollout',
      messages: [{ role: 'user', content: 'q' }],
    });
    assert.deepEqual((server.requests[1].body as Record<string, unknown>).chat_template_kwargs, {
      enable_thinking: true,
    });
  });

  it('qwen: never sends the OpenAI key, and refuses an unknown thinking mode', () => {
    assert.throws(
      () => models({ target_backend: 'qwen_chat', qwen_chat_thinking_mode: 'maybe' }),
      (e: unknown) =>
        SkillOptError.is(e, 'config') &&
        /model\.qwen_chat_thinking_mode: unknown Qwen thinking mode "maybe"/.test(e.message),
    );
    assert.throws(
      () =>
        models(
          { target_backend: 'qwen_chat', qwen_chat_base_url: 'https://qwen.example.com/v1' },
          { OPENAI_API_KEY: 'openai-test-key-0009' },
        ),
      (e: unknown) => SkillOptError.is(e, 'config') && /QWEN_CHAT_API_KEY/.test(e.message),
    );
  });

  it('minimax: top-level thinking adaptive or disabled (M2 always adaptive), base URL, key, cap and temperature', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ target: 'MiniMax-M3', minimax_enable_thinking: 'false' }, 'disabled'],
      [{ target: 'MiniMax-M3', minimax_enable_thinking: true }, 'adaptive'],
      [{ target: 'MiniMax-M2.5', minimax_enable_thinking: 'false' }, 'adaptive'],
    ];
    for (const [model, type] of cases) {
      server = await startOpenAiServer([reply('ok')]);
      const setup = models({
        target_backend: 'minimax',
        minimax_base_url: server.url,
        minimax_region: 'cn_zh',
        minimax_api_key: 'minimax-test-key-0001',
        minimax_temperature: '0.2',
        minimax_max_tokens: '4000',
        ...model,
      });
      await ask(setup);
      const req = server.requests[0];
      assert.deepEqual(req.body, {
        thinking: { type },
        model: model.target,
        messages: [{ role: 'user', content: 'q' }],
        max_tokens: 4000,
        temperature: 0.2,
      });
      assert.equal(req.headers.authorization, 'Bearer minimax-test-key-0001');
      await server.close();
      server = undefined;
    }
  });

  it('minimax: the region picks the base URL; an unknown region is refused', () => {
    const cfg = defaultConfig();
    cfg.model.minimax_region = 'cn-zh';
    assert.equal(
      familySettings('minimax', cfg, 'target', 'MiniMax-M3', {}).baseUrl,
      'https://api.minimaxi.com/v1',
    );
    cfg.model.minimax_region = '';
    assert.equal(
      familySettings('minimax', cfg, 'target', 'MiniMax-M3', {}).baseUrl,
      'https://api.minimax.io/v1',
    );
    assert.equal(
      familySettings('minimax', cfg, 'target', 'MiniMax-M3', { MINIMAX_BASE_URL: 'http://gw.local/v1' })
        .baseUrl,
      'http://gw.local/v1',
    );
    assert.throws(
      () => models({ target_backend: 'minimax_chat', minimax_region: 'eu' }, { MINIMAX_API_KEY: 'k' }),
      (e: unknown) =>
        SkillOptError.is(e, 'config') && /unknown MiniMax region "eu".*global_en, cn_zh/.test(e.message),
    );
  });
});
