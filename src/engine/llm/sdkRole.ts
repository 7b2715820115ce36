import type { TokenCredential } from '@azure/identity';
import type { SkillOptConfig } from '../config/schema';
import { SkillOptError } from '../errors';
import type { Logger } from '../log';
import {
  API_KEY_ENV_VARS,
  type BackendKind,
  KEY_PROVIDERS,
  type KeyProvider,
} from '../../protocol/vocabulary';
import { azureCredential, azureTokenProvider, type AzureRoleAuth } from './azureAuth';
import { createSdkBackend } from './backends';
import { chatCallTimeout } from './callTimeout';
import { familySettings, type ChatFamily } from './chatFamilies';
import { sendsPromptCacheKey } from './promptCacheConfig';
import { scrubUrl } from './secrets';
import type { ChatBackend, ModelRole } from './types';

/**
 * One role's SDK backend (OpenAI, Azure OpenAI, Anthropic) from the config: the base URL, key and
 * request settings of its provider, its chat family (Qwen, MiniMax, openai_compatible) and its
 * Azure sign-in.
 */

function roleValue(cfg: SkillOptConfig, role: ModelRole, key: 'base_url' | 'temperature'): unknown {
  return cfg.model[`${role}_${key}` as keyof SkillOptConfig['model']];
}

/** A base URL no request could reach is refused now, not retried for half a minute as "connection failed". */
function checkBaseUrl(value: string, key: string, keyVar: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new SkillOptError('config', `"${scrubUrl(value)}" is not an http(s) URL`, {
      key,
      fix: 'write the whole base URL, e.g. https://api.openai.com/v1 or http://localhost:8000/v1',
    });
  }
  checkNoUserinfo(url, value, key, keyVar);
}

/** Node's fetch refuses a URL with `user:password@` outright: every call would fail as "unreachable". */
function checkNoUserinfo(url: URL, value: string, key: string, keyVar: string): void {
  if (!url.username && !url.password) return;
  throw new SkillOptError(
    'config',
    `"${scrubUrl(value)}" carries a user name and password, which no request can be sent with`,
    {
      key,
      fix: `remove the "user:password@" part and give the server's key in ${keyVar} (sent as "Authorization: Bearer"; SkillOpt has no setting for HTTP basic auth)`,
    },
  );
}

export function buildSdkRole(
  cfg: SkillOptConfig,
  role: ModelRole,
  kind: BackendKind,
  env: {
    vars: NodeJS.ProcessEnv;
    keys?: Partial<Record<KeyProvider, string>>;
    azureCredential?: TokenCredential;
    logger: Logger;
  },
  resolved: { defaultBaseUrl?: string; family?: ChatFamily },
  azure?: AzureRoleAuth,
): ChatBackend {
  const m = cfg.model;
  const model = role === 'optimizer' ? m.optimizer : m.target;
  const vars = env.vars;
  // The SDK backends are the providers that take a key.
  const provider = KEY_PROVIDERS.find((p) => p === kind);
  if (!provider) throw new SkillOptError('internal', `buildSdkRole: ${kind} is not an SDK backend`);
  const configured = roleValue(cfg, role, 'base_url');
  // Qwen, MiniMax and openai_compatible read their own keys, as the reference does.
  const family = resolved.family ? familySettings(resolved.family, cfg, role, model, vars) : undefined;
  const keyVar = family?.keyEnvVar ?? API_KEY_ENV_VARS[provider];
  if (typeof configured === 'string' && configured)
    checkBaseUrl(configured, `model.${role}_base_url`, keyVar);
  const baseUrl =
    (typeof configured === 'string' && configured) || family?.baseUrl || resolved.defaultBaseUrl;
  // A family's own base URL (its key or variable) is not checked above.
  if (baseUrl && baseUrl !== configured && URL.canParse(baseUrl))
    checkNoUserinfo(
      new URL(baseUrl),
      baseUrl,
      `the ${role}'s ${family?.provider ?? provider} base URL`,
      keyVar,
    );
  // An Azure role's key is its own (config, SecretStorage or variable, azureAuth.ts); for
  // auth mode openai_compatible it is sent to that endpoint as the reference does.
  const keyless = provider === 'azure_openai' && azure && azure.mode !== 'api_key';
  // A Qwen or MiniMax server never gets the OpenAI key; openai_compatible falls back to it.
  const apiKey = keyless
    ? undefined
    : (azure?.apiKey ??
      family?.apiKey ??
      (family && family.provider !== 'openai_compatible'
        ? undefined
        : (env.keys?.[provider] ?? vars[API_KEY_ENV_VARS[provider]] ?? undefined)));
  const temperature = family ? family.temperature : roleValue(cfg, role, 'temperature');
  const azureEndpoint =
    azure?.endpoint ||
    (role === 'optimizer' ? m.optimizer_azure_openai_endpoint : m.target_azure_openai_endpoint) ||
    m.azure_openai_endpoint ||
    vars.AZURE_OPENAI_ENDPOINT ||
    undefined;
  return createSdkBackend({
    kind: provider,
    model,
    ...(apiKey ? { apiKey } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    ...(azureEndpoint ? { azureEndpoint } : {}),
    azureApiVersion: azure?.apiVersion || m.azure_openai_api_version,
    ...(keyless
      ? {
          azureAdTokenProvider: azureTokenProvider(
            env.azureCredential ?? azureCredential(azure),
            azure.adScope,
            azure.mode,
          ),
        }
      : {}),
    ...(m.reasoning_effort ? { reasoningEffort: m.reasoning_effort } : {}),
    ...(typeof temperature === 'number' ? { temperature } : {}),
    timeoutMs: chatCallTimeout(cfg, role, family).ms,
    ...(family
      ? {
          provider: family.provider,
          keyEnvVar: family.keyEnvVar,
          maxTokensCap: family.maxTokensCap,
          tokenField: family.tokenField,
          extraBody: family.extraBody,
        }
      : {}),
    ...(m.thinking_budget > 0 ? { thinkingBudget: m.thinking_budget } : {}),
    promptCaching: m.prompt_caching,
    promptCacheKey: sendsPromptCacheKey(cfg, kind, baseUrl),
    api: m.openai_api,
    logger: env.logger,
  });
}
