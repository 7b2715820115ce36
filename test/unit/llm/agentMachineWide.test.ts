import assert from 'node:assert/strict';
import { join } from 'node:path';
import { machineWidePaths, machineWideWarning } from '../../../src/engine/llm/agents/machineWide';

/**
 * An administrator's files that Claude Code and Codex read whatever HOME says (a fresh home keeps
 * them out of nothing): the run names the ones present, since they reach every task and its score.
 */
describe('llm/agents: machine-wide settings the isolated home cannot keep out', () => {
  it('lists where each CLI reads them, per platform', () => {
    assert.deepEqual(machineWidePaths('claude', 'linux'), [
      join('/etc/claude-code', 'CLAUDE.md'),
      join('/etc/claude-code', 'managed-settings.json'),
      join('/etc/claude-code', 'managed-settings.d'),
      join('/etc/claude-code', 'managed-mcp.json'),
      join('/etc/claude-code', '.claude', 'skills'),
    ]);
    assert.ok(
      machineWidePaths('claude', 'darwin')[0].startsWith(join('/Library/Application Support/ClaudeCode')),
    );
    assert.deepEqual(machineWidePaths('codex', 'linux'), [
      join('/etc/codex', 'config.toml'),
      join('/etc/codex', 'managed_config.toml'),
      join('/etc/codex', 'requirements.toml'),
    ]);
    assert.deepEqual(machineWidePaths('copilot', 'linux'), []);
  });

  it('names only those present, and says nothing when none is', () => {
    const planted = new Set([join('/etc/claude-code', 'CLAUDE.md'), join('/etc/codex', 'requirements.toml')]);
    const has = (p: string): boolean => planted.has(p);
    assert.equal(
      machineWideWarning('claude', 'Claude Code', has, 'linux'),
      `Claude Code reads machine-wide settings that no isolated home keeps out, so they reach every task (scores included): ${join('/etc/claude-code', 'CLAUDE.md')}. Train where they are absent, or make sure they say nothing about the skill's tasks`,
    );
    assert.match(
      machineWideWarning('codex', 'Codex', has, 'linux') ?? '',
      /requirements\.toml\. Train where/,
    );
    assert.equal(
      machineWideWarning('claude', 'Claude Code', () => false, 'linux'),
      undefined,
    );
    assert.equal(
      machineWideWarning('copilot', 'Copilot CLI', () => true, 'linux'),
      undefined,
    );
  });
});
