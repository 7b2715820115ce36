import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { makeTaskDirs, removeTaskDirs } from '../../../src/engine/llm/agents/isolation';
import { PRESETS, type PresetContext } from '../../../src/engine/llm/agents/presets';
import {
  parseClaude,
  parseCodex,
  parseCopilot,
  parseCopilotOtel,
} from '../../../src/engine/llm/agents/transcript';
import { AgentRunError, classifyRun } from '../../../src/engine/llm/command';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';
import { processResult } from './processResult';

const jsonl = (...events: unknown[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

const run = processResult;

describe('llm/agents transcripts', () => {
  it('reads Claude Code stream-json: skill tool, answer, turns, tokens and cost', () => {
    const t = parseClaude(
      jsonl(
        { type: 'system', subtype: 'init', model: 'claude-x', skills: ['capitals', 'dataviz'] },
        {
          type: 'assistant',
          parent_tool_use_id: null,
          message: { content: [{ type: 'tool_use', name: 'Skill', input: { skill: 'capitals' } }] },
        },
        {
          type: 'assistant',
          parent_tool_use_id: null,
          message: { content: [{ type: 'text', text: 'PARIS' }] },
        },
        {
          type: 'result',
          subtype: 'success',
          is_error: false,
          num_turns: 2,
          result: '<answer>PARIS</answer>',
          total_cost_usd: 0.0123,
          usage: {
            input_tokens: 100,
            cache_read_input_tokens: 900,
            cache_creation_input_tokens: 50,
            output_tokens: 40,
          },
        },
      ),
      'capitals',
    );
    assert.equal(t.answer, '<answer>PARIS</answer>');
    assert.equal(t.skillLoaded, true);
    assert.deepEqual(t.skillsAvailable, ['capitals', 'dataviz']);
    assert.deepEqual(t.toolCalls, [{ name: 'Skill', detail: 'capitals' }]);
    assert.equal(t.turns, 2);
    assert.deepEqual(t.usage, {
      inputTokens: 1050,
      outputTokens: 40,
      cacheReadTokens: 900,
      cacheWriteTokens: 50,
    });
    assert.equal(t.costUsd, 0.0123);
    assert.equal(t.model, 'claude-x');
  });

  it('reads a Claude Code API error as errored: 401 is auth, 529 is transient', () => {
    const auth = parseClaude(
      jsonl({
        type: 'result',
        is_error: true,
        api_error_status: 401,
        result: 'Invalid API key · Fix external API key',
      }),
      'capitals',
    );
    assert.equal(auth.answer, undefined);
    assert.deepEqual(auth.error, {
      kind: 'auth',
      message: 'Invalid API key · Fix external API key',
      status: 401,
      transient: false,
    });
    const busy = parseClaude(
      jsonl({ type: 'result', is_error: true, api_error_status: 529, result: 'Overloaded' }),
      'x',
    );
    assert.equal(busy.error?.kind, 'api');
    assert.equal(busy.error?.transient, true);
  });

  it('reads Codex --json: shell read of SKILL.md, last message, usage; turn.failed is errored', () => {
    const ok = parseCodex(
      jsonl(
        { type: 'thread.started' },
        { type: 'item.completed', item: { type: 'error', message: 'Model metadata for `m` not found.' } },
        {
          type: 'item.completed',
          item: {
            type: 'command_execution',
            command: 'bash -lc "cat \'/w/.agents/skills/capitals/SKILL.md\'"',
          },
        },
        { type: 'item.completed', item: { type: 'agent_message', text: '<answer>PARIS</answer>' } },
        { type: 'turn.completed', usage: { input_tokens: 200, cached_input_tokens: 150, output_tokens: 9 } },
      ),
      'capitals',
    );
    assert.equal(ok.answer, '<answer>PARIS</answer>');
    assert.equal(ok.skillLoaded, true);
    assert.equal(ok.usage?.inputTokens, 200);
    assert.equal(ok.usage?.cacheReadTokens, 150);
    const failed = parseCodex(
      jsonl(
        { type: 'error', message: 'Reconnecting... 1/5 (unexpected status 401 Unauthorized)' },
        { type: 'error', message: 'unexpected status 401 Unauthorized: invalid api key' },
        { type: 'turn.failed', error: { message: 'unexpected status 401 Unauthorized: invalid api key' } },
      ),
      'capitals',
    );
    assert.equal(failed.answer, undefined);
    assert.equal(failed.error?.kind, 'auth');
    const busy = parseCodex(
      jsonl({ type: 'turn.failed', error: { message: 'We’re currently experiencing high demand' } }),
      'x',
    );
    assert.deepEqual([busy.error?.kind, busy.error?.transient], ['api', true]);
  });

  it('reads Copilot CLI JSON: skill tool, final message, session.error; tokens from its OpenTelemetry file', () => {
    const ok = parseCopilot(
      jsonl(
        { type: 'session.skills_loaded', data: { skills: [{ name: 'capitals' }] } },
        { type: 'assistant.turn_start', data: {} },
        { type: 'tool.execution_start', data: { toolName: 'skill', arguments: { skill: 'capitals' } } },
        { type: 'assistant.turn_start', data: {} },
        { type: 'assistant.message', data: { content: '<answer>PARIS</answer>', model: 'm1' } },
        { type: 'result', exitCode: 0 },
      ),
      'capitals',
    );
    assert.deepEqual(
      [ok.answer, ok.skillLoaded, ok.turns, ok.model],
      ['<answer>PARIS</answer>', true, 2, 'm1'],
    );
    const auth = parseCopilot(
      jsonl(
        {
          type: 'session.error',
          data: {
            errorType: 'authentication',
            message: 'Authentication failed (HTTP 401).',
            statusCode: 401,
          },
        },
        { type: 'result', exitCode: 1 },
      ),
      'capitals',
    );
    assert.equal(auth.error?.kind, 'auth');
    assert.equal(auth.answer, undefined);
    assert.deepEqual(
      parseCopilotOtel(
        jsonl(
          {
            type: 'span',
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.usage.input_tokens': 10,
              'gen_ai.usage.output_tokens': 2,
            },
          },
          {
            type: 'span',
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.usage.input_tokens': 20,
              'gen_ai.usage.output_tokens': 3,
            },
          },
          {
            type: 'span',
            attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.usage.input_tokens': 30 },
          },
        ),
      ),
      { inputTokens: 30, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
    );
  });

  it('reads a Copilot CLI session aborted by our SIGTERM as no answer, though it prints a result with exit code 0', () => {
    // The events Copilot CLI 1.0.102 printed when the time limit's SIGTERM reached it mid-request
    // (a loopback server that never replied), ids and timestamps left out.
    const cancelled = [
      { type: 'assistant.turn_start', data: { turnId: '0' } },
      { type: 'model.call_start', data: { turnId: '0', model: 'loopback-model' } },
      { type: 'agent.interrupted', data: { activity: 'model_call', cancelPhase: 'pre_first_token' } },
      { type: 'abort', data: { reason: 'user_initiated' } },
      { type: 'model.call_finished', data: { turnId: '0', outcome: 'cancelled' } },
      { type: 'assistant.turn_end', data: { turnId: '0' } },
      { type: 'assistant.idle', data: { aborted: true } },
      { type: 'result', exitCode: 0, usage: { premiumRequests: 0 } },
    ];
    const timedOut = run({ timedOut: true, exitCode: 0 });
    const t = parseCopilot(jsonl(...cancelled), 'capitals');
    assert.equal(t.answer, undefined);
    assert.equal(classifyRun(timedOut, t, 'A')?.kind, 'timeout');
    // Aborted after a first turn's message (the skill load): that message is not the answer either.
    const midway = parseCopilot(
      jsonl(
        { type: 'assistant.message', data: { content: 'Loading the skill.' } },
        ...cancelled.filter((e) => e.type !== 'assistant.idle'),
      ),
      'capitals',
    );
    assert.equal(midway.answer, undefined);
    assert.equal(classifyRun(timedOut, midway, 'A')?.kind, 'timeout');
  });

  it('reads a timed-out Codex run with a message but no turn.completed as a timeout', () => {
    const t = parseCodex(
      jsonl({ type: 'item.completed', item: { type: 'agent_message', text: 'Let me read the skill.' } }),
      'capitals',
    );
    assert.equal(
      classifyRun(run({ timedOut: true, exitCode: null, signal: 'SIGTERM' }), t, 'A')?.kind,
      'timeout',
    );
  });

  it('reads a Codex run cut short while it still retries its provider as an unreachable provider, not a slow one', () => {
    // What the real Codex prints against a port nothing listens on: it waits for the network without end.
    const reconnect = {
      type: 'error',
      message: 'Reconnecting... waiting for network (Connection failed: error sending request)',
    };
    const waiting = parseCodex(
      jsonl({ type: 'thread.started', thread_id: 't' }, { type: 'turn.started' }, reconnect, reconnect),
      'capitals',
    );
    assert.deepEqual(
      classifyRun(run({ timedOut: true, exitCode: null, signal: 'SIGTERM' }), waiting, 'Codex'),
      {
        kind: 'api',
        message: `no reply from the model provider: ${reconnect.message}`,
        transient: true,
      },
    );
    // A 503 being retried keeps its status; a retry that then went through is an answer.
    const status = parseCodex(
      jsonl({ type: 'error', message: 'Reconnecting... 2/5 (unexpected status 503)' }),
      'x',
    );
    assert.equal(status.error?.status, 503);
    const recovered = parseCodex(
      jsonl(
        reconnect,
        { type: 'item.completed', item: { type: 'agent_message', text: 'PARIS' } },
        { type: 'turn.completed', usage: { input_tokens: 10, output_tokens: 2 } },
      ),
      'x',
    );
    assert.equal(recovered.answer, 'PARIS');
    assert.equal(recovered.error, undefined);
  });

  it('classifies runs without an answer: timeout, killed, exit without a final event', () => {
    const empty = parseClaude('', 'x');
    assert.equal(
      classifyRun(run({ timedOut: true, exitCode: null, signal: 'SIGTERM' }), empty, 'A')?.kind,
      'timeout',
    );
    assert.deepEqual(classifyRun(run({ exitCode: null, signal: 'SIGKILL' }), empty, 'A'), {
      kind: 'crash',
      message: 'A was killed by SIGKILL',
      transient: true,
    });
    assert.equal(classifyRun(run(), empty, 'A')?.message, 'A exited without its final event');
    const answered = parseClaude(jsonl({ type: 'result', result: 'ok' }), 'x');
    // A timeout after the final answer was printed is still an answer.
    assert.equal(classifyRun(run({ timedOut: true }), answered, 'A'), undefined);
  });
});

describe('llm/agents presets', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillopt-presets-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const context = (settings: PresetContext['settings'], userHome = join(root, 'user')): PresetContext => ({
    dirs: makeTaskDirs(join(root, 'agents')),
    prompt: 'What is the capital of France?',
    program: 'prog',
    settings,
    userHome,
    parentEnv: {},
    sharedCache: join(root, 'agents', 'shared-cache'),
  });

  it('puts each skill where its CLI discovers project skills', () => {
    assert.deepEqual(
      Object.values(PRESETS).map((p) => [p.name, p.skillRoot]),
      [
        ['claude', '.claude/skills'],
        ['codex', '.agents/skills'],
        ['copilot', '.github/skills'],
      ],
    );
  });

  it('claude: stream-json, no session saved, model passed (not the reference sentinel), CLAUDE.md above excluded, credentials seeded', () => {
    mkdirSync(join(root, 'user', '.claude'), { recursive: true });
    writeFileSync(join(root, 'user', '.claude', '.credentials.json'), '{"token":"t"}');
    writeFileSync(join(root, 'user', '.claude', 'CLAUDE.md'), 'personal instructions');
    const ctx = context({ model: 'claude-sonnet-4-6', effort: 'low', baseUrl: 'http://127.0.0.1:9/' });
    const built = PRESETS.claude.build(ctx);
    assert.deepEqual(built.argv, [
      'prog',
      '-p',
      'What is the capital of France?',
      '--output-format',
      'stream-json',
      '--verbose',
      '--no-session-persistence',
      '--model',
      'claude-sonnet-4-6',
      '--effort',
      'low',
    ]);
    assert.equal(built.env.CLAUDE_CONFIG_DIR, join(ctx.dirs.home, '.claude'));
    assert.equal(built.env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:9/');
    assert.equal(readFileSync(join(ctx.dirs.home, '.claude', '.credentials.json'), 'utf8'), '{"token":"t"}');
    assert.deepEqual(built.seeded, [join(root, 'user', '.claude', '.credentials.json')]);
    const settings = JSON.parse(readFileSync(join(ctx.dirs.home, '.claude', 'settings.json'), 'utf8')) as {
      claudeMdExcludes: string[];
    };
    assert.ok(settings.claudeMdExcludes.includes(join(ctx.dirs.root, 'CLAUDE.md')));
    assert.ok(settings.claudeMdExcludes.includes('/CLAUDE.md'));
    assert.ok(!PRESETS.claude.build(context({ model: 'gpt-5.5' })).argv.includes('--model'));
    removeTaskDirs(ctx.dirs);
  });

  it('codex: outside a git repo, --json, session kept in the task home only, own config.toml with the provider and no project root above', () => {
    mkdirSync(join(root, 'user', '.codex'), { recursive: true });
    writeFileSync(join(root, 'user', '.codex', 'auth.json'), '{}');
    writeFileSync(join(root, 'user', '.codex', 'AGENTS.md'), 'personal');
    const ctx = context({ model: 'gpt-5.5', baseUrl: 'http://127.0.0.1:9/v1', sandbox: 'read-only' });
    const built = PRESETS.codex.build(ctx);
    assert.deepEqual(built.argv, [
      'prog',
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--color',
      'never',
      '--sandbox',
      'read-only',
      '--',
      'What is the capital of France?',
    ]);
    const toml = readFileSync(join(ctx.dirs.home, '.codex', 'config.toml'), 'utf8');
    assert.match(toml, /^project_root_markers = \[\]$/m);
    assert.match(toml, /^model = "gpt-5\.5"$/m);
    assert.match(toml, /^model_provider = "skillopt"$/m);
    assert.match(toml, /^base_url = "http:\/\/127\.0\.0\.1:9\/v1"$/m);
    assert.match(toml, /^wire_api = "responses"$/m);
    assert.match(toml, /^persistence = "none"$/m);
    assert.deepEqual(built.seeded, [join(root, 'user', '.codex', 'auth.json')]);
    assert.equal(built.env.CODEX_HOME, join(ctx.dirs.home, '.codex'));
  });

  it('copilot: JSON output, read-only tools unless allowed, offline BYOK against a base URL, shared package cache', () => {
    const ctx = context({ model: 'm1', baseUrl: 'http://127.0.0.1:9/v1' });
    const built = PRESETS.copilot.build(ctx);
    assert.deepEqual(built.argv.slice(0, 7), [
      'prog',
      '-p',
      'What is the capital of France?',
      '--output-format',
      'json',
      '--no-auto-update',
      '--no-color',
    ]);
    assert.ok(built.argv.includes('--allow-tool'));
    assert.ok(!built.argv.includes('--allow-all-tools'));
    assert.deepEqual(
      [built.env.COPILOT_OFFLINE, built.env.COPILOT_PROVIDER_BASE_URL, built.env.COPILOT_MODEL],
      ['true', 'http://127.0.0.1:9/v1', 'm1'],
    );
    assert.equal(built.env.COPILOT_HOME, join(ctx.dirs.home, '.copilot'));
    assert.equal(built.env.COPILOT_CACHE_HOME, join(root, 'agents', 'shared-cache', 'copilot'));
    assert.ok(PRESETS.copilot.build(context({ allowAllTools: true })).argv.includes('--allow-all-tools'));
  });
});

describe('models: agent target wiring', () => {
  const build = (
    model: Record<string, unknown>,
    env: NodeJS.ProcessEnv = { PATH: '/nonexistent' },
    retries = 5,
  ) => {
    const cfg = defaultConfig();
    Object.assign(cfg.model, { optimizer_backend: 'sim', ...model });
    cfg.limits.max_retries = retries;
    return buildModels(cfg, { tasks: [], testItems: [], logger: silentLogger, trustedWorkspace: true, env });
  };

  it('refuses an agent CLI that is not on PATH before anything runs (validate sees it)', () => {
    assert.throws(
      () => build({ target_backend: 'codex_exec' }),
      (e: unknown) =>
        e instanceof AgentRunError &&
        e.kind === 'not_installed' &&
        SkillOptError.is(e, 'config') &&
        e.place.key === 'model.codex_exec_path' &&
        /Codex \(codex\) was not found on PATH/.test(e.message),
    );
  });

  it('retries a transient agent error and hands the caller the AgentRunError with its kind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-retry-'));
    try {
      const counter = join(dir, 'runs.txt');
      const agent = join(__dirname, '..', '..', 'fixtures', 'fakecli', 'fakeAgent.cjs');
      const setup = build(
        {
          target_backend: 'command',
          target_command: `${JSON.stringify(process.execPath)} ${JSON.stringify(agent)} count-exit ${JSON.stringify(counter)} 1 "API error: 503 Service Unavailable"`,
          target_workspace_root: join(dir, 'agents'),
        },
        { PATH: process.env.PATH ?? '' },
        2,
      );
      const task = { taskId: 't', skill: 's', skillName: 'x', prompt: 'q' };
      const chat = setup.target.chat({ role: 'target', stage: 'rollout', messages: [], task });
      await assert.rejects(
        chat,
        (e: unknown) => e instanceof AgentRunError && e.kind === 'api' && e.transient,
      );
      // limits.max_retries (2) + 1 attempts, each a fresh run.
      assert.equal(readFileSync(counter, 'utf8'), 'run\n'.repeat(3));
      assert.equal(setup.accounting.totals().failures, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** The models of `model` (optimizer sim) with `env` keys set, for the notices an agent target gets. */
  const withEnv = (
    model: Record<string, unknown>,
    envKeys: Partial<ReturnType<typeof defaultConfig>['env']>,
    vars?: NodeJS.ProcessEnv,
  ) => {
    const cfg = defaultConfig();
    Object.assign(cfg.model, { optimizer_backend: 'sim', ...model });
    Object.assign(cfg.env, envKeys);
    return buildModels(cfg, {
      tasks: [],
      testItems: [],
      logger: silentLogger,
      trustedWorkspace: true,
      env: vars ?? { PATH: '/nonexistent' },
    });
  };

  it('says env.max_turns does not bound an agent target (a chat target takes refinement turns)', () => {
    const withTurns = (model: Record<string, unknown>, turns: number, env?: NodeJS.ProcessEnv) =>
      withEnv(model, { max_turns: turns }, env);
    assert.deepEqual(withTurns({ target_backend: 'sim' }, 3).notices, []);
    assert.deepEqual(withTurns({ target_backend: 'sim' }, 1).notices, []);
    const agent = withTurns({ target_backend: 'command', target_command: 'true {prompt}' }, 30, {
      PATH: process.env.PATH ?? '',
    });
    assert.ok(agent.notices.some((n) => /^env\.max_turns: 30 does not bound an agent target/.test(n)));
  });

  it('says env.max_completion_tokens set does not bound an agent target (its CLI sets its own caps)', () => {
    const withCap = (model: Record<string, unknown>, cap: number) =>
      withEnv(model, { max_completion_tokens: cap }, { PATH: process.env.PATH ?? '' }).notices.filter((n) =>
        /max_completion_tokens/.test(n),
      );
    const agent = { target_backend: 'command', target_command: 'true {prompt}' };
    assert.deepEqual(withCap(agent, 4000), [
      'env.max_completion_tokens: 4000 does not bound an agent target: the agent CLI caps its own replies',
    ]);
    // The default (16384, the reference configs' value) and a chat target, which takes it: nothing to say.
    assert.deepEqual(withCap(agent, 16384), []);
    assert.deepEqual(withCap({ target_backend: 'sim' }, 4000), []);
  });

  it('maps the reference names onto presets and refuses what cannot hold', () => {
    const bin = mkdtempSync(join(tmpdir(), 'skillopt-bin-'));
    try {
      for (const p of ['claude', 'codex', 'copilot'])
        writeFileSync(join(bin, p), '#!/bin/sh\n', { mode: 0o755 });
      const env = { PATH: bin };
      const codex = build({ target_backend: 'codex', target: 'gpt-5.5' }, env);
      assert.equal(codex.target.model, 'gpt-5.5');
      // An alias names the preset it is; no notice points at model.target_command (a preset takes none).
      assert.ok(
        codex.notices.includes(
          "target: model backend 'codex' is the codex_exec agent preset here (the Codex CLI)",
        ),
        codex.notices.join('\n'),
      );
      const claude = build({ target_backend: 'claude_code_exec', target: 'claude-x' }, env);
      assert.equal(claude.target.backend, 'command');
      assert.equal(claude.describe.target, 'Claude Code CLI agent claude-x');
      for (const n of [...codex.notices, ...claude.notices]) assert.doesNotMatch(n, /target_command/);
      assert.throws(
        () => build({ target_backend: 'cursor_exec' }, env),
        (e: unknown) => SkillOptError.is(e, 'config') && /not a preset here/.test(e.message),
      );
      assert.throws(
        () => build({ target_backend: 'copilot_exec', copilot_exec_home: '/home/me/.copilot' }, env),
        (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'model.copilot_exec_home',
      );
      assert.throws(
        () => build({ target_backend: 'codex_exec', codex_exec_use_sdk: true }, env),
        (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'model.codex_exec_use_sdk',
      );
      assert.throws(
        () => build({ target_backend: 'claude_code_exec', target_command: 'claude -p {prompt}' }, env),
        (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'model.target_command',
      );
      // A variable each task sets itself would be replaced unsaid: HOME and TMPDIR for every target,
      // the preset's config folder, Copilot's model only when it talks to a base URL.
      assert.throws(
        () =>
          build(
            {
              target_backend: 'claude_code_exec',
              target_env_passthrough: ['HOME', 'CLAUDE_CONFIG_DIR', 'FOO'],
            },
            env,
          ),
        (e: unknown) =>
          SkillOptError.is(e, 'config') &&
          e.place.key === 'model.target_env_passthrough' &&
          / HOME, CLAUDE_CONFIG_DIR cannot pass through/.test(e.message),
      );
      assert.throws(
        () =>
          build(
            { target_backend: 'command', target_command: 'x {prompt}', target_env_passthrough: ['TMPDIR'] },
            env,
          ),
        (e: unknown) => SkillOptError.is(e, 'config') && / TMPDIR cannot pass through/.test(e.message),
      );
      build({ target_backend: 'copilot_exec', target_env_passthrough: ['COPILOT_MODEL', 'FOO'] }, env);
      // The preset keeps the user's own value of this one: passing it is allowed.
      build({ target_backend: 'claude_code_exec', target_env_passthrough: ['CLAUDE_CODE_MAX_RETRIES'] }, env);
      assert.throws(
        () =>
          build(
            {
              target_backend: 'copilot_exec',
              target: 'm',
              target_base_url: 'http://127.0.0.1:1/v1',
              target_env_passthrough: ['COPILOT_MODEL'],
            },
            env,
          ),
        (e: unknown) => SkillOptError.is(e, 'config') && / COPILOT_MODEL cannot pass through/.test(e.message),
      );
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
