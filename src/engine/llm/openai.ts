import OpenAI, { AzureOpenAI } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
} from 'openai/resources/chat/completions';
import { SkillOptError } from '../errors';
import type { Logger } from '../log';
import {
  buildBody,
  parseCompletion,
  sendRequest,
  shapeFrom,
  shapeParams,
  timeoutFor,
  type RequestShape,
  type ShapeOptions,
} from './openaiRequests';
import { PLACEHOLDER_KEY, requireApiKey, scrubUrl, urlSecrets } from './secrets';
import type { BackendReply, ChatBackend, ChatRequest } from './types';
import { splitBaseUrl } from './wire';
import { API_KEY_ENV_VARS } from '../../protocol/vocabulary';

export { isReasoningModel, type ReasoningSupport, type TokenField } from './openaiRequests';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const AZURE_DEFAULT_API_VERSION = '2024-12-01-preview';
const DEFAULT_TIMEOUT_MS = 300_000;

export interface OpenAiCommonOptions extends ShapeOptions {
  /** Default per-call timeout; the client's per-call signal governs as well. */
  timeoutMs?: number;
  logger?: Logger;
}

export interface OpenAiBackendOptions extends OpenAiCommonOptions {
  model: string;
  apiKey?: string;
  /** Any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp, OpenRouter); default OpenAI. */
  baseUrl?: string;
  /** Provider name for limits, prices and cache keys; default `openai`, or `openai_compatible` with a base URL. */
  provider?: string;
  /** Named in the missing-key message; default `API_KEY_ENV_VARS.openai`. */
  keyEnvVar?: string;
}

/** Chat Completions over the `openai` SDK. One attempt per call: retries belong to the client. */
export class OpenAiBackend implements ChatBackend {
  readonly acceptsImages = true;
  readonly acceptsTools = true;
  readonly provider: string;
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  readonly endpoint: string;
  readonly keyEnvVar: string;
  // `#` fields stay out of JSON.stringify and inspection, so the key never leaks via the backend.
  readonly #sdk: OpenAI;
  readonly #key: string;
  /** Credentials inside the base URL (query values, userinfo); `endpoint` is shown without them. */
  readonly #urlSecrets: readonly string[];
  readonly #shape: RequestShape;
  readonly #timeoutMs: number;
  readonly #logger?: Logger;

