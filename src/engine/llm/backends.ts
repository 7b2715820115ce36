import { SkillOptError } from '../errors';
import type { Logger } from '../log';
import { AnthropicBackend } from './anthropic';
import type { ChatFamily } from './chatFamilies';
import { QWEN_DEFAULT_BASE_URL, MINIMAX_REGION_URLS } from './chatFamilies';
import { scrubUrl } from './secrets';
import type { ReasoningSupport, TokenField } from './openai';
import type { OpenAiApi } from '../config/schema/enums';
import { AzureOpenAiBackend, OpenAiBackend } from './openai';
import type { ChatBackend, ReasoningEffort } from './types';
import { API_KEY_ENV_VARS, type BackendKind, type KeyProvider } from '../../protocol/vocabulary';

export type { BackendKind };

export interface ResolvedBackend {
  kind: BackendKind;
  /** One line for the log when a reference name maps to a different transport here. */
  notice?: string;
  /** Agent harnesses can only play the target. */
  targetOnly?: boolean;
  /** Base URL to use when none is configured (OpenAI-compatible families). */
  defaultBaseUrl?: string;
  /** The reference chat family whose settings and extra request fields apply (chatFamilies.ts). */
  family?: ChatFamily;
}

export { QWEN_DEFAULT_BASE_URL };
export const MINIMAX_DEFAULT_BASE_URL = MINIMAX_REGION_URLS.global_en;

type Resolver = (ctx: {
  name: string;
  azureEndpoint?: string;
  /** The role's Azure auth mode (azureAuth.ts); `openai_compatible` means the plain OpenAI SDK. */
  azureMode?: string;
  key?: string;
}) => ResolvedBackend;

const same =
  (kind: BackendKind): Resolver =>
  () => ({ kind });

const via =
  (kind: BackendKind, how: string, extra: Omit<ResolvedBackend, 'kind' | 'notice'> = {}): Resolver =>
  ({ name }) => ({ kind, notice: `model backend '${name}' runs through ${how} here`, ...extra });

/** An agent CLI preset (its own name: no notice). Cursor's names are refused by agentFor. */
const harness: Resolver = () => ({ kind: 'command', targetOnly: true });

/** Another name for a preset: the notice names the preset (a preset takes no model.target_command). */
const harnessAlias =
  (preset: string, cli: string): Resolver =>
  ({ name }) => ({
    kind: 'command',
    targetOnly: true,
    notice: `model backend '${name}' is the ${preset} agent preset here (${cli})`,
  });

/**
 * The reference's openai_chat is Azure OpenAI (or, with auth mode openai_compatible, the OpenAI SDK
 * against that endpoint); without an endpoint the reference stops, so it is refused here rather
 * than sent to the public OpenAI API.
 */
const openaiChat: Resolver = ({ name, azureEndpoint, azureMode, key }) => {
  const endpoint = azureEndpoint?.trim();
  if (!endpoint) {
    throw new SkillOptError(
      'config',
      `model backend '${name}' is Azure OpenAI, but no Azure endpoint is set`,
      {
        ...(key ? { key } : {}),
        fix: 'set model.azure_openai_endpoint (or AZURE_OPENAI_ENDPOINT), or choose the public OpenAI API with openai as the backend',
      },
    );
  }
  if (azureMode === 'openai_compatible') {
    return {
      kind: 'openai',
      defaultBaseUrl: endpoint,
      notice: `model backend '${name}' runs through the OpenAI SDK against ${scrubUrl(endpoint)} (auth mode openai_compatible)`,
    };
  }
  return {
    kind: 'azure_openai',
    notice: `model backend '${name}' runs through Azure OpenAI (${scrubUrl(endpoint)})${azureMode ? ` with ${azureMode} auth` : ''}`,
  };
};

/** Names are matched lower-cased with `-` read as `_`. */
const RESOLVERS: Record<string, Resolver> = {
  // Ours.
  openai: same('openai'),
  azure_openai: same('azure_openai'),
  anthropic: same('anthropic'),
  vscode_lm: same('vscode-lm'),
  command: same('command'),
  sim: same('sim'),
  // The reference's names and aliases (§10.1).
  openai_chat: openaiChat,
  azure: same('azure_openai'),
  openai_compatible: via('openai', 'the OpenAI SDK against model.*_base_url', {
    family: 'openai_compatible',
  }),
  openai_compatible_chat: via('openai', 'the OpenAI SDK against model.*_base_url', {
    family: 'openai_compatible',
  }),
  compat: via('openai', 'the OpenAI SDK against model.*_base_url', { family: 'openai_compatible' }),
  qwen_chat: via('openai', `the OpenAI SDK (default base URL ${QWEN_DEFAULT_BASE_URL})`, {
    defaultBaseUrl: QWEN_DEFAULT_BASE_URL,
    family: 'qwen',
  }),
  qwen: via('openai', `the OpenAI SDK (default base URL ${QWEN_DEFAULT_BASE_URL})`, {
    defaultBaseUrl: QWEN_DEFAULT_BASE_URL,
    family: 'qwen',
  }),
  minimax_chat: via('openai', 'the OpenAI SDK (base URL from model.minimax_region / minimax_base_url)', {
    defaultBaseUrl: MINIMAX_DEFAULT_BASE_URL,
    family: 'minimax',
  }),
  minimax: via('openai', 'the OpenAI SDK (base URL from model.minimax_region / minimax_base_url)', {
    defaultBaseUrl: MINIMAX_DEFAULT_BASE_URL,
    family: 'minimax',
  }),
  claude_chat: via('anthropic', 'the Anthropic Messages API'),
  claude: via('anthropic', 'the Anthropic Messages API'),
  copilot_chat: via('vscode-lm', "VS Code's language models (Copilot)"),
  copilot: via('vscode-lm', "VS Code's language models (Copilot)"),
  copilot_cli: via('vscode-lm', "VS Code's language models (Copilot)"),
  github_copilot: via('vscode-lm', "VS Code's language models (Copilot)"),
  codex_exec: harness,
  codex: harnessAlias('codex_exec', 'the Codex CLI'),
  claude_code_exec: harness,
  cursor_exec: harness,
  cursor: harness,
  cursor_agent: harness,
  copilot_exec: harness,
};

