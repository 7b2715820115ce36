/**
 * The agent CLIs the guided setup offers as targets (Claude Code, Codex, Copilot CLI), each with
 * whether it is installed where a run would find it and its version, or how to install it. Pure
 * (no `vscode`): the setup turns these into quick-pick items.
 */
import { detectAgentClis, type AgentCliStatus } from '../../engine/llm/agents/detect';
import { PRESETS } from '../../engine/llm/agents/presets';

export type AgentBackend = AgentCliStatus['backend'];

export interface AgentTargetOption {
  backend: AgentBackend;
  label: string;
  /** Short status beside the label: `installed · 2.1.3` or `not installed`. */
  description: string;
  /** The line under it: where it is and what it does, or how to install it. */
  detail: string;
  installed: boolean;
  /** For a missing CLI: the command that installs it. */
  install: string;
  /** The message shown when a missing CLI is picked. */
  missingMessage: string;
}

export function agentTargetOptions(
  statuses: readonly AgentCliStatus[] = detectAgentClis(),
): AgentTargetOption[] {
  return statuses.map((s) => {
    const installed = s.path !== undefined;
    const where = PRESETS[s.agent].skillRoot;
    return {
      backend: s.backend,
      label: `$(terminal) ${s.label} (${s.backend})`,
      description: installed ? `installed${s.version ? ` · ${s.version}` : ''}` : 'not installed',
      detail: installed
        ? `${s.path} · runs the real agent per task in an isolated home; the skill goes to ${where}/`
        : `${/[\\/]/.test(s.program) ? `Not found at ${s.program}` : 'Not found on PATH'}. Install: ${s.install} (or set ${s.pathEnv} to its path)`,
      installed,
      install: s.install,
      missingMessage: `${s.label} (${s.program}) is not installed: run "${s.install}", or set ${s.pathEnv} (or ${s.pathKey} in skillopt.yaml) to its path, then pick it again.`,
    };
  });
}

export function isAgentBackend(backend: string): backend is AgentBackend {
  return Object.values(PRESETS).some((p) => p.backend === backend);
}
