/**
 * An agent CLI sees an allow-listed environment (isolation.ts), so a variable of the CLI's own that
 * the user set (a model override, a provider setting, a key helper) would be dropped unsaid. Each
 * one set, by the CLI's prefixes, that does not reach it gets a notice naming it and the way through.
 */
import { referenceVariables } from './envFallbacks';
import type { AgentName, AgentPreset } from './presets';

/** The prefixes of each CLI's own variables. */
const OWN_PREFIXES: Record<AgentName, readonly string[]> = {
  claude: ['ANTHROPIC_', 'CLAUDE_'],
  codex: ['CODEX_', 'OPENAI_'],
  copilot: ['COPILOT_'],
};

/** Set by the preset for each task (its home, config folder, cache): the user's value is replaced on purpose. */
const REPLACED = new Set(['CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'COPILOT_HOME', 'COPILOT_CACHE_HOME']);

/** One notice per variable of the CLI's own that is set in `vars` but does not reach it. */
export function droppedAgentVariables(
  preset: AgentPreset,
  vars: NodeJS.ProcessEnv,
  passthrough: readonly string[],
): string[] {
  const passed = new Set([...preset.passEnv, ...passthrough, ...referenceVariables(preset.name)]);
  const dropped = Object.keys(vars)
    .filter((name) => vars[name] !== undefined && vars[name] !== '')
    .filter((name) => OWN_PREFIXES[preset.name].some((p) => name.startsWith(p)))
    .filter((name) => !passed.has(name) && !REPLACED.has(name))
    .sort();
  return dropped.map(
    (name) =>
      `${name} is set but does not reach ${preset.label} (agents see an allow-listed environment); add it to model.target_env_passthrough to pass it`,
  );
}
