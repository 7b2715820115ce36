import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/identity';
import type { SkillOptConfig } from '../config/schema';
import { SkillOptError } from '../errors';
import type { ModelRole } from './types';

/**
 * How an Azure OpenAI role authenticates, resolved as the reference does
 * (skillopt/model/azure_openai.py): the role's config key, the shared config key, the role's
 * environment variable (both spellings), the shared one, then the default. Auth mode `azure_cli`
 * (the reference default) and `managed_identity` get a bearer token through @azure/identity.
 */

export type AzureAuthMode = 'api_key' | 'azure_cli' | 'managed_identity' | 'openai_compatible';

/** The reference's spellings of each mode. */
const MODE_SPELLINGS: Record<string, AzureAuthMode> = {
  api_key: 'api_key',
  key: 'api_key',
  azure_cli: 'azure_cli',
  managed_identity: 'managed_identity',
  aad: 'managed_identity',
  azure_ad: 'managed_identity',
  openai_compatible: 'openai_compatible',
  compat: 'openai_compatible',
  openai: 'openai_compatible',
};

export const AZURE_AD_SCOPE = 'https://cognitiveservices.azure.com/.default';

export interface AzureRoleAuth {
  endpoint: string;
  apiVersion: string;
  mode: AzureAuthMode;
  apiKey?: string;
  adScope: string;
  managedIdentityClientId: string;
  /** One line when the mode was chosen for the user (blank mode with a key present). */
  notice?: string;
}

type Field = 'endpoint' | 'api_version' | 'api_key' | 'auth_mode' | 'ad_scope' | 'managed_identity_client_id';

function setting(
  cfg: SkillOptConfig,
  role: ModelRole,
  field: Field,
  vars: NodeJS.ProcessEnv,
): { value: string; key: string } {
  const m = cfg.model as Record<string, unknown>;
  const upper = field.toUpperCase();
  const R = role.toUpperCase();
  const candidates: Array<[string, unknown]> = [
    [`model.${role}_azure_openai_${field}`, m[`${role}_azure_openai_${field}`]],
    [`model.azure_openai_${field}`, m[`azure_openai_${field}`]],
    [`${R}_AZURE_OPENAI_${upper}`, vars[`${R}_AZURE_OPENAI_${upper}`]],
    [`AZURE_OPENAI_${R}_${upper}`, vars[`AZURE_OPENAI_${R}_${upper}`]],
    [`AZURE_OPENAI_${upper}`, vars[`AZURE_OPENAI_${upper}`]],
  ];
  for (const [key, value] of candidates)
    if (typeof value === 'string' && value.trim()) return { value: value.trim(), key };
  return { value: '', key: `model.${role}_azure_openai_${field}` };
}

/**
 * The role's Azure settings. `storedKey` is the key from SecretStorage (VS Code); a config or
 * environment key is used as the reference does. Unknown modes are refused before any call.
 */
export function azureAuthFor(
  cfg: SkillOptConfig,
  role: ModelRole,
  vars: NodeJS.ProcessEnv,
  storedKey?: string,
): AzureRoleAuth {
  const get = (f: Field): string => setting(cfg, role, f, vars).value;
  const configKey =
    (cfg.model[`${role}_azure_openai_api_key`] || cfg.model.azure_openai_api_key).trim() || undefined;
  const apiKey = configKey ?? storedKey ?? (get('api_key') || undefined);
  const modeSetting = setting(cfg, role, 'auth_mode', vars);
  let mode: AzureAuthMode;
  let notice: string | undefined;
  if (!modeSetting.value) {
    // The reference defaults to azure_cli even when a key is present; a key the user gave is
    // the clearer intent here, so it wins, and the notice says so.
    mode = apiKey ? 'api_key' : 'azure_cli';
    notice = apiKey
      ? `Azure OpenAI ${role}: azure_openai_auth_mode is blank and a key is set, so the key is used (the reference would use azure_cli; set azure_openai_auth_mode to choose)`
      : undefined;
  } else {
    const spelled = MODE_SPELLINGS[modeSetting.value.toLowerCase()];
    if (!spelled) {
      throw new SkillOptError('config', `unknown Azure OpenAI auth mode '${modeSetting.value}'`, {
        key: modeSetting.key,
        fix: 'use api_key, azure_cli (sign in with "az login"), managed_identity, or openai_compatible',
      });
    }
    mode = spelled;
  }
  return {
    endpoint: get('endpoint'),
    apiVersion: get('api_version'),
    mode,
    ...(apiKey ? { apiKey } : {}),
    adScope: get('ad_scope') || AZURE_AD_SCOPE,
    managedIdentityClientId: get('managed_identity_client_id'),
    ...(notice ? { notice } : {}),
  };
}

/**
 * The credential for a keyless mode. @azure/identity is loaded on the first token request: most
 * runs never sign in to Azure, and loading it costs every start of the CLI tens of milliseconds.
 */
export function azureCredential(auth: AzureRoleAuth): TokenCredential {
  let made: Promise<TokenCredential> | undefined;
  const credential = async (): Promise<TokenCredential> => {
    const { AzureCliCredential, ManagedIdentityCredential } = await import('@azure/identity');
    if (auth.mode !== 'managed_identity') return new AzureCliCredential();
    return auth.managedIdentityClientId
      ? new ManagedIdentityCredential({ clientId: auth.managedIdentityClientId })
      : new ManagedIdentityCredential();
  };
  return {
    getToken: async (scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> =>
      (await (made ??= credential())).getToken(scopes, options),
  };
}

/**
 * A token provider for the OpenAI SDK's `azureADTokenProvider`: a failed sign-in becomes one
 * clear, non-retried error naming the mode and what to do.
 */
export function azureTokenProvider(
  credential: TokenCredential,
  scope: string,
  mode: AzureAuthMode,
): () => Promise<string> {
  let provider: Promise<() => Promise<string>> | undefined;
  return async () => {
    try {
      provider ??= import('@azure/identity').then((m) => m.getBearerTokenProvider(credential, scope));
      return await (
        await provider
      )();
    } catch (err) {
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new SkillOptError('llm', `Azure sign-in (${mode}) gave no token: ${why}`, {
        key: 'model.azure_openai_auth_mode',
        fix:
          mode === 'azure_cli'
            ? 'run "az login" (the Azure CLI must be on PATH), or set azure_openai_auth_mode: api_key with AZURE_OPENAI_API_KEY'
            : 'run where a managed identity is assigned (set azure_openai_managed_identity_client_id for a user-assigned one), or use azure_cli / api_key',
      });
    }
  };
}
