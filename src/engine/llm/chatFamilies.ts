import type { SkillOptConfig } from '../config/schema';
import { SkillOptError } from '../errors';
import type { ModelRole } from './types';

/**
 * The reference's OpenAI-compatible chat families (skillopt/model/qwen_backend.py,
 * minimax_backend.py, openai_compatible_backend.py) as request settings for the OpenAI SDK:
 * where to send, which key, the completion cap, the temperature, and the fields each server
 * expects beyond Chat Completions (Qwen's `chat_template_kwargs`, MiniMax's top-level `thinking`).
 * Each setting is read as the reference does: the role's key, the shared key, the role's
 * environment variable, the shared one, then the reference default.
 */

export type ChatFamily = 'qwen' | 'minimax' | 'openai_compatible';

export interface FamilySettings {
  baseUrl: string;
  apiKey?: string;
  keyEnvVar: string;
  /** Provider label for limits, prices and the cache. */
  provider: string;
  temperature?: number;
  maxTokensCap: number;
  timeoutMs?: number;
  /** The key or variable `timeoutMs` came from (named in a timeout's fix). */
  timeoutKey?: string;
  tokenField: 'max_tokens' | 'max_completion_tokens';
  extraBody: Record<string, unknown>;
  /** One line for the log (Qwen's thinking left to the server, as the reference warns). */
  notice?: string;
}

export const QWEN_DEFAULT_BASE_URL = 'http://localhost:8000/v1';
export const MINIMAX_REGION_URLS: Readonly<Record<string, string>> = {
  global_en: 'https://api.minimax.io/v1',
  cn_zh: 'https://api.minimaxi.com/v1',
};
/** Models whose thinking MiniMax keeps on whatever is asked (the reference sends the honest value). */
const MINIMAX_ALWAYS_THINKING = /^MiniMax-M2/;
const OMIT = new Set(['', 'none', 'off', 'null']);
const TRUE = new Set(['1', 'true', 'yes', 'on']);

type Loose = string | number | boolean | null | undefined;

function text(v: Loose): string {
  return v === undefined || v === null ? '' : String(v).trim();
}

/** The first value set: role key, shared key, role variable, shared variable. */
function pick(
  cfg: SkillOptConfig,
  role: ModelRole,
  name: string,
  envName: string,
  vars: NodeJS.ProcessEnv,
): { value: Loose; key: string } | undefined {
  const m = cfg.model as unknown as Record<string, Loose>;
  const R = role.toUpperCase();
  const tries: Array<[string, Loose]> = [
    [`model.${role}_${name}`, m[`${role}_${name}`]],
    [`model.${name}`, m[name]],
    [`${R}_${envName}`, vars[`${R}_${envName}`]],
    [envName, vars[envName]],
  ];
  for (const [key, value] of tries)
    if (value !== undefined && value !== null && text(value) !== '') return { value, key };
  return undefined;
}

function number(found: { value: Loose; key: string } | undefined, fallback: number, positive = true): number {
  if (!found) return fallback;
  const n = Number(text(found.value));
  if (!Number.isFinite(n) || (positive ? n <= 0 : n < 0)) {
    throw new SkillOptError(
      'config',
      `${found.key} must be a number${positive ? ' > 0' : ''}, got ${JSON.stringify(found.value)}`,
      {
        key: found.key,
        fix: `set ${found.key} to a number`,
      },
    );
  }
  return n;
}

/** Temperature, or undefined to send none: the reference's omit spellings ("", none, off, null). */
function temperature(
  found: { value: Loose; key: string } | undefined,
  fallback: number | undefined,
): number | undefined {
  if (!found) return fallback;
  if (OMIT.has(text(found.value).toLowerCase())) return undefined;
  return number(found, 0, false);
}

/** Qwen's three-state thinking policy (qwen_backend.py `_parse_thinking_mode`). */
export function qwenThinkingMode(value: Loose, key: string): 'server_default' | 'enabled' | 'disabled' {
  if (typeof value === 'boolean') return value ? 'enabled' : 'disabled';
  const v = text(value).toLowerCase().replace(/-/g, '_');
  if (['', 'server_default', 'unset', 'auto', 'none', 'null'].includes(v)) return 'server_default';
  if (['1', 'true', 'yes', 'on', 'enabled', 'enable'].includes(v)) return 'enabled';
  if (['0', 'false', 'no', 'off', 'disabled', 'disable'].includes(v)) return 'disabled';
  throw new SkillOptError('config', `unknown Qwen thinking mode ${JSON.stringify(value)}`, {
    key,
    fix: 'use server_default (send nothing), enabled or disabled',
  });
}

