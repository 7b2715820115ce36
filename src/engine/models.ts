import { homedir } from 'node:os';
import { join } from 'node:path';
import type { SkillOptConfig } from './config/schema';
import type { TaskItem } from './data/tasks';
import { SkillOptError } from './errors';
import type { Logger } from './log';
import { Accounting } from './llm/accounting';
import { createSdkBackend, resolveBackendName } from './llm/backends';
import { ResponseCache } from './llm/cache';
import { createModelClient } from './llm/client';
import { CommandBackend, commandPreset } from './llm/command';
import { LimitRegistry, limitsFromConfig } from './llm/limiter';
import { SimOptimizerBackend } from './llm/sim/optimizer';
import { SimTargetBackend } from './llm/sim/target';
import type { ChatBackend, ModelClient, ModelRole } from './llm/types';
import { VscodeLmBackend, type LmBridge } from './llm/vscodeLm';
import { guardOptimizer } from './train/leakGuard';
import { API_KEY_ENV_VARS, type BackendKind, type KeyProvider } from '../protocol/vocabulary';

/** What the host environment supplies: keys (never read from disk), the vscode.lm bridge, trust. */
export interface ModelEnvironment {
  /** Provider keys from SecretStorage; environment variables are read when absent. */
  keys?: Partial<Record<KeyProvider, string>>;
  env?: NodeJS.ProcessEnv;
  lmBridge?: LmBridge;
  /** The `command` backend runs only in a trusted workspace. CLI: true; extension: workspace trust. */
  trustedWorkspace?: boolean;
  /** Default: ~/.cache/skillopt/responses (shared across runs and eval-only). */
  cacheDir?: string;
}

export interface ModelSetup {
  optimizer: ModelClient;
  target: ModelClient;
  accounting: Accounting;
  cache?: ResponseCache;
  simulated: boolean;
  notices: string[];
  describe: { optimizer: string; target: string };
  close(): Promise<void>;
}

function roleValue(cfg: SkillOptConfig, role: ModelRole, key: 'base_url' | 'temperature'): unknown {
  return cfg.model[`${role}_${key}` as keyof SkillOptConfig['model']];
}

function buildBackend(
  cfg: SkillOptConfig,
  role: ModelRole,
  kind: BackendKind,
  env: ModelEnvironment & { tasks: readonly TaskItem[]; logger: Logger },
  defaultBaseUrl?: string,
): ChatBackend {
  const m = cfg.model;
  const model = role === 'optimizer' ? m.optimizer : m.target;
  const vars = env.env ?? process.env;
  switch (kind) {
    case 'sim': {
      // SKILLOPT_SIM_LATENCY_MS slows the simulated replies down, to watch a run fill the UI.
      const latencyMs = Math.max(0, Number(vars.SKILLOPT_SIM_LATENCY_MS ?? 0) || 0);
      return role === 'optimizer'
        ? new SimOptimizerBackend(model || 'sim-optimizer', latencyMs)
        : new SimTargetBackend(model || 'sim-target', env.tasks, latencyMs);
    }
    case 'command': {
      if (role === 'optimizer') {
        throw new SkillOptError('config', 'the command backend can only be the target', {
          key: 'model.optimizer_backend',
          fix: 'use openai, azure_openai, anthropic, vscode-lm or sim for the optimizer',
        });
      }
      const template = m.target_command || commandPresetFor(m.target_backend);
      void role;
      if (!template) {
        throw new SkillOptError('config', 'the command backend needs a command to run', {
          key: 'model.target_command',
          fix: 'set model.target_command, e.g. "claude -p {prompt}" (placeholders: {prompt} {task_file} {skill_file} {workspace})',
        });
      }
      return new CommandBackend({
        command: template,
        // The default name yields to the skill's own front-matter name (see rollout); a set one wins.
        ...(m.target_skill_name !== 'skill' ? { skillName: m.target_skill_name } : {}),
        timeoutMs: cfg.env.exec_timeout * 1000,
        trusted: env.trustedWorkspace === true,
        model: model || 'agent',
      });
    }
    case 'vscode-lm': {
      if (!env.lmBridge) {
        throw new SkillOptError('config', 'the vscode-lm backend only works inside VS Code', {
          key: `model.${role}_backend`,
          fix: 'run this config from the SkillOpt extension, or pick openai/anthropic/azure_openai for the CLI',
        });
      }
      return new VscodeLmBackend(env.lmBridge, { model, role });
    }
    default: {
      const provider: KeyProvider =
        kind === 'azure_openai' ? 'azure_openai' : kind === 'anthropic' ? 'anthropic' : 'openai';
      const configured = roleValue(cfg, role, 'base_url');
      const baseUrl = (typeof configured === 'string' && configured) || defaultBaseUrl;
      const apiKey = env.keys?.[provider] ?? vars[API_KEY_ENV_VARS[provider]] ?? undefined;
      const temperature = roleValue(cfg, role, 'temperature');
      const azureEndpoint =
        (role === 'optimizer' ? m.optimizer_azure_openai_endpoint : m.target_azure_openai_endpoint) ||
        m.azure_openai_endpoint ||
        vars.AZURE_OPENAI_ENDPOINT ||
        undefined;
      return createSdkBackend({
        kind,
        model,
        ...(apiKey ? { apiKey } : {}),
        ...(baseUrl ? { baseUrl } : {}),
        ...(azureEndpoint ? { azureEndpoint } : {}),
        azureApiVersion: m.azure_openai_api_version,
        ...(m.reasoning_effort ? { reasoningEffort: m.reasoning_effort as never } : {}),
        ...(typeof temperature === 'number' ? { temperature } : {}),
        timeoutMs: cfg.limits.request_timeout_s * 1000,
        ...(m.thinking_budget > 0 ? { thinkingBudget: m.thinking_budget } : {}),
        logger: env.logger,
      });
    }
  }
}

