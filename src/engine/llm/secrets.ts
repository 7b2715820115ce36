import { SkillOptError } from '../errors';
import type { Logger } from '../log';

/** What a known secret is replaced with wherever text leaves the model layer. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not treated as secrets: a placeholder key such as `none` for a
 * keyless local server would otherwise blank out ordinary words in every message.
 */
const MIN_SECRET_LENGTH = 8;

/** Replace every occurrence of every secret in `text` with `[redacted]`. */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  // Longest first, so a secret that contains another is replaced whole.
  const list = [...new Set(secrets)]
    .filter((s) => s.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * The set of credentials known to a run. Every log line, error message, event payload and cache
 * file that passes through the model client is filtered through one registry, so a key that was
 * registered once can never be printed, persisted or shown in a notification.
 */
export class SecretRegistry {
  private readonly secrets = new Set<string>();

  constructor(initial: Iterable<string | undefined> = []) {
    for (const s of initial) this.add(s);
  }

  /** Register a secret; empty and too-short values are ignored (see MIN_SECRET_LENGTH). */
  add(secret: string | undefined | null): void {
    if (typeof secret === 'string' && secret.trim().length >= MIN_SECRET_LENGTH) {
      this.secrets.add(secret);
      if (secret.trim() !== secret) this.secrets.add(secret.trim());
      // Its lines and words too: a message may show it with its line breaks turned into spaces.
      for (const part of secret.split(/[\s\p{Cc}]+/u))
        if (part.length >= MIN_SECRET_LENGTH) this.secrets.add(part);
    }
  }

  get size(): number {
    return this.secrets.size;
  }

  redact(text: string): string {
    return this.secrets.size ? redactSecrets(text, this.secrets) : text;
  }

  /** Deep copy of a JSON-like value with every string redacted (for events and files). */
  redactValue<T>(value: T): T {
    return this.secrets.size ? (redactDeep(value, (s) => redactSecrets(s, this.secrets)) as T) : value;
  }

  /** A logger that redacts every message before handing it on. */
  wrapLogger(logger: Logger): Logger {
    return { log: (level, component, message) => logger.log(level, component, this.redact(message)) };
  }
}

function redactDeep(value: unknown, redact: (s: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactDeep(v, redact);
    return out;
  }
  return value;
}

/** What a credential inside a URL is replaced with in everything we store or print. */
export const URL_MASK = '***';

/** Query parameter name parts that carry credentials (api-key, access_token, sig, code, apiKey…). */
const CREDENTIAL_PARTS = new Set([
  'key',
  'apikey',
  'token',
  'secret',
  'password',
  'passwd',
  'pass',
  'pwd',
  'sig',
  'signature',
  'code',
  'auth',
  'authorization',
  'credential',
  'credentials',
  'session',
  'sessionid',
]);

function isCredentialName(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    // A malformed escape: judge the name as written.
  }
  const parts = decoded.toLowerCase().split(/[-_.\s]+/);
  const whole = parts.join('');
  return parts.some((p) => CREDENTIAL_PARTS.has(p)) || /(key|token|secret|password)$/.test(whole);
}

const URL_HEAD = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)?([^?#]*)(\?[^#]*)?(#.*)?$/is;

/**
 * `url` with userinfo and the values of credential-like query parameters replaced by `***`,
 * otherwise exactly as written (no normalising), so config files stay recognisable. Anything
 * that is not a `scheme://` URL comes back unchanged.
 */
export function scrubUrl(url: string): string {
  const m = URL_HEAD.exec(url);
  if (!m) return url;
  const [, scheme, userinfo, rest, query, hash] = m;
  const cleanQuery = query
    ? '?' +
      query
        .slice(1)
        .split('&')
        .map((pair) => {
          const eq = pair.indexOf('=');
          return eq > 0 && isCredentialName(pair.slice(0, eq)) ? `${pair.slice(0, eq)}=${URL_MASK}` : pair;
        })
        .join('&')
    : '';
  return `${scheme}${userinfo ? `${URL_MASK}@` : ''}${rest}${cleanQuery}${hash ?? ''}`;
}

/** The credentials inside a URL (userinfo parts, credential query values), raw and decoded. */
export function urlSecrets(url: string | undefined): string[] {
  const m = url ? URL_HEAD.exec(url) : null;
  if (!m) return [];
  const raw: string[] = [];
  if (m[2]) raw.push(...m[2].slice(0, -1).split(':'));
  for (const pair of (m[4] ?? '').slice(1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && isCredentialName(pair.slice(0, eq))) raw.push(pair.slice(eq + 1));
  }
  const out = new Set<string>();
  for (const r of raw) {
    if (!r) continue;
    out.add(r);
    try {
      out.add(decodeURIComponent(r.replace(/\+/g, ' ')));
    } catch {
      // Kept as written only.
    }
  }
  return [...out];
}

/**
 * Hosts where a keyless server is normal (Ollama, vLLM, LM Studio, llama.cpp on this machine or
 * the local network). Anything else needs a key before the first call.
 */
export function isLocalUrl(url: string | undefined): boolean {
  if (!url) return false;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local')) return true;
  if (host === '::1' || host === '0.0.0.0' || host === 'host.docker.internal') return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (!v4) return false;
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31);
}

/** Sent to keyless local servers: the SDKs insist on some key. */
export const PLACEHOLDER_KEY = 'no-key';

/**
 * The key to hand to an SDK: the given one, a placeholder for a keyless local server, or a
 * SkillOptError('config') naming the variable and the command that sets it, before any call.
 */
export function requireApiKey(opts: {
  apiKey: string | undefined;
  provider: string;
  model: string;
  keyEnvVar: string;
  baseUrl?: string;
}): string {
  const key = opts.apiKey?.trim();
  // A line break or control character inside a key (two lines pasted, a CR from a Windows file)
  // makes every request fail with the SDK's error quoting the header, key and all.
  if (key && /[\s\p{Cc}]/u.test(key)) {
    throw new SkillOptError(
      'config',
      `the API key for ${opts.provider} (model ${opts.model}) has a space, line break or control character inside it`,
      {
        fix: `set it again to the key alone, on one line (${opts.keyEnvVar}, the config's *_api_key, or "SkillOpt: Set API Key" in VS Code)`,
      },
    );
  }
  if (key) return key;
  if (isLocalUrl(opts.baseUrl)) return PLACEHOLDER_KEY;
  throw new SkillOptError('config', `no API key for ${opts.provider} (model ${opts.model})`, {
    fix: `set the ${opts.keyEnvVar} environment variable, or run "SkillOpt: Set API Key" in VS Code`,
  });
}