/** Every accepted spelling, for messages. */
export const BACKEND_NAMES: readonly string[] = Object.keys(RESOLVERS).map((n) =>
  n === 'vscode_lm' ? 'vscode-lm' : n,
);

/**
 * Map a configured backend name (ours or the reference's) to a transport. Unknown names are a
 * SkillOptError('config') listing the valid ones.
 */
export function resolveBackendName(
  name: string,
  opts: { azureEndpoint?: string; azureMode?: string; key?: string; file?: string } = {},
): ResolvedBackend {
  const norm = name.trim().toLowerCase().replace(/-/g, '_');
  const resolver = RESOLVERS[norm];
  if (!resolver) {
    throw new SkillOptError('config', `unknown model backend '${name}'`, {
      file: opts.file,
      key: opts.key,
      fix: `use one of: ${BACKEND_NAMES.join(', ')}`,
    });
  }
  return resolver({
    name: name.trim(),
    ...(opts.azureEndpoint ? { azureEndpoint: opts.azureEndpoint } : {}),
    ...(opts.azureMode ? { azureMode: opts.azureMode } : {}),
    ...(opts.key ? { key: opts.key } : {}),
  });
}

/** A plain description of an SDK backend, as config loading produces it. */
export interface SdkBackendSpec {
  kind: KeyProvider;
  /** Model name (the deployment name for Azure). */
  model: string;
  apiKey?: string;
  baseUrl?: string;
  azureEndpoint?: string;
  azureApiVersion?: string;
  /** Azure keyless auth: a bearer-token provider (azureAuth.ts) instead of a key. */
  azureAdTokenProvider?: () => Promise<string>;
  reasoningEffort?: ReasoningEffort;
  temperature?: number;
  timeoutMs?: number;
  /** OpenAI family only: completion-cap field and whether to send reasoning_effort. */
  tokenField?: TokenField;
  reasoning?: ReasoningSupport;
  maxTokensCap?: number;
  extraBody?: Record<string, unknown>;
  /** Named in the missing-key message (OpenAI family). */
  keyEnvVar?: string;
  /** Anthropic only. */
  thinkingBudget?: number;
  maxTokens?: number;
  /** Provider label for limits and prices (default by kind and base URL). */
  provider?: string;
  /** Anthropic: cache_control breakpoints. */
  promptCaching?: boolean;
  /** OpenAI family: send prompt_cache_key. */
  promptCacheKey?: boolean;
  /** OpenAI family: Chat Completions or the Responses API (`model.openai_api`). */
  api?: OpenAiApi;
  logger?: Logger;
}

/**
 * Build an SDK backend. A missing key (or Azure endpoint) is a SkillOptError('config') here, before
 * any call is made; keyless local base URLs are allowed.
 */
export function createSdkBackend(spec: SdkBackendSpec): ChatBackend {
  switch (spec.kind) {
    case 'openai':
      return new OpenAiBackend({
        model: spec.model,
        apiKey: spec.apiKey,
        baseUrl: spec.baseUrl,
        provider: spec.provider,
        timeoutMs: spec.timeoutMs,
        tokenField: spec.tokenField,
        reasoning: spec.reasoning,
        reasoningEffort: spec.reasoningEffort,
        temperature: spec.temperature,
        maxTokensCap: spec.maxTokensCap,
        promptCacheKey: spec.promptCacheKey,
        ...(spec.api ? { api: spec.api } : {}),
        ...(spec.extraBody ? { extraBody: spec.extraBody } : {}),
        ...(spec.keyEnvVar ? { keyEnvVar: spec.keyEnvVar } : {}),
        logger: spec.logger,
      });
    case 'azure_openai':
      return new AzureOpenAiBackend({
        endpoint: spec.azureEndpoint ?? spec.baseUrl ?? '',
        deployment: spec.model,
        apiVersion: spec.azureApiVersion,
        apiKey: spec.apiKey,
        ...(spec.azureAdTokenProvider ? { adTokenProvider: spec.azureAdTokenProvider } : {}),
        timeoutMs: spec.timeoutMs,
        tokenField: spec.tokenField,
        reasoning: spec.reasoning,
        reasoningEffort: spec.reasoningEffort,
        temperature: spec.temperature,
        maxTokensCap: spec.maxTokensCap,
        promptCacheKey: spec.promptCacheKey,
        ...(spec.api ? { api: spec.api } : {}),
        logger: spec.logger,
      });
    case 'anthropic':
      return new AnthropicBackend({
        model: spec.model,
        apiKey: spec.apiKey,
        baseUrl: spec.baseUrl,
        timeoutMs: spec.timeoutMs,
        maxTokens: spec.maxTokens,
        thinkingBudget: spec.thinkingBudget,
        temperature: spec.temperature,
        promptCaching: spec.promptCaching,
      });
  }
}

/** The key for an SDK backend from the environment (the extension passes SecretStorage keys instead). */
export function apiKeyFromEnv(kind: KeyProvider, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[API_KEY_ENV_VARS[kind]]?.trim();
  return value ? value : undefined;
}
