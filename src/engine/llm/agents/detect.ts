/**
 * Which agent CLIs are installed, for pickers (the extension's setup) and messages: each preset's
 * program found where a run would look for it (the configured path, its *_EXEC_PATH variable, or
 * PATH), with its version read from the npm package it belongs to. Nothing is run: starting a CLI
 * can write to the user's home (Copilot unpacks itself on first start).
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AGENT_NAMES, PRESETS, presetProgram, type AgentName, type AgentPreset } from './presets';
import { findOnPath } from './process';

export interface AgentCliStatus {
  agent: AgentName;
  /** `model.target_backend` that selects it. */
  backend: AgentPreset['backend'];
  label: string;
  /** The program a run would start (a name on PATH or a path). */
  program: string;
  /** Its full path; undefined when it is not installed. */
  path?: string;
  /** Its version, when it can be read without running it. */
  version?: string;
  /** How to install it. */
  install: string;
  /** Where to give its path instead: the config key and the environment variable. */
  pathKey: string;
  pathEnv: string;
}

/** The version of the npm package `name` that `file` belongs to, or one in the path (native installs). */
function versionOf(file: string, name: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return undefined;
  }
  for (let dir = dirname(real), i = 0; i < 8; i++, dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        const json = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown; version?: unknown };
        if (json.name === name && typeof json.version === 'string') return json.version;
      } catch {
        // Not a package file we can read: keep looking up.
      }
    }
    if (dirname(dir) === dir) break;
  }
  return /[\\/](\d+\.\d+\.\d+[^\\/]*)(?:[\\/]|$)/.exec(real)?.[1];
}

/** Every agent CLI preset with where its program is and its version; `paths` are the configured *_exec_path values. */
export function detectAgentClis(
  env: NodeJS.ProcessEnv = process.env,
  paths: Partial<Record<AgentName, string>> = {},
): AgentCliStatus[] {
  return AGENT_NAMES.map((agent) => {
    const preset = PRESETS[agent];
    const program = presetProgram(preset, paths[agent] ?? '', env);
    const path = findOnPath(program, env);
    const version = path ? versionOf(path, preset.npmPackage) : undefined;
    return {
      agent,
      backend: preset.backend,
      label: preset.label,
      program,
      ...(path ? { path } : {}),
      ...(version ? { version } : {}),
      install: `npm install -g ${preset.npmPackage}`,
      pathKey: `model.${preset.pathKey}`,
      pathEnv: preset.pathEnv,
    };
  });
}
