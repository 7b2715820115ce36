/** Which backends get provider prompt-caching fields, from the config's `model.prompt_caching*` keys. */
import type { SkillOptConfig } from '../config/schema';
import type { BackendKind } from '../../protocol/vocabulary';
import { OPENAI_DEFAULT_BASE_URL } from './openai';
import type { ChatBackend } from './types';

/**
 * `prompt_cache_key` goes to OpenAI's own API; Azure and OpenAI-compatible servers get it only
 * with `model.prompt_cache_key: on`, since a strict server answers 400 to a field it does not know.
 */
export function sendsPromptCacheKey(
  cfg: SkillOptConfig,
  kind: BackendKind,
  baseUrl: string | undefined,
): boolean {
  const m = cfg.model;
  if (!m.prompt_caching || m.prompt_cache_key === 'off') return false;
  if (m.prompt_cache_key === 'on') return true;
  const official = !baseUrl || baseUrl.replace(/\/+$/, '') === OPENAI_DEFAULT_BASE_URL;
  return kind === 'openai' && official;
}

/** The one-line notice for a server that does not get `prompt_cache_key` under `auto`. */
export function promptCacheKeyNotice(cfg: SkillOptConfig, backend: ChatBackend): string | undefined {
  const m = cfg.model;
  if (!m.prompt_caching || m.prompt_cache_key !== 'auto') return undefined;
  if (backend.provider !== 'azure_openai' && backend.provider !== 'openai_compatible') return undefined;
  return `prompt_cache_key is not sent to ${backend.endpoint ?? backend.provider} (model.prompt_cache_key: auto sends it to OpenAI's own API only); set model.prompt_cache_key: on if the server accepts it`;
}
