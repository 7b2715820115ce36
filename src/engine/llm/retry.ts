import {
  APIConnectionError as AnthropicConnectionError,
  APIConnectionTimeoutError as AnthropicTimeoutError,
  APIError as AnthropicApiError,
  APIUserAbortError as AnthropicAbortError,
} from '@anthropic-ai/sdk';
import {
  APIConnectionError as OpenAiConnectionError,
  APIConnectionTimeoutError as OpenAiTimeoutError,
  APIError as OpenAiApiError,
  APIUserAbortError as OpenAiAbortError,
} from 'openai';
import { cancelledError, SkillOptError } from '../errors';
import type { TargetErrorKind } from '../../protocol/vocabulary';

/** Thrown by the client when one attempt outlives its per-call timeout; always worth retrying. */
export class CallTimeoutError extends Error {
  override readonly name = 'CallTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no reply within ${formatSeconds(timeoutMs)}`);
  }
}

type SdkApiError = OpenAiApiError | AnthropicApiError;

function isSdkApiError(err: unknown): err is SdkApiError {
  return err instanceof OpenAiApiError || err instanceof AnthropicApiError;
}

function isConnectionError(err: unknown): boolean {
  return err instanceof OpenAiConnectionError || err instanceof AnthropicConnectionError;
}

function isTimeoutError(err: unknown): boolean {
  return (
    err instanceof CallTimeoutError ||
    err instanceof OpenAiTimeoutError ||
    err instanceof AnthropicTimeoutError
  );
}

/** Socket-level error codes from Node and undici that mean "the connection broke", not "you asked wrong". */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  }
  return undefined;
}

/** HTTP status of an SDK error, when the server answered. */
export function errorStatus(err: unknown): number | undefined {
  return isSdkApiError(err) && typeof err.status === 'number' ? err.status : undefined;
}

/**
 * Whether another attempt can help: connection failures, timeouts, a reply body cut short or
 * malformed in transit, and HTTP 408/409/429/5xx. Everything else (400, 401, 403, 404, 422, a reply
 * that fails validation, a cancelled call) fails the same way again and is not retried.
 */
export function isTransient(err: unknown): boolean {
  // Backends without HTTP errors (vscode-lm) mark rate limits and similar as transient.
  if (err instanceof SkillOptError)
    return (err as SkillOptError & { transient?: boolean }).transient === true;
  if (err instanceof OpenAiAbortError || err instanceof AnthropicAbortError) return false;
  if (isTimeoutError(err) || isConnectionError(err)) return true;
  const status = errorStatus(err);
  if (status !== undefined) return status === 408 || status === 409 || status === 429 || status >= 500;
  if (isSdkApiError(err)) return false;
  // The SDKs read the body with response.json(): a truncated body surfaces as a SyntaxError, a
  // socket closed mid-body as undici's TypeError('terminated').
  if (err instanceof SyntaxError) return true;
  if (err instanceof TypeError && /^(terminated|fetch failed)$/i.test(err.message)) return true;
  return networkCode(err) !== undefined;
}

export interface BackoffOptions {
  baseMs?: number;
  capMs?: number;
  /** Uniform [0, 1) source; injectable for tests. */
  random?: () => number;
}

/**
 * Exponential backoff with full jitter: a uniform wait in [0, min(cap, base · 2^(attempt−1))).
 * `attempt` is the 1-based number of the attempt that just failed.
 */
