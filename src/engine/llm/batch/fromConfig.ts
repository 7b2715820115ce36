import type { SkillOptConfig } from '../../config/schema';
import { SkillOptError } from '../../errors';
import { AnthropicBackend } from '../anthropic';
import { AzureOpenAiBackend, OpenAiBackend } from '../openai';
import type { ChatBackend, Stage } from '../types';
import { AnthropicBatchApi } from './anthropic';
import { OpenAiBatchApi } from './openai';
import type { BatchApi } from './types';

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
