import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig, type SkillOptConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { silentLogger } from '../../../src/engine/log';
import { detectAgentClis } from '../../../src/engine/llm/agents/detect';
import { buildAgentBackend } from '../../../src/engine/llm/agents/fromConfig';
import { buildModels } from '../../../src/engine/models';

/**
 * The reference's environment fallbacks for the agent CLIs (backend_config.py): each variable
 * stands in for its blank *_exec_* key with a notice, loses to a set key, is checked as the key is,
 * and matters only for the agent in use.
 */
describe('llm/agents: the reference’s environment variables for the agent CLIs', () => {
  let bin: string;
  before(() => {
    bin = mkdtempSync(join(tmpdir(), 'skillopt-agentenv-'));
    for (const p of ['codex', 'claude', 'copilot', 'my-codex']) {
      writeFileSync(join(bin, p), '#!/bin/sh\n');
      chmodSync(join(bin, p), 0o755);
    }
  });
  after(() => rmSync(bin, { recursive: true, force: true }));

  function build(backend: string, vars: Record<string, string>, edit?: (m: SkillOptConfig['model']) => void) {
    const cfg = defaultConfig();
    cfg.model.target_backend = backend;
    edit?.(cfg.model);
    const notices: string[] = [];
    const b = buildAgentBackend(cfg, {
      env: { PATH: bin, ...vars },
      trustedWorkspace: true,
      logger: silentLogger,
      notices,
    });
    return { settings: b.cacheParams.settings as Record<string, unknown>, program: b.programName, notices };
  }

  it('Codex: each variable fills its blank key, aliases included, with one notice naming it', () => {
    const r = build('codex_exec', {
      CODEX_CLI_BIN: join(bin, 'my-codex'),
      CODEX_SANDBOX_MODE: 'read-only',
      CODEX_EXEC_PROFILE: 'fast',
      CODEX_EXEC_REASONING_EFFORT: 'high',
      CODEX_EXEC_APPROVAL_POLICY: 'on-request',
      CODEX_EXEC_NETWORK_ACCESS: 'on',
      CODEX_EXEC_WEB_SEARCH: '0',
    });
    assert.equal(r.program, join(bin, 'my-codex'));
    assert.deepEqual(
      [
        r.settings.sandbox,
        r.settings.profile,
        r.settings.effort,
        r.settings.approvalPolicy,
        r.settings.networkAccess,
        r.settings.webSearch,
      ],
      ['read-only', 'fast', 'high', 'on-request', true, false],
    );
    for (const v of [
      'CODEX_CLI_BIN',
      'CODEX_SANDBOX_MODE=read-only',
      'CODEX_EXEC_PROFILE=fast',
      'CODEX_EXEC_REASONING_EFFORT=high',
      'CODEX_EXEC_APPROVAL_POLICY=on-request',
      'CODEX_EXEC_NETWORK_ACCESS=on',
      'CODEX_EXEC_WEB_SEARCH=0',
    ]) {
      assert.equal(r.notices.filter((n) => n.startsWith(v)).length, 1, `${v} in ${r.notices.join('\n')}`);
    }
    assert.equal(r.notices.length, 7);
    assert.match(r.notices[0], /stands for model\.codex_exec_path, which the config leaves blank/);
    // VS Code's picker finds the program the run starts.
    const picked = detectAgentClis({ PATH: bin, CODEX_CLI_BIN: join(bin, 'my-codex') }).find(
      (c) => c.agent === 'codex',
    );
    assert.equal(picked?.path, join(bin, 'my-codex'));
  });

  it('Codex: a key set in the config wins, and the first variable of an alias list wins over the others', () => {
    const r = build(
      'codex_exec',
      { CODEX_EXEC_PROFILE: 'fast', CODEX_EXEC_SANDBOX: 'read-only', CODEX_SANDBOX: 'danger-full-access' },
      (m) => (m.codex_exec_profile = 'mine'),
    );
    assert.equal(r.settings.profile, 'mine');
    assert.equal(r.settings.sandbox, 'read-only');
    assert.deepEqual(r.notices, [
      'CODEX_EXEC_SANDBOX=read-only stands for model.codex_exec_sandbox, which the config leaves blank (as in the reference)',
      'CODEX_SANDBOX is set, but CODEX_EXEC_SANDBOX wins over it, as in the reference',
      'CODEX_EXEC_PROFILE is set, but model.codex_exec_profile (mine) wins over it, as in the reference',
    ]);
  });

  it('refuses a value the key would refuse, naming the variable and the values', () => {
    const refused: Array<[string, Record<string, string>, string, RegExp]> = [
      ['codex_exec', { CODEX_EXEC_REASONING_EFFORT: 'max' }, 'codex_exec_reasoning_effort', /none, minimal/],
      ['codex_exec', { CODEX_EXEC_APPROVAL_POLICY: 'always' }, 'codex_exec_approval_policy', /on-request/],
      ['codex_exec', { CODEX_SANDBOX: 'open' }, 'codex_exec_sandbox', /read-only, workspace-write/],
      ['codex_exec', { CODEX_EXEC_NETWORK_ACCESS: 'maybe' }, 'codex_exec_network_access', /true, false/],
      ['codex_exec', { CODEX_EXEC_USE_SDK: '1' }, 'codex_exec_use_sdk', /SDK mode is not available/],
      [
        'copilot_exec',
        { COPILOT_EXEC_ALLOW_ALL_TOOLS: 'all' },
        'copilot_exec_allow_all_tools',
        /true, false/,
      ],
      ['copilot_exec', { COPILOT_EXEC_HOME: '/tmp/h' }, 'copilot_exec_home', /shared Copilot home/],
    ];
    for (const [backend, vars, key, values] of refused) {
      const name = Object.keys(vars)[0];
      assert.throws(
        () => build(backend, vars),
        (e: unknown) =>
          SkillOptError.is(e, 'config') &&
          e.message.startsWith(`model.${key}: `) &&
          e.message.includes(name) &&
          values.test(e.message),
        `${name}=${vars[name]}`,
      );
    }
  });

  it('Copilot: COPILOT_EXEC_ALLOW_ALL_TOOLS fills the null key', () => {
    const r = build('copilot_exec', { COPILOT_EXEC_ALLOW_ALL_TOOLS: 'yes' });
    assert.equal(r.settings.allowAllTools, true);
    assert.deepEqual(r.notices, [
      'COPILOT_EXEC_ALLOW_ALL_TOOLS=yes stands for model.copilot_exec_allow_all_tools, which the config leaves blank (as in the reference)',
    ]);
  });

  it("Claude Code: the variables the reference's scripts overwrite with the config are named as not read", () => {
    const r = build('claude_code_exec', { CLAUDE_CODE_EXEC_EFFORT: 'high', CLAUDE_CODE_EXEC_PROFILE: 'p' });
    assert.equal(r.settings.effort, 'medium');
    assert.deepEqual(r.notices, [
      `CLAUDE_CODE_EXEC_PROFILE is not read: the reference's train and eval scripts overwrite it with model.claude_code_exec_profile (here ""); set that key instead`,
      "CLAUDE_CODE_EXEC_EFFORT is not read: the reference's train and eval scripts overwrite it with model.claude_code_exec_effort (here medium); set that key instead",
    ]);
  });

  it('the retired and the re-run variables say so; another agent’s variables say nothing', () => {
    const r = build('codex_exec', { CODEX_EXEC_FULL_AUTO: '1', EXEC_EMPTY_RESPONSE_RETRIES: '2' });
    assert.match(
      r.notices[0],
      /^CODEX_EXEC_FULL_AUTO is retired .* has no effect; use model\.codex_exec_sandbox/,
    );
    assert.match(
      r.notices[1],
      /^EXEC_EMPTY_RESPONSE_RETRIES=2: an agent run with an empty answer is run again up to 2/,
    );
    const other = build('claude_code_exec', {
      CODEX_EXEC_REASONING_EFFORT: 'bogus',
      COPILOT_EXEC_HOME: '/tmp/h',
      CODEX_EXEC_FULL_AUTO: '1',
    });
    assert.deepEqual(other.notices, []);
  });

  it('the notices reach the run’s notices (validate and the run’s start show them)', () => {
    const cfg = defaultConfig();
    cfg.model.target_backend = 'codex_exec';
    cfg.model.optimizer_backend = 'sim';
    const models = buildModels(cfg, {
      env: { PATH: bin, CODEX_EXEC_PROFILE: 'fast' },
      trustedWorkspace: true,
      tasks: [],
      testItems: [],
      logger: silentLogger,
    });
    assert.ok(
      models.notices.includes(
        'CODEX_EXEC_PROFILE=fast stands for model.codex_exec_profile, which the config leaves blank (as in the reference)',
      ),
      models.notices.join('\n'),
    );
  });

  it('names each variable of the CLI’s own that its allow-listed environment drops, and the way through', () => {
    const dropped = (notices: string[]) => notices.filter((n) => n.includes('does not reach'));
    const copilot = build('copilot_exec', {
      // Provider settings reach it; the reference's variables are SkillOpt's; its home is the task's.
      COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:1/v1',
      COPILOT_PROVIDER_API_KEY_COMMAND: 'print-key',
      COPILOT_PROVIDER_MAX_PROMPT_TOKENS: '8000',
      COPILOT_PROVIDER_WIRE_MODEL: 'local-model',
      COPILOT_EXEC_ALLOW_ALL_TOOLS: 'false',
      COPILOT_HOME: '/somewhere',
      COPILOT_CUSTOM_INSTRUCTIONS_DIRS: '/my/instructions',
      OPENAI_LOG: 'debug',
    });
    assert.deepEqual(dropped(copilot.notices), [
      'COPILOT_CUSTOM_INSTRUCTIONS_DIRS is set but does not reach Copilot CLI (agents see an allow-listed environment); add it to model.target_env_passthrough to pass it',
    ]);
    const passed = build('copilot_exec', { COPILOT_CUSTOM_INSTRUCTIONS_DIRS: '/x' }, (m) => {
      m.target_env_passthrough = ['COPILOT_CUSTOM_INSTRUCTIONS_DIRS'];
    });
    assert.deepEqual(dropped(passed.notices), []);
    const claude = build('claude_code_exec', {
      ANTHROPIC_API_KEY: 'k',
      ANTHROPIC_SMALL_FAST_MODEL: 'claude-haiku',
      CLAUDE_CODE_EXEC_EFFORT: 'high',
      CLAUDE_CONFIG_DIR: '/mine',
      CODEX_HOME: '/theirs',
    });
    assert.deepEqual(dropped(claude.notices), [
      'ANTHROPIC_SMALL_FAST_MODEL is set but does not reach Claude Code (agents see an allow-listed environment); add it to model.target_env_passthrough to pass it',
    ]);
    const codex = build('codex_exec', {
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: 'http://x',
      CODEX_SANDBOX: 'read-only',
      CODEX_QUIET_MODE: '1',
    });
    assert.deepEqual(dropped(codex.notices), [
      'CODEX_QUIET_MODE is set but does not reach Codex (agents see an allow-listed environment); add it to model.target_env_passthrough to pass it',
    ]);
  });

  it('says which of the CLI’s own variables the preset sets for each task instead (no passthrough changes them)', () => {
    const replaced = (notices: string[]) => notices.filter((n) => n.includes("SkillOpt's own value"));
    const says = (name: string, label: string) =>
      `${name} is set but ${label} gets SkillOpt's own value for each task (its isolated home and settings; README "Agent targets")`;
    const claude = build('claude_code_exec', {
      ANTHROPIC_API_KEY: 'k',
      CLAUDE_CONFIG_DIR: '/mine',
      // Set by the preset to the user's own value: it reaches the CLI as set.
      CLAUDE_CODE_MAX_RETRIES: '5',
      // Was named with "add it to model.target_env_passthrough", which the preset's value overrides.
      CLAUDE_CODE_DISABLE_AUTO_MEMORY: '0',
    });
    assert.deepEqual(replaced(claude.notices), [
      says('CLAUDE_CODE_DISABLE_AUTO_MEMORY', 'Claude Code'),
      says('CLAUDE_CONFIG_DIR', 'Claude Code'),
    ]);
    assert.deepEqual(
      claude.notices.filter((n) => n.includes('target_env_passthrough')),
      [],
    );
    // COPILOT_MODEL is the preset's only with a base URL; without one it is the user's to pass through.
    const own = {
      COPILOT_HOME: '/somewhere',
      COPILOT_MODEL: 'my-model',
      COPILOT_OTEL_FILE_EXPORTER_PATH: '/o',
    };
    const viaGitHub = build('copilot_exec', own);
    assert.deepEqual(replaced(viaGitHub.notices), [
      says('COPILOT_HOME', 'Copilot CLI'),
      says('COPILOT_OTEL_FILE_EXPORTER_PATH', 'Copilot CLI'),
    ]);
    assert.ok(viaGitHub.notices.some((n) => n.startsWith('COPILOT_MODEL is set but does not reach')));
    const viaProvider = build('copilot_exec', own, (m) => {
      m.target_base_url = 'http://127.0.0.1:1/v1';
      m.target = 'local-model';
    });
    assert.deepEqual(replaced(viaProvider.notices), [
      says('COPILOT_HOME', 'Copilot CLI'),
      says('COPILOT_MODEL', 'Copilot CLI'),
      says('COPILOT_OTEL_FILE_EXPORTER_PATH', 'Copilot CLI'),
    ]);
  });
});