function qwen(cfg: SkillOptConfig, role: ModelRole, vars: NodeJS.ProcessEnv): FamilySettings {
  const get = (name: string, env: string) => pick(cfg, role, `qwen_chat_${name}`, `QWEN_CHAT_${env}`, vars);
  // The thinking mode wins; the legacy enable_thinking only turns it on (false leaves it to the server).
  const modeSet = get('thinking_mode', 'THINKING_MODE');
  const legacy = get('enable_thinking', 'ENABLE_THINKING');
  const mode = modeSet
    ? qwenThinkingMode(modeSet.value, modeSet.key)
    : legacy && TRUE.has(text(legacy.value).toLowerCase())
      ? 'enabled'
      : 'server_default';
  const timeout = get('timeout_seconds', 'TIMEOUT_SECONDS');
  const apiKey = text(get('api_key', 'API_KEY')?.value);
  return {
    baseUrl: text(get('base_url', 'BASE_URL')?.value) || QWEN_DEFAULT_BASE_URL,
    ...(apiKey ? { apiKey } : {}),
    keyEnvVar: 'QWEN_CHAT_API_KEY',
    provider: 'qwen_chat',
    temperature: temperature(get('temperature', 'TEMPERATURE'), 0.7),
    maxTokensCap: number(get('max_tokens', 'MAX_TOKENS'), 8000),
    ...(timeout ? { timeoutMs: number(timeout, 300) * 1000, timeoutKey: timeout.key } : {}),
    tokenField: TRUE.has(
      text(get('use_max_completion_tokens', 'USE_MAX_COMPLETION_TOKENS')?.value).toLowerCase(),
    )
      ? 'max_completion_tokens'
      : 'max_tokens',
    extraBody:
      mode === 'server_default' ? {} : { chat_template_kwargs: { enable_thinking: mode === 'enabled' } },
    ...(mode === 'server_default'
      ? {
          notice: `qwen_chat ${role}: thinking is left to the server's chat template (chat_template_kwargs not sent; Qwen3 templates think by default); set model.${role}_qwen_chat_thinking_mode to enabled or disabled to pin it`,
        }
      : {}),
  };
}

function minimax(cfg: SkillOptConfig, model: string, vars: NodeJS.ProcessEnv): FamilySettings {
  const m = cfg.model;
  // MiniMax keys are shared by both roles in the reference (its per-role ones are never read).
  const get = (value: Loose, name: string, env: string) =>
    text(value) !== ''
      ? { value, key: `model.${name}` }
      : text(vars[env]) !== ''
        ? { value: vars[env], key: env }
        : undefined;
  const regionSet = get(m.minimax_region, 'minimax_region', 'MINIMAX_REGION');
  const region = text(regionSet?.value).toLowerCase().replace(/-/g, '_') || 'global_en';
  const regionUrl = MINIMAX_REGION_URLS[region];
  if (!regionUrl) {
    throw new SkillOptError('config', `unknown MiniMax region ${JSON.stringify(regionSet?.value)}`, {
      key: regionSet?.key ?? 'model.minimax_region',
      fix: `use one of: ${Object.keys(MINIMAX_REGION_URLS).join(', ')} (or set model.minimax_base_url)`,
    });
  }
  const thinking = TRUE.has(
    text(
      get(m.minimax_enable_thinking, 'minimax_enable_thinking', 'MINIMAX_ENABLE_THINKING')?.value,
    ).toLowerCase(),
  );
  const apiKey = text(get(m.minimax_api_key, 'minimax_api_key', 'MINIMAX_API_KEY')?.value);
  const timeout = get(undefined, 'minimax_timeout_seconds', 'MINIMAX_TIMEOUT_SECONDS');
  return {
    baseUrl: text(get(m.minimax_base_url, 'minimax_base_url', 'MINIMAX_BASE_URL')?.value) || regionUrl,
    ...(apiKey ? { apiKey } : {}),
    keyEnvVar: 'MINIMAX_API_KEY',
    provider: 'minimax_chat',
    temperature: temperature(get(m.minimax_temperature, 'minimax_temperature', 'MINIMAX_TEMPERATURE'), 0.7),
    maxTokensCap: number(get(m.minimax_max_tokens, 'minimax_max_tokens', 'MINIMAX_MAX_TOKENS'), 8000),
    ...(timeout ? { timeoutMs: number(timeout, 300) * 1000, timeoutKey: timeout.key } : {}),
    tokenField: 'max_tokens',
    extraBody: {
      thinking: { type: thinking || MINIMAX_ALWAYS_THINKING.test(model) ? 'adaptive' : 'disabled' },
    },
  };
}

function openaiCompatible(cfg: SkillOptConfig, role: ModelRole, vars: NodeJS.ProcessEnv): FamilySettings {
  const get = (name: string, env: string) =>
    pick(cfg, role, `openai_compatible_${name}`, `OPENAI_COMPATIBLE_${env}`, vars);
  const timeout = get('timeout_seconds', 'TIMEOUT_SECONDS');
  const apiKey = text(get('api_key', 'API_KEY')?.value);
  const configured = cfg.model[`${role}_base_url`];
  return {
    baseUrl: configured || text(get('base_url', 'BASE_URL')?.value) || 'https://api.openai.com/v1',
    ...(apiKey ? { apiKey } : {}),
    keyEnvVar: 'OPENAI_COMPATIBLE_API_KEY',
    provider: 'openai_compatible',
    temperature: temperature(get('temperature', 'TEMPERATURE'), undefined),
    maxTokensCap: number(get('max_tokens', 'MAX_TOKENS'), 8000),
    ...(timeout ? { timeoutMs: number(timeout, 300) * 1000, timeoutKey: timeout.key } : {}),
    tokenField: 'max_tokens',
    extraBody: {},
  };
}

/** The role's settings for a chat family; `model` is the role's model name (MiniMax thinking depends on it). */
export function familySettings(
  family: ChatFamily,
  cfg: SkillOptConfig,
  role: ModelRole,
  model: string,
  vars: NodeJS.ProcessEnv,
): FamilySettings {
  if (family === 'qwen') return qwen(cfg, role, vars);
  if (family === 'minimax') return minimax(cfg, model, vars);
  return openaiCompatible(cfg, role, vars);
}
