/**
 * How long one chat call may wait for its reply before it is cut (and retried), and the key that says
 * so (named in the timeout's fix). The reference's rollouts pass env.exec_timeout to every target
 * call; a backend family's own timeout key (qwen_chat_timeout_seconds, …) bounds that backend's
 * calls; limits.request_timeout_s everything else.
 */
import { keysSet } from '../config/idleKeys';
import type { SkillOptConfig } from '../config/schema';
import { envFields } from '../config/schema/envFields';
import type { FamilySettings } from './chatFamilies';
import type { ModelRole } from './types';

export interface CallTimeout {
  ms: number;
  key: string;
}

export function chatCallTimeout(
  cfg: SkillOptConfig,
  role: ModelRole,
  family?: Pick<FamilySettings, 'timeoutMs' | 'timeoutKey'>,
): CallTimeout {
  // Only when set: its default (120 s, the reference's) would cut long reasoning replies that
  // limits.request_timeout_s (300 s) lets through, for every user who never named it.
  if (role === 'target' && keysSet(cfg.env, envFields, ['exec_timeout']).length > 0)
    return { ms: cfg.env.exec_timeout * 1000, key: 'env.exec_timeout' };
  if (family?.timeoutMs !== undefined)
    return { ms: family.timeoutMs, key: family.timeoutKey ?? 'the backend timeout' };
  return { ms: cfg.limits.request_timeout_s * 1000, key: 'limits.request_timeout_s' };
}
