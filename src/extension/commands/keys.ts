/**
 * API keys per provider in SecretStorage. They reach the engine only inside a request
 * (`RunSource.keys`) and stay in its memory; they are never written to a file. Environment
 * variables (`API_KEY_ENV_VARS`: OPENAI_API_KEY, ...) keep working: the engine falls back to them.
 */
import * as vscode from 'vscode';
import type { ProviderKeys } from '../../protocol/engine';
import { API_KEY_ENV_VARS, KEY_PROVIDERS, type KeyProvider } from '../../protocol/vocabulary';
import { secretKey } from '../constants';
import type { Ctx } from '../ctx';

const providerLabels: Record<KeyProvider, string> = {
  openai: 'OpenAI (and OpenAI-compatible servers that need a key)',
  azure_openai: 'Azure OpenAI',
  anthropic: 'Anthropic',
};

/** Every stored key, for a request to the engine. */
export async function collectKeys(ctx: Ctx): Promise<ProviderKeys> {
  const keys: ProviderKeys = {};
  for (const p of KEY_PROVIDERS) {
    const v = await ctx.extension.secrets.get(secretKey(p));
    if (v) keys[p] = v;
  }
  return keys;
}

function isProvider(v: unknown): v is KeyProvider {
  return typeof v === 'string' && (KEY_PROVIDERS as readonly string[]).includes(v);
}

/**
 * "Set API Key": pick a provider, paste the key (an empty entry removes it). Arguments
 * `(provider, key)` set it without asking, for scripts and tests.
 */
export async function setApiKey(ctx: Ctx, providerArg?: unknown, keyArg?: unknown): Promise<boolean> {
  let provider: KeyProvider | undefined = isProvider(providerArg) ? providerArg : undefined;
  if (!provider) {
    const items = await Promise.all(
      KEY_PROVIDERS.map(async (p) => ({
        label: providerLabels[p],
        description: (await ctx.extension.secrets.get(secretKey(p)))
          ? 'key stored'
          : `or ${API_KEY_ENV_VARS[p]}`,
        provider: p,
      })),
    );
    provider = (
      await vscode.window.showQuickPick(items, { title: 'SkillOpt: Set API Key', placeHolder: 'Provider' })
    )?.provider;
  }
  if (!provider) return false;
  let key = typeof keyArg === 'string' ? keyArg : undefined;
  if (key === undefined) {
    key = await vscode.window.showInputBox({
      title: `SkillOpt: ${providerLabels[provider]} API key`,
      prompt:
        "Stored in VS Code's secret storage and sent only to the SkillOpt engine. Leave empty to remove the stored key.",
      password: true,
      ignoreFocusOut: true,
    });
  }
  if (key === undefined) return false;
  key = key.trim();
  if (key) {
    await ctx.extension.secrets.store(secretKey(provider), key);
    ctx.log.info(`[keys] ${provider} key stored`);
    if (typeof keyArg !== 'string')
      void vscode.window.showInformationMessage(`SkillOpt: ${providerLabels[provider]} key stored.`);
  } else {
    await ctx.extension.secrets.delete(secretKey(provider));
    ctx.log.info(`[keys] ${provider} key removed`);
    if (typeof keyArg !== 'string')
      void vscode.window.showInformationMessage(`SkillOpt: ${providerLabels[provider]} key removed.`);
  }
  return true;
}
