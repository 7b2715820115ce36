/**
 * An agent CLI sees an allow-listed environment (isolation.ts), so a variable of the CLI's own that
 * the user set (a model override, a provider setting, a key helper) would be dropped unsaid. Each
 * one set, by the CLI's prefixes, that does not reach it gets a notice naming it and the way through;
 * one the preset sets for each task (its home, its settings) says so, since no passthrough changes it.
 */
import { referenceVariables } from './envFallbacks';
import type { AgentName, AgentPreset, AgentSettings } from './presets';

/** The prefixes of each CLI's own variables. */
const OWN_PREFIXES: Record<AgentName, readonly string[]> = {
  claude: ['ANTHROPIC_', 'CLAUDE_'],
  codex: ['CODEX_', 'OPENAI_'],
  copilot: ['COPILOT_'],
};

/** One notice per variable of the CLI's own that is set in `vars` but does not reach it as set. */
export function droppedAgentVariables(
  preset: AgentPreset,
  vars: NodeJS.ProcessEnv,
  passthrough: readonly string[],
  settings: AgentSettings,
): string[] {
  // The preset's own values for these settings (the folders are the task's, unknown here).
  const task = { root: '', work: '', home: '', tmp: '' };
  const replaced = preset.taskEnv({ dirs: task, settings, parentEnv: vars, sharedCache: '' });
  const passed = new Set([...preset.passEnv, ...passthrough, ...referenceVariables(preset.name)]);
  const own = Object.keys(vars)
    .filter((name) => vars[name] !== undefined && vars[name] !== '')
    .filter((name) => OWN_PREFIXES[preset.name].some((p) => name.startsWith(p)))
    .sort();
  return own.flatMap((name) => {
    if (name in replaced) {
      return replaced[name] === vars[name]
        ? []
        : [
            `${name} is set but ${preset.label} gets SkillOpt's own value for each task (its isolated home and settings; README "Agent targets")`,
          ];
    }
    if (passed.has(name)) return [];
    return [
      `${name} is set but does not reach ${preset.label} (agents see an allow-listed environment); add it to model.target_env_passthrough to pass it`,
    ];
  });
}