  constructor(opts: OpenAiBackendOptions) {
    const custom = Boolean(opts.baseUrl && opts.baseUrl.replace(/\/+$/, '') !== OPENAI_DEFAULT_BASE_URL);
    this.model = opts.model;
    this.provider = opts.provider ?? (custom ? 'openai_compatible' : 'openai');
    const url = custom ? opts.baseUrl! : OPENAI_DEFAULT_BASE_URL;
    this.endpoint = scrubUrl(url);
    this.#urlSecrets = urlSecrets(url);
    this.keyEnvVar = opts.keyEnvVar ?? API_KEY_ENV_VARS.openai;
    this.#key = requireApiKey({
      apiKey: opts.apiKey,
      provider: this.provider,
      model: opts.model,
      keyEnvVar: this.keyEnvVar,
      baseUrl: custom ? opts.baseUrl : undefined,
    });
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#logger = opts.logger;
    this.#shape = shapeFrom(opts.model, opts, custom ? 'max_tokens' : 'max_completion_tokens');
    this.cacheParams = {
      api: this.#shape.responses ? 'responses' : 'chat.completions',
      baseUrl: custom ? this.endpoint : null,
      ...shapeParams(this.#shape),
    };
    this.#sdk = new OpenAI({
      apiKey: this.#key,
      ...splitBaseUrl(url),
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.#timeoutMs,
      logLevel: 'off',
    });
  }

  secrets(): readonly string[] {
    return [...(this.#key === PLACEHOLDER_KEY ? [] : [this.#key]), ...this.#urlSecrets];
  }

  async call(req: ChatRequest, signal: AbortSignal): Promise<BackendReply> {
    return sendRequest(this.#sdk, this.#shape, req, signal, timeoutFor(req, this.#timeoutMs), {
      label: `${this.provider} ${this.model}`,
      ...(this.#logger ? { logger: this.#logger } : {}),
    });
  }

  /** Calls go through the Responses API, which our batch path does not send. */
  get usesResponsesApi(): boolean {
    return this.#shape.responses;
  }

  /** This backend's client and request shape for the Batch API (src/engine/llm/batch). */
  batchWire(): OpenAiBatchWire {
    return {
      sdk: this.#sdk,
      body: (req) => buildBody(this.#shape, req, this.#logger),
      parse: (completion) => parseCompletion(completion, `${this.provider} ${this.model}`),
    };
  }
}

/** What the Batch API needs from a backend: its client, and the same body and reply reading as a call. */
export interface OpenAiBatchWire {
  sdk: OpenAI;
  body(req: ChatRequest): ChatCompletionCreateParamsNonStreaming;
  parse(completion: ChatCompletion): BackendReply;
}

export interface AzureOpenAiBackendOptions extends OpenAiCommonOptions {
  /** `https://<resource>.openai.azure.com` */
  endpoint: string;
  deployment: string;
  apiVersion?: string;
  apiKey?: string;
  keyEnvVar?: string;
  /** Keyless auth (azure_cli, managed_identity): a bearer token per request instead of a key. */
  adTokenProvider?: () => Promise<string>;
}

/** Azure OpenAI through the SDK's `AzureOpenAI` client; same request shape as OpenAiBackend. */
export class AzureOpenAiBackend implements ChatBackend {
  readonly acceptsImages = true;
  readonly acceptsTools = true;
  readonly provider = 'azure_openai';
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  readonly endpoint: string;
  readonly keyEnvVar: string;
  readonly #sdk: AzureOpenAI;
  readonly #key: string;
  readonly #urlSecrets: readonly string[];
  readonly #shape: RequestShape;
  readonly #timeoutMs: number;
  readonly #logger?: Logger;

  constructor(opts: AzureOpenAiBackendOptions) {
    this.keyEnvVar = opts.keyEnvVar ?? API_KEY_ENV_VARS.azure_openai;
    if (!opts.endpoint?.trim()) {
      throw new SkillOptError('config', `no Azure OpenAI endpoint for deployment ${opts.deployment}`, {
        key: 'model.azure_openai_endpoint',
        fix: 'set model.azure_openai_endpoint in the config or the AZURE_OPENAI_ENDPOINT environment variable',
      });
    }
    if (!opts.deployment?.trim()) {
      throw new SkillOptError('config', 'no Azure OpenAI deployment name', {
        fix: 'set the model name (model.optimizer / model.target) to the Azure deployment name',
      });
    }
    this.model = opts.deployment;
    const endpoint = opts.endpoint.trim();
    this.endpoint = scrubUrl(endpoint);
    this.#urlSecrets = urlSecrets(endpoint);
    // A keyless sign-in needs no key; the token never reaches our logs (the SDK asks per request).
    this.#key = opts.adTokenProvider
      ? PLACEHOLDER_KEY
      : requireApiKey({
          apiKey: opts.apiKey,
          provider: this.provider,
          model: opts.deployment,
          keyEnvVar: this.keyEnvVar,
          baseUrl: endpoint,
        });
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#logger = opts.logger;
    this.#shape = shapeFrom(opts.deployment, opts, 'max_completion_tokens');
    const apiVersion = opts.apiVersion?.trim() || AZURE_DEFAULT_API_VERSION;
    this.cacheParams = {
      api: this.#shape.responses ? 'azure.responses' : 'azure.chat.completions',
      endpoint: this.endpoint,
      apiVersion,
      ...shapeParams(this.#shape),
    };
    this.#sdk = new AzureOpenAI({
      endpoint,
      // null keeps OPENAI_BASE_URL from the environment out: it would clash with `endpoint`.
      baseURL: null,
      deployment: opts.deployment,
      apiVersion,
      // '' (not undefined) keeps AZURE_OPENAI_API_KEY from the environment out of a keyless client.
      ...(opts.adTokenProvider
        ? { apiKey: '', azureADTokenProvider: opts.adTokenProvider }
        : { apiKey: this.#key }),
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.#timeoutMs,
      logLevel: 'off',
    });
  }

  secrets(): readonly string[] {
    return [...(this.#key === PLACEHOLDER_KEY ? [] : [this.#key]), ...this.#urlSecrets];
  }

  async call(req: ChatRequest, signal: AbortSignal): Promise<BackendReply> {
    return sendRequest(this.#sdk, this.#shape, req, signal, timeoutFor(req, this.#timeoutMs), {
      label: `${this.provider} ${this.model}`,
      ...(this.#logger ? { logger: this.#logger } : {}),
    });
  }
}
