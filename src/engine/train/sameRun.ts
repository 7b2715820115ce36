/**
 * A run folder belongs to the config it was started with. Resuming it under a different config
 * would mix two experiments in one history (and config.json would name a seed the steps never
 * used), so it is refused, naming the differences; keys that only steer how the run is carried out
 * (caps, concurrency, timeouts, cache, review mode, prices, keys) may change between sessions.
 */
import { SkillOptError } from '../errors';

const OPERATIONAL = new Set([
  'optimizer_concurrency',
  'target_concurrency',
  'provider_concurrency',
  'request_timeout_s',
  'max_retries',
  'max_tokens',
  'max_dollars',
  'max_wall_time_s',
  'max_errored_share',
  'cache_enabled',
  'cache_dir',
  'cache_all_roles',
  'review_mode',
  'prices',
  'out_root',
  'split_output_dir',
  'codex_exec_path',
  'claude_code_exec_path',
  'cursor_exec_path',
  'copilot_exec_path',
]);

/** Keys whose values are credentials or how to obtain them: never a reason to refuse. */
const isCredential = (key: string): boolean =>
  /(_api_key|_auth_mode|_ad_scope|_managed_identity_client_id)$/.test(key);

const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? 'unset';
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/** Refuses to resume `outDir` under `now` when it differs from the config the run was started with. */
export function checkSameConfig(
  outDir: string,
  saved: Record<string, unknown>,
  now: Record<string, unknown>,
): void {
  const keys = [...new Set([...Object.keys(saved), ...Object.keys(now)])];
  const differ = keys.filter(
    (k) =>
      !OPERATIONAL.has(k) &&
      !isCredential(k) &&
      k in saved &&
      JSON.stringify(saved[k]) !== JSON.stringify(now[k]),
  );
  if (!differ.length) return;
  const list = differ
    .slice(0, 6)
    .map((k) => `${k}: ${show(saved[k])} → ${show(now[k])}`)
    .join('; ');
  throw new SkillOptError(
    'config',
    `this run folder was started with a different config (${list}${differ.length > 6 ? `; and ${differ.length - 6} more` : ''})`,
    {
      file: outDir,
      fix: 'resume with the config the run was started with, train into another --out folder, or start this folder afresh with --fresh',
    },
  );
}
