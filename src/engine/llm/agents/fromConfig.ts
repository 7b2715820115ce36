/**
 * The agent target from the config: the reference's backend names mapped onto the presets, the
 * chosen agent's *_exec_* keys (refusing those that cannot hold here), its concurrency and the
 * CommandBackend that runs it.
 */
import { availableParallelism, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { SkillOptConfig } from '../../config/schema';
import { SkillOptError } from '../../errors';
import type { Logger } from '../../log';
import type { ModelEnvironment } from '../../models';
import { isSkillFolder } from '../../skill/package/folder';
import { AgentRunError, CommandBackend, type AgentName, type AgentSettings } from '../command';
import type { ModelClient } from '../types';
import { agentEnv, emptyAnswerRetries } from './envFallbacks';
import { PRESETS, presetProgram } from './presets';
import { droppedAgentVariables } from './droppedEnv';
import { taskProcessEnv } from './isolation';
import { findOnPath } from './process';

/** The reference's agent-target names (§10.1) and ours, mapped onto the presets. */
const AGENT_BY_BACKEND: Record<string, AgentName> = {
  claude_code_exec: 'claude',
  codex_exec: 'codex',
  codex: 'codex',
  copilot_exec: 'copilot',
};

export function agentFor(backendName: string): AgentName | undefined {
  const norm = backendName.trim().toLowerCase().replace(/-/g, '_');
  if (/^cursor(_exec|_agent)?$/.test(norm)) {
    throw new SkillOptError('config', `backend '${backendName}' (Cursor's agent CLI) is not a preset here`, {
      key: 'model.target_backend',
      fix: 'use claude_code_exec, codex_exec or copilot_exec, or set target_backend: command with model.target_command (e.g. "cursor-agent -p {prompt}"), which runs it with the skill in .agents/skills and its stdout as the answer',
    });
  }
  return AGENT_BY_BACKEND[norm];
}

function refuse(key: string, problem: string, fix: string): never {
  throw new SkillOptError('config', problem, { key: `model.${key}`, fix });
}

/**
 * The *_exec_* keys of the chosen agent as AgentSettings (blank ones filled from the reference's
 * environment variables, envFallbacks.ts), refusing the ones that cannot hold here.
 */
function agentSettings(
  cfg: SkillOptConfig,
  agent: AgentName | undefined,
  vars: NodeJS.ProcessEnv,
): {
  settings: AgentSettings;
  program?: string;
  notices: string[];
} {
  const env = agent ? agentEnv(cfg.model, agent, vars) : undefined;
  const m = env?.model ?? cfg.model;
  const notices = env?.notices ?? [];
  const base: AgentSettings = {
    ...(m.target ? { model: m.target } : {}),
    ...(m.target_base_url ? { baseUrl: m.target_base_url } : {}),
  };
  // A value a variable stood in for is refused naming the variable.
  const refuseSet = (key: string, problem: string, fix: string): never => {
    const from = env?.origin.get(key);
    return from
      ? refuse(key, `${from}=${vars[from]?.trim()} (standing for model.${key}): ${problem}`, `unset ${from}`)
      : refuse(key, problem, fix);
  };
  const sdk = (key: string, value: unknown): void => {
    // The reference's SDK spellings (its _sdk_mode).
    if (['1', 'true', 'yes', 'on', 'sdk'].includes(String(value).trim().toLowerCase())) {
      refuseSet(
        key,
        'SDK mode is not available: agent targets run the CLI',
        `remove ${key} (or set it to auto)`,
      );
    }
  };
  switch (agent) {
    case 'claude': {
      sdk('claude_code_exec_use_sdk', m.claude_code_exec_use_sdk);
      if (m.claude_code_exec_profile) {
        refuseSet(
          'claude_code_exec_profile',
          'Claude Code has no profiles',
          'remove it; pass settings through model.target, model.target_base_url or the environment',
        );
      }
      return {
        notices,
        program: presetProgram(PRESETS.claude, m.claude_code_exec_path, vars),
        settings: {
          ...base,
          ...(m.claude_code_exec_effort ? { effort: m.claude_code_exec_effort } : {}),
          ...(m.claude_code_exec_max_thinking_tokens
            ? { maxThinkingTokens: m.claude_code_exec_max_thinking_tokens }
            : {}),
        },
      };
    }
    case 'codex': {
      sdk('codex_exec_use_sdk', m.codex_exec_use_sdk);
      return {
        notices,
        program: presetProgram(PRESETS.codex, m.codex_exec_path, vars),
        settings: {
          ...base,
          sandbox: m.codex_exec_sandbox || 'workspace-write',
          ...(m.codex_exec_profile ? { profile: m.codex_exec_profile } : {}),
          // `none` sends no effort, as in the reference.
          ...(m.codex_exec_reasoning_effort && m.codex_exec_reasoning_effort !== 'none'
            ? { effort: m.codex_exec_reasoning_effort }
            : {}),
          ...(m.codex_exec_approval_policy ? { approvalPolicy: m.codex_exec_approval_policy } : {}),
          networkAccess: m.codex_exec_network_access,
          webSearch: m.codex_exec_web_search,
        },
      };
    }
    case 'copilot': {
      if (m.copilot_exec_home) {
        refuseSet(
          'copilot_exec_home',
          'a shared Copilot home would carry your sessions, instructions and settings into every task',
          'remove it: each task gets a fresh COPILOT_HOME; pass a token with COPILOT_GITHUB_TOKEN, or use model.target_base_url',
        );
      }
      return {
        notices,
        program: presetProgram(PRESETS.copilot, m.copilot_exec_path, vars),
        settings: { ...base, allowAllTools: m.copilot_exec_allow_all_tools },
      };
    }
    case undefined:
      return { settings: base, notices };
  }
}

/**
 * Agent processes at once when limits.agent_concurrency is 0: one per core, ~1 GB of memory each,
 * at most 8. The machine's figures are parameters so the rule can be checked on any machine.
 */
export function defaultAgentConcurrency(
  cores: number = availableParallelism(),
  memoryBytes: number = totalmem(),
): number {
  const byMemory = Math.floor(memoryBytes / 1024 ** 3);
  return Math.max(1, Math.min(cores, byMemory, 8));
}

/**
 * A name in model.target_env_passthrough that each task sets itself (its home, temp and config
 * folders, the preset's settings) would be replaced unsaid: refused, naming them.
 */
function refuseOverriddenPassthrough(
  names: readonly string[],
  agent: AgentName | undefined,
  settings: AgentSettings,
): void {
  const dirs = { root: '', work: '', home: '', tmp: '' };
  // A variable the preset takes from the user's environment (CLAUDE_CODE_MAX_RETRIES) keeps this value.
  const passed = '\0passed';
  const parentEnv = Object.fromEntries(names.map((n) => [n, passed]));
  const own: Record<string, string> = {
    ...taskProcessEnv(dirs, ''),
    ...(agent ? PRESETS[agent].taskEnv({ dirs, settings, parentEnv, sharedCache: '' }) : {}),
  };
  const clash = names.filter((n) => n in own && own[n] !== passed);
  if (clash.length) {
    refuse(
      'target_env_passthrough',
      `${clash.join(', ')} cannot pass through: each agent task sets ${clash.length > 1 ? 'them' : 'it'} itself (its isolated home, temp and config folders, its settings)`,
      `remove ${clash.length > 1 ? 'them' : 'it'}; the CLI's credentials reach it as the README's "Agent targets" says (its key variables, or its login file copied into each home)`,
    );
  }
}

/** The `command` target: a preset agent CLI (claude_code_exec, codex_exec, copilot_exec) or a custom command. */
export function buildAgentBackend(
  cfg: SkillOptConfig,
  env: ModelEnvironment & { logger: Logger; notices?: string[] },
): CommandBackend {
  const m = cfg.model;
  const vars = env.env ?? process.env;
  const agent = agentFor(m.target_backend);
  if (agent && m.target_command) {
    refuse(
      'target_command',
      `target_command and target_backend '${m.target_backend}' both say what to run`,
      `remove one: the ${agent} preset runs its CLI itself (set its program with the *_exec_path key)`,
    );
  }
  if (!agent && !m.target_command) {
    refuse(
      'target_command',
      'the command backend needs a command to run',
      'set model.target_backend to claude_code_exec, codex_exec or copilot_exec, or give model.target_command (placeholders: {prompt} {task_file} {skill_file} {workspace})',
    );
  }
  const { settings, program, notices } = agentSettings(cfg, agent, vars);
  refuseOverriddenPassthrough(m.target_env_passthrough, agent, settings);
  env.notices?.push(...notices);
  if (agent)
    env.notices?.push(...droppedAgentVariables(PRESETS[agent], vars, m.target_env_passthrough, settings));
  // A key the user stored for this provider is the target's own: it may reach the agent.
  const shared: Record<string, string> = {};
  if (agent === 'claude' && env.keys?.anthropic && !vars.ANTHROPIC_API_KEY)
    shared.ANTHROPIC_API_KEY = env.keys.anthropic;
  if (agent === 'codex' && env.keys?.openai && !vars.OPENAI_API_KEY) shared.OPENAI_API_KEY = env.keys.openai;
  const backend = new CommandBackend({
    ...(agent ? { agent } : { command: m.target_command }),
    ...(program ? { program } : {}),
    settings,
    delivery: m.target_delivery,
    // The default name yields to the skill's own front-matter name (see rollout); a set one wins.
    ...(m.target_skill_name !== 'skill' ? { skillName: m.target_skill_name } : {}),
    timeoutMs: cfg.env.exec_timeout * 1000,
    trusted: env.trustedWorkspace === true,
    model: m.target || agent || 'agent',
    ...(m.target_workspace_root ? { workspaceRoot: m.target_workspace_root } : {}),
    // The agent gets the skill as a folder, as it is shipped: references/, scripts/, assets/ beside it.
    // A skill folder (a package) brings its files in the skill text itself.
    ...(cfg.env.skill_init && !isSkillFolder(cfg.env.skill_init)
      ? { skillFolder: dirname(cfg.env.skill_init) }
      : {}),
    keepWorkspaces: m.target_keep_workspaces,
    ...(agent ? { emptyAnswerRetries: emptyAnswerRetries(vars) } : {}),
    passEnv: m.target_env_passthrough,
    parentEnv: vars,
    ...(Object.keys(shared).length ? { env: shared } : {}),
    logger: env.logger,
  });
  // Before anything is spent (validate included): the program must be there.
  const exe = agent ? backend.programName : undefined;
  if (exe && !findOnPath(exe, vars)) {
    throw new AgentRunError('not_installed', `${backend.label} was not found on PATH`, {
      key: `model.${backend.preset!.pathKey}`,
      fix: `install it (npm install -g ${backend.preset!.npmPackage}) or give its full path in model.${backend.preset!.pathKey}`,
    });
  }
  return backend;
}

/**
 * The agent target's client: the model client rebuilds a failed call's error as a plain
 * SkillOptError (redacted); this hands the caller the backend's AgentRunError instead, with its
 * kind, transient flag and trace, and the client's cleaned text.
 */
export function keepAgentErrors(client: ModelClient, backend: CommandBackend): ModelClient {
  return {
    role: client.role,
    backend: client.backend,
    billedProvider: backend.billedProvider,
    model: client.model,
    async chat(req, signal) {
      try {
        return await client.chat(req, signal);
      } catch (err) {
        const original = req.task ? backend.lastError(req.task) : undefined;
        if (original && err instanceof SkillOptError && err.reason !== 'cancelled') {
          throw original.withText(err.problem, err.place.fix);
        }
        throw err;
      }
    },
  };
}
