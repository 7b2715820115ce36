import type { SkillOptConfig } from '../../config/schema';
import { SkillOptError } from '../../errors';
import type { Accounting } from '../accounting';
import { AnthropicBackend } from '../anthropic';
import { cacheKey, shouldCache, type ResponseCache } from '../cache';
import { AzureOpenAiBackend, OpenAiBackend } from '../openai';
import { SecretRegistry } from '../secrets';
import type { BackendReply, ChatBackend, ChatRequest, Stage } from '../types';
import { AnthropicBatchApi } from './anthropic';
import { OpenAiBatchApi } from './openai';
import type { BatchApi } from './types';

/** The target's batch API with what the synchronous client would do around a call. */
export interface TargetBatch {
  api: BatchApi;
  stages: ReadonlySet<Stage>;
  pollMs: number;
  accounting: Accounting;
  /** A reply the response cache already holds (counted as a hit): that item is not sent. */
  cached(req: ChatRequest): Promise<BackendReply | undefined>;
  /** A batch reply with secrets redacted, kept in the response cache as a call's reply would be. */
  keep(req: ChatRequest, reply: BackendReply): BackendReply;
}

/** evaluation.batch_api for the run's target, or undefined when it is off. */
export function targetBatch(
  cfg: SkillOptConfig,
  backend: ChatBackend,
  run: { accounting: Accounting; cache?: ResponseCache; secrets: readonly string[] },
): TargetBatch | undefined {
  const mode = cfg.evaluation.batch_api;
  if (mode === 'off') return undefined;
  const api = targetBatchApi(cfg, backend);
  const secrets = new SecretRegistry(run.secrets);
  for (const s of backend.secrets?.() ?? []) secrets.add(s);
  const policy = { enabled: true, allRoles: cfg.cache.all_roles };
  const cache = (req: ChatRequest): ResponseCache | undefined =>
    run.cache && shouldCache(req, policy) ? run.cache : undefined;
  return {
    api,
    stages: batchStages(mode),
    pollMs: cfg.evaluation.batch_poll_s * 1000,
    accounting: run.accounting,
    async cached(req) {
      const hit = await cache(req)?.get(cacheKey(backend, req));
      if (hit)
        run.accounting.recordCacheHit({
          stage: req.stage,
          role: 'target',
          provider: backend.provider,
          model: backend.model,
        });
      return hit;
    },
    keep(req, reply) {
      const clean = secrets.redactValue(reply);
      cache(req)?.put(cacheKey(backend, req), { provider: backend.provider, model: backend.model }, clean);
      return clean;
    },
  };
}

/** The rollout stages each `evaluation.batch_api` mode sends through the batch API. */
export function batchStages(mode: SkillOptConfig['evaluation']['batch_api']): ReadonlySet<Stage> {
  if (mode === 'final') return new Set<Stage>(['test', 'eval']);
  if (mode === 'selection') return new Set<Stage>(['test', 'eval', 'selection']);
  return new Set<Stage>();
}

/**
 * The target's batch API, or a refusal before anything is spent: only OpenAI (and a compatible
 * server the config says implements it) and Anthropic have one here.
 */
export function targetBatchApi(cfg: SkillOptConfig, backend: ChatBackend): BatchApi {
  const refuse = (problem: string, fix: string): never => {
    throw new SkillOptError('config', problem, { key: 'evaluation.batch_api', fix });
  };
  const off = 'set evaluation.batch_api: off (or drop --batch) to send the calls one by one';
  if (backend instanceof AnthropicBackend) return new AnthropicBatchApi(backend.batchWire(), backend.model);
  if (backend instanceof OpenAiBackend) {
    if (backend.usesResponsesApi) {
      refuse(
        `${backend.model} is called through the Responses API, and SkillOpt sends batches of Chat Completions only`,
        `${off}, or use a Chat Completions model for batch evaluations`,
      );
    }
    if (backend.provider !== 'openai' && !cfg.model.target_supports_batch) {
      refuse(
        `the target's server at ${backend.endpoint} is not OpenAI, and most compatible servers have no Batch API`,
        `${off}, or set model.target_supports_batch: true if this server implements OpenAI's files and batches endpoints`,
      );
    }
    return new OpenAiBatchApi(backend.batchWire(), backend.provider, backend.model);
  }
  if (backend instanceof AzureOpenAiBackend) {
    return refuse(
      'Azure OpenAI batches need a Global Batch deployment, which SkillOpt does not drive yet',
      `${off}, or use the openai backend for batch evaluations`,
    );
  }
  return refuse(
    `the ${backend.provider} target has no batch API (only OpenAI and Anthropic offer one)`,
    `${off}, or use an openai or anthropic target`,
  );
}