export function backoffMs(attempt: number, opts: BackoffOptions = {}): number {
  const base = opts.baseMs ?? 500;
  const cap = opts.capMs ?? 30_000;
  const random = opts.random ?? Math.random;
  const ceiling = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

function headerOf(err: unknown, name: string): string | undefined {
  if (!isSdkApiError(err)) return undefined;
  const headers: unknown = err.headers;
  if (headers && typeof (headers as Headers).get === 'function')
    return (headers as Headers).get(name) ?? undefined;
  return undefined;
}

/**
 * The wait a rate-limited or overloaded server asked for, from `retry-after-ms` or `retry-after`
 * (seconds or an HTTP date), capped at `capMs` so a hostile or broken header cannot stall a run.
 * Undefined when the error carries no usable header.
 */
export function retryAfterMs(err: unknown, capMs = 60_000, now: () => number = Date.now): number | undefined {
  const clamp = (ms: number): number => Math.min(capMs, Math.max(0, Math.round(ms)));
  const msHeader = headerOf(err, 'retry-after-ms');
  if (msHeader !== undefined && msHeader.trim() !== '') {
    const ms = Number(msHeader);
    if (Number.isFinite(ms)) return clamp(ms);
  }
  const header = headerOf(err, 'retry-after');
  if (header === undefined || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return clamp(seconds * 1000);
  const date = Date.parse(header);
  if (Number.isFinite(date)) return clamp(date - now());
  return undefined;
}

/** Sleep that ends early with SkillOptError('cancelled') when the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(cancelledError('Waiting to retry'));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(cancelledError('Waiting to retry'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** One line describing a failed attempt: `429 Rate limit reached`, `connection failed (ECONNREFUSED)`, ... */
export function describeError(err: unknown): string {
  if (isTimeoutError(err)) return err instanceof CallTimeoutError ? err.message : 'request timed out';
  if (isConnectionError(err)) {
    const code = networkCode(err);
    return code ? `connection failed (${code})` : 'connection failed';
  }
  if (err instanceof SyntaxError) return `malformed reply body (${oneLine(err.message)})`;
  if (err instanceof TypeError && /^terminated$/i.test(err.message)) return 'connection closed mid-reply';
  if (isSdkApiError(err)) return oneLine(apiErrorMessage(err));
  if (err instanceof Error) {
    const code = networkCode(err);
    return code ? `${oneLine(err.message)} (${code})` : oneLine(err.message);
  }
  return oneLine(String(err));
}

/**
 * `<status> <server message>`. The SDKs fall back to dumping the whole JSON body into the message
 * when it is not where they look (Anthropic nests it under `error.error.message`), so dig it out.
 */
function apiErrorMessage(err: SdkApiError): string {
  const body: unknown = err.error;
  const nested = (o: unknown, ...path: string[]): unknown =>
    path.reduce<unknown>(
      (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
      o,
    );
  const message = [nested(body, 'message'), nested(body, 'error', 'message')].find(
    (m): m is string => typeof m === 'string' && m.trim() !== '',
  );
  if (message === undefined || err.status === undefined) return err.message;
  return `${err.status} ${message}`;
}

/** What to do about a final failure, by kind. */
/** Why a call failed, in the words of TARGET_ERROR_KINDS. */
export function errorKind(err: unknown): TargetErrorKind {
  if (err instanceof SkillOptError) {
    if (err.kind) return err.kind;
    return err.reason === 'llm-reply' ? 'bad_reply' : 'other';
  }
  if (isTimeoutError(err)) return 'timeout';
  if (isConnectionError(err) || networkCode(err) !== undefined) return 'unreachable';
  const status = errorStatus(err);
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limit';
  if (status !== undefined && status >= 500) return 'server';
  if (status !== undefined) {
    const text = describeError(err);
    return /context|too long|maximum.*tokens|token limit/i.test(text) ? 'context_limit' : 'bad_request';
  }
  if (err instanceof SyntaxError) return 'bad_reply';
  return 'other';
}

export function fixForError(
  err: unknown,
  ctx: { endpoint?: string; keyEnvVar?: string; timeoutKey?: string },
): string {
  const where = ctx.endpoint ? ` at ${ctx.endpoint}` : '';
  const status = errorStatus(err);
  if (status === 401 || status === 403) {
    const key = ctx.keyEnvVar ? `${ctx.keyEnvVar} or ` : '';
    return `check the API key (${key}the "SkillOpt: Set API Key" command) and that it may use this model`;
  }
  if (status === 404) return `check the model or deployment name and the base URL${where}`;
  if (status === 429)
    return 'the provider is rate-limiting: lower limits.provider_concurrency or wait and resume';
  if (status !== undefined && status >= 500) return `the provider${where} is failing; resume the run later`;
  if (status !== undefined && errorKind(err) === 'context_limit') {
    return 'use a model with a longer context, shorten the skill (env.skill_init) or long task inputs, or lower train.batch_size and gradient.minibatch_size (fewer trajectories per optimizer prompt)';
  }
  if (status !== undefined) return 'the provider rejected the request; check the model options in the config';
  if (isTimeoutError(err))
    return `raise ${ctx.timeoutKey ?? 'limits.request_timeout_s'} or check the server${where}`;
  return `check that the server${where} is reachable`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 240 ? `${flat.slice(0, 237)}...` : flat;
}

function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