function commandPresetFor(name: string): string | undefined {
  const preset = { claude_code_exec: 'claude', codex_exec: 'codex', copilot_exec: 'copilot' }[name];
  return preset ? commandPreset(preset).join(' ') : undefined;
}

/**
 * Model clients for a run: backends resolved from the config (SkillOpt names mapped, with a notice),
 * shared limits and accounting, the persistent cache, and the test-split guard on the optimizer.
 */
export function buildModels(
  cfg: SkillOptConfig,
  env: ModelEnvironment & { tasks: readonly TaskItem[]; testItems: readonly TaskItem[]; logger: Logger },
): ModelSetup {
  const notices: string[] = [];
  const accounting = new Accounting({ prices: cfg.prices, logger: env.logger });
  const limits = new LimitRegistry(limitsFromConfig(cfg.limits));
  const cache = cfg.cache.enabled
    ? new ResponseCache(cfg.cache.dir || env.cacheDir || join(homedir(), '.cache', 'skillopt', 'responses'), {
        logger: env.logger,
      })
    : undefined;
  const secrets = Object.values(env.keys ?? {}).filter((k): k is string => !!k);
  const vars = env.env ?? process.env;
  for (const v of Object.values(API_KEY_ENV_VARS)) if (vars[v]) secrets.push(vars[v]);
  const make = (role: ModelRole): ModelClient => {
    const name = role === 'optimizer' ? cfg.model.optimizer_backend : cfg.model.target_backend;
    const azureEndpoint = cfg.model.azure_openai_endpoint || vars.AZURE_OPENAI_ENDPOINT;
    const resolved = resolveBackendName(name, {
      ...(azureEndpoint ? { azureEndpoint } : {}),
      key: `model.${role}_backend`,
    });
    if (resolved.notice) notices.push(`${role}: ${resolved.notice}`);
    if (resolved.targetOnly && role === 'optimizer') {
      throw new SkillOptError('config', `backend '${name}' runs an agent and can only be the target`, {
        key: 'model.optimizer_backend',
        fix: 'use openai, azure_openai, anthropic, vscode-lm or sim for the optimizer',
      });
    }
    const backend = buildBackend(cfg, role, resolved.kind, env, resolved.defaultBaseUrl);
    return createModelClient({
      role,
      backend,
      limits,
      retry: { maxAttempts: cfg.limits.max_retries + 1 },
      timeoutMs: cfg.limits.request_timeout_s * 1000,
      ...(cache ? { cache, cachePolicy: { enabled: true, allRoles: cfg.cache.all_roles } } : {}),
      accounting,
      logger: env.logger,
      secrets,
    });
  };
  const target = make('target');
  const testIds = new Set(env.testItems.map((t) => t.id));
  const optimizer = guardOptimizer(
    make('optimizer'),
    env.testItems,
    env.tasks.filter((t) => !testIds.has(t.id)),
  );
  const simulated = optimizer.backend === 'sim' || target.backend === 'sim';
  return {
    optimizer,
    target,
    accounting,
    ...(cache ? { cache } : {}),
    simulated,
    notices,
    describe: {
      optimizer: `${optimizer.backend} ${optimizer.model}${optimizer.backend === 'sim' ? ' (SIMULATED)' : ''}`,
      target: `${target.backend} ${target.model}${target.backend === 'sim' ? ' (SIMULATED)' : ''}`,
    },
    close: () => Promise.resolve(),
  };
}
