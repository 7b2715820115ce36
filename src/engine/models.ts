import { homedir } from 'node:os';
import { join } from 'node:path';
import type { SkillOptConfig } from './config/schema';
import type { TaskItem } from './data/tasks';
import { SkillOptError } from './errors';
import {
  agentPriceNotice,
  cloudClaudeNotice,
  maxTokensNotice,
  maxTurnsNotice,
  repeatsNotice,
} from './modelNotices';
import type { Logger } from './log';
import { Accounting } from './llm/accounting';
import type { TokenCredential } from '@azure/identity';
import { azureAuthFor, type AzureRoleAuth } from './llm/azureAuth';
import { resolveBackendName } from './llm/backends';
import { familySettings, type ChatFamily } from './llm/chatFamilies';
import { buildSdkRole } from './llm/sdkRole';
import { chatCallTimeout } from './llm/callTimeout';
import { effortNotice } from './llm/effortNotice';
import { checkCacheDir, ResponseCache } from './llm/cache';
import { createModelClient } from './llm/client';
import {
  agentFor,
  buildAgentBackend,
  defaultAgentConcurrency,
  keepAgentErrors,
} from './llm/agents/fromConfig';
import { idleBackendKeyNotices, type RoleInUse } from './llm/idleBackendKeys';
import { CommandBackend } from './llm/command';
import { targetBatch, type TargetBatch } from './llm/batch/fromConfig';
import { LimitRegistry, limitsFromConfig } from './llm/limiter';
import { promptCacheKeyNotice } from './llm/promptCacheConfig';
import { urlSecrets } from './llm/secrets';
import { SimOptimizerBackend } from './llm/sim/optimizer';
import { SimTargetBackend } from './llm/sim/target';
import type { ChatBackend, ModelClient, ModelRole } from './llm/types';
import { VscodeLmBackend, type LmBridge } from './llm/vscodeLm';
import { guardOptimizer } from './train/leakGuard';
import { judgeConfig, judgeNotice, needsJudge } from './judgeModel';
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
  /** Azure keyless auth: a credential to use instead of the one the auth mode names (tests, hosts). */
  azureCredential?: TokenCredential;
}

export interface ModelSetup {
  optimizer: ModelClient;
  target: ModelClient;
  /** Grades the eval files' natural-language expectations; only when some task has one (judgeModel.ts). */
  judge?: ModelClient;
  accounting: Accounting;
  cache?: ResponseCache;
  simulated: boolean;
  /** The target's batch API and the evaluations sent through it (evaluation.batch_api). */
  batch?: TargetBatch;
  notices: string[];
  describe: { optimizer: string; target: string };
  close(): Promise<void>;
}

function buildBackend(
  cfg: SkillOptConfig,
  role: ModelRole,
  kind: BackendKind,
  env: ModelEnvironment & { tasks: readonly TaskItem[]; logger: Logger; notices: string[] },
  resolved: { defaultBaseUrl?: string; family?: ChatFamily },
  azure?: AzureRoleAuth,
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
      return buildAgentBackend(cfg, env);
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
    default:
      return buildSdkRole(cfg, role, kind, { ...env, vars }, resolved, azure);
  }
}

