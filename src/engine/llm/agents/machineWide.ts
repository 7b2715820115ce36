/**
 * What an agent CLI reads from machine-wide folders an administrator keeps, whatever HOME says, as
 * the pinned CLIs do: Claude Code's managed folder (a CLAUDE.md, managed settings, MCP servers and
 * skills for every user) and Codex's /etc/codex configuration. A fresh home cannot keep them out,
 * so a run says when one is there: it reaches every task, with the skill or without.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentName } from './presets';

/** Claude Code's managed folder on each platform. */
function claudeManagedDir(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return '/Library/Application Support/ClaudeCode';
  if (platform === 'win32') return 'C:\\Program Files\\ClaudeCode';
  return '/etc/claude-code';
}

/** The machine-wide files and folders `agent` reads on `platform`. */
export function machineWidePaths(agent: AgentName, platform: NodeJS.Platform = process.platform): string[] {
  if (agent === 'claude') {
    const dir = claudeManagedDir(platform);
    return [
      'CLAUDE.md',
      'managed-settings.json',
      'managed-settings.d',
      'managed-mcp.json',
      '.claude/skills',
    ].map((f) => join(dir, ...f.split('/')));
  }
  if (agent === 'codex' && platform !== 'win32') {
    return ['config.toml', 'managed_config.toml', 'requirements.toml'].map((f) => join('/etc/codex', f));
  }
  return [];
}

/** The warning for those that exist, or undefined. */
export function machineWideWarning(
  agent: AgentName,
  label: string,
  exists: (path: string) => boolean = existsSync,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const found = machineWidePaths(agent, platform).filter(exists);
  if (!found.length) return undefined;
  return `${label} reads machine-wide settings that no isolated home keeps out, so they reach every task (scores included): ${found.join(', ')}. Train where they are absent, or make sure they say nothing about the skill's tasks`;
}
