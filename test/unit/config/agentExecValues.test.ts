import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/engine/config/load';
import { defaultConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { buildAgentBackend } from '../../../src/engine/llm/agents/fromConfig';
import { silentLogger } from '../../../src/engine/log';
import { expectConfigError, lineOf, tempDir, write } from './helpers';

/**
 * The agent CLIs' enumerated *_exec_* values: a value the CLI does not take is refused when the
 * config is read (so `skillopt validate` says it, before any call), not found out task by task
 * (Codex exits on a bad sandbox or approval policy; Claude Code accepts a bad --effort and ignores it).
 */
describe('config: the agent CLIs’ *_exec_* values', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  const bad: Array<[string, string, string]> = [
    [
      'codex_exec_sandbox: bogus',
      'model.codex_exec_sandbox',
      'read-only, workspace-write, danger-full-access',
    ],
    ['sandbox: full', 'model.codex_exec_sandbox', 'read-only, workspace-write, danger-full-access'],
    ['codex_exec_approval_policy: sometimes', 'model.codex_exec_approval_policy', 'untrusted, on-failure'],
    ['claude_code_exec_effort: ultra', 'model.claude_code_exec_effort', 'low, medium, high, xhigh, max'],
    // The reference's --reasoning_effort choices; what OpenAI's reasoning models take for Codex.
    ['reasoning_effort: "1"', 'model.reasoning_effort', 'low, medium, high, xhigh, max'],
    ['reasoning_effort: minimal', 'model.reasoning_effort', 'low, medium, high, xhigh, max'],
    [
      'codex_exec_reasoning_effort: max',
      'model.codex_exec_reasoning_effort',
      'none, minimal, low, medium, high, xhigh',
    ],
  ];
  for (const [line, key, values] of bad) {
    it(`refuses ${line} with its line and the values the CLI takes`, () => {
      const text = `model:\n  target_backend: codex_exec\n  ${line}\n`;
      const file = write(dir, 'c.yaml', text);
      expectConfigError(() => loadConfig(file), {
        file,
        line: lineOf(text, line),
        key,
        includes: [values, 'got "'],
      });
    });
  }

  it('refuses a bad value given as a legacy flag or with --cfg-options', () => {
    const file = write(dir, 'c.yaml', 'model:\n  target_backend: claude_code_exec\n');
    expectConfigError(() => loadConfig(file, { legacyArgs: ['--codex_exec_sandbox', 'open'] }), {
      file: '--codex_exec_sandbox',
      key: 'model.codex_exec_sandbox',
    });
    expectConfigError(() => loadConfig(file, { legacyArgs: ['--reasoning_effort', '1'] }), {
      file: '--reasoning_effort',
      key: 'model.reasoning_effort',
      includes: ['low, medium, high, xhigh, max'],
    });
    expectConfigError(() => loadConfig(file, { overrides: ['model.claude_code_exec_effort=extreme'] }), {
      file: '--cfg-options',
      key: 'model.claude_code_exec_effort',
    });
  });

  it('takes every value the CLIs take, and blank for their default', () => {
    const good = [
      'codex_exec_sandbox: read-only',
      'codex_exec_sandbox: danger-full-access',
      'codex_exec_sandbox: ""',
      'codex_exec_approval_policy: on-request',
      'codex_exec_approval_policy: never',
      'claude_code_exec_effort: xhigh',
      'claude_code_exec_effort: ""',
      'reasoning_effort: ""',
      'reasoning_effort: xhigh',
      'codex_exec_reasoning_effort: none',
      'codex_exec_reasoning_effort: minimal',
    ];
    for (const line of good) {
      const file = write(dir, 'c.yaml', `model:\n  ${line}\n`);
      assert.doesNotThrow(() => loadConfig(file), line);
    }
    assert.equal(
      loadConfig(write(dir, 'd.yaml', 'train:\n  seed: 1\n')).config.model.claude_code_exec_effort,
      'medium',
    );
  });

  it('refuses a CODEX_EXEC_SANDBOX the config leaves to the environment, before looking for the program', () => {
    const cfg = defaultConfig();
    cfg.model.target_backend = 'codex_exec';
    const build = (value: string) => () =>
      buildAgentBackend(cfg, {
        env: { PATH: dir, CODEX_EXEC_SANDBOX: value },
        trustedWorkspace: true,
        logger: silentLogger,
      });
    assert.throws(
      build('wide-open'),
      (e: unknown) =>
        SkillOptError.is(e, 'config') &&
        e.message.startsWith('model.codex_exec_sandbox: ') &&
        e.message.includes("CODEX_EXEC_SANDBOX is 'wide-open'") &&
        e.message.includes('read-only, workspace-write, danger-full-access'),
    );
    // A good one gets as far as the program, which is not on this PATH.
    assert.throws(build('read-only'), /was not found on PATH/);
  });
});