/** Backend names whose role signs in to Azure OpenAI (azureAuth.ts). */
const AZURE_NAMES = new Set(['openai_chat', 'azure', 'azure_openai']);

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
  const limitSettings = limitsFromConfig(cfg);
  // Agent targets are whole processes (~300 MB each): their own, small default.
  limitSettings.providerLimits = {
    command: cfg.limits.agent_concurrency || defaultAgentConcurrency(),
    ...limitSettings.providerLimits,
  };
  const limits = new LimitRegistry(limitSettings);
  const cacheDir = cfg.cache.dir || env.cacheDir || join(homedir(), '.cache', 'skillopt', 'responses');
  if (cfg.cache.enabled) checkCacheDir(cacheDir, 'cache.dir');
  const cache = cfg.cache.enabled ? new ResponseCache(cacheDir, { logger: env.logger }) : undefined;
  const secrets = Object.values(env.keys ?? {}).filter((k): k is string => !!k);
  const vars = env.env ?? process.env;
  for (const v of Object.values(API_KEY_ENV_VARS)) if (vars[v]) secrets.push(vars[v]);
  // Credentials inside any configured URL (agent targets get the URL as an environment variable).
  for (const value of Object.values(cfg.model))
    if (typeof value === 'string') secrets.push(...urlSecrets(value));
  let targetBackend: ChatBackend | undefined;
  const inUse: Partial<Record<ModelRole, RoleInUse>> = {};
  const make = (role: ModelRole, judge?: SkillOptConfig): ModelClient => {
    // The judge is the optimizer's backend with evaluation.judge_model, as a client of its own.
    const c = judge ?? cfg;
    const label = judge ? 'judge' : role;
    const name = role === 'optimizer' ? c.model.optimizer_backend : c.model.target_backend;
    const azure = AZURE_NAMES.has(name.trim().toLowerCase().replace(/-/g, '_'))
      ? azureAuthFor(c, role, vars, env.keys?.azure_openai)
      : undefined;
    const resolved = resolveBackendName(name, {
      ...(azure?.endpoint ? { azureEndpoint: azure.endpoint } : {}),
      ...(azure ? { azureMode: azure.mode } : {}),
      key: `model.${role}_backend`,
    });
    if (resolved.notice) notices.push(`${label}: ${resolved.notice}`);
    if (azure?.notice && !judge) notices.push(azure.notice);
    if (role === 'target') {
      const notice = repeatsNotice(resolved.kind, cfg);
      if (notice) notices.push(notice);
    }
    if (resolved.targetOnly && role === 'optimizer') {
      throw new SkillOptError('config', `backend '${name}' runs an agent and can only be the target`, {
        key: 'model.optimizer_backend',
        fix: 'use openai, azure_openai, anthropic, vscode-lm or sim for the optimizer',
      });
    }
    const backend = buildBackend(c, role, resolved.kind, { ...env, notices }, resolved, azure);
    if (role === 'target') targetBackend = backend;
    if (!judge) {
      const agent = resolved.kind === 'command' ? agentFor(name) : undefined;
      inUse[role] = {
        name,
        ...(resolved.family ? { family: resolved.family } : {}),
        ...(agent ? { agent } : {}),
      };
    }
    const cacheNotice = promptCacheKeyNotice(c, backend);
    if (cacheNotice && !judge) notices.push(`${role}: ${cacheNotice}`);
    const family = resolved.family
      ? familySettings(resolved.family, c, role, backend.model, vars)
      : undefined;
    if (family?.notice && !judge) notices.push(family.notice);
    const effort = effortNotice(c, role, resolved.kind, backend.model, resolved.family);
    if (effort && !judge) notices.push(effort);
    const agent = backend instanceof CommandBackend;
    const timeout = chatCallTimeout(c, role, family);
    const client = createModelClient({
      role,
      backend,
      limits,
      retry: { maxAttempts: cfg.limits.max_retries + 1 },
      // An agent run has its own limit (env.exec_timeout); the client's must not cut it short.
      timeoutMs: agent ? cfg.env.exec_timeout * 1000 + 60_000 : timeout.ms,
      timeoutKey: agent ? 'env.exec_timeout' : timeout.key,
      // Grades are cached like target replies: a resumed run or eval-only never pays for one twice.
      ...(cache ? { cache, cachePolicy: { enabled: true, allRoles: cfg.cache.all_roles || !!judge } } : {}),
      accounting,
      logger: env.logger,
      secrets,
    });
    return agent ? keepAgentErrors(client, backend) : client;
  };
  const target = make('target');
  const turns = maxTurnsNotice(cfg, target.backend === 'command');
  if (turns) notices.push(turns);
  const cap = maxTokensNotice(cfg, target.backend === 'command');
  if (cap) notices.push(cap);
  const unpriced = agentPriceNotice(cfg, target, accounting.prices, agentFor(cfg.model.target_backend));
  if (unpriced) notices.push(unpriced);
  const testIds = new Set(env.testItems.map((t) => t.id));
  const optimizer = guardOptimizer(
    make('optimizer'),
    env.testItems,
    env.tasks.filter((t) => !testIds.has(t.id)),
  );
  notices.push(...idleBackendKeyNotices(cfg.model, { optimizer: inUse.optimizer!, target: inUse.target! }));
  const cloud = cloudClaudeNotice(
    [
      { role: 'target', client: target },
      { role: 'optimizer', client: optimizer },
    ],
    agentFor(cfg.model.target_backend),
    vars,
    accounting.prices,
  );
  if (cloud) notices.push(cloud);
  const judge = needsJudge(env.tasks) ? make('optimizer', judgeConfig(cfg)) : undefined;
  if (judge) notices.push(judgeNotice(cfg, judge, env.tasks));
  const simulated = optimizer.backend === 'sim' || target.backend === 'sim' || judge?.backend === 'sim';
  const batch = targetBackend
    ? targetBatch(cfg, targetBackend, { accounting, ...(cache ? { cache } : {}), secrets })
    : undefined;
  if (cfg.model.target_supports_batch && !batch)
    notices.push('model.target_supports_batch is set, but evaluation.batch_api is off: no batch is sent');
  return {
    optimizer,
    target,
    ...(judge ? { judge } : {}),
    accounting,
    ...(cache ? { cache } : {}),
    ...(batch ? { batch } : {}),
    simulated,
    notices,
    describe: {
      optimizer: `${optimizer.backend} ${optimizer.model}${optimizer.backend === 'sim' ? ' (SIMULATED)' : ''}`,
      // An agent preset by the CLI it runs (its client's backend is the generic `command`).
      target:
        targetBackend instanceof CommandBackend && targetBackend.preset
          ? `${targetBackend.preset.label}${targetBackend.preset.label.endsWith(' CLI') ? '' : ' CLI'} agent ${target.model}`
          : `${target.backend} ${target.model}${target.backend === 'sim' ? ' (SIMULATED)' : ''}`,
    },
    close: () => Promise.resolve(),
  };
}
