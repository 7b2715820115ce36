import type { TaskItem } from '../../../src/engine/data/tasks';
import { SimOptimizerBackend } from '../../../src/engine/llm/sim/optimizer';
import { SimTargetBackend } from '../../../src/engine/llm/sim/target';
import type { ChatMessage, ChatRequest, Stage } from '../../../src/engine/llm/types';
import type { Handler, RecordedRequest, Reply } from './core';
import { contentText } from './core';
import { openAiMessages } from './openaiServer';

export const scriptedOptimizerModel = 'scripted-optimizer';
export const scriptedTargetModel = 'scripted-target';

/**
 * Config overrides that point both roles at a loopback server playing `scriptedModels`: the OpenAI
 * wire (`url` ends in /v1), or the Anthropic one (`url` is the server's origin).
 */
export function scriptedWireOverrides(url: string, wire: 'openai' | 'anthropic' = 'openai'): string[] {
  return [
    `model.optimizer_backend=${wire === 'openai' ? 'openai_compatible' : 'anthropic'}`,
    `model.target_backend=${wire}`,
    `model.optimizer=${scriptedOptimizerModel}`,
    `model.target=${scriptedTargetModel}`,
    `model.optimizer_base_url=${url}`,
    `model.target_base_url=${url}`,
  ];
}

/**
 * `scriptedWireOverrides` for a one-epoch run (response cache off) whose final test evaluations go
 * through the server's OpenAI Batch API (`OpenAiBatchApi` routes), polled every `pollS` seconds.
 */
export function scriptedFinalBatchOverrides(url: string, pollS: number): string[] {
  return [
    ...scriptedWireOverrides(url),
    'cache.enabled=false',
    'train.num_epochs=1',
    'model.target_supports_batch=true',
    'evaluation.batch_api=final',
    `evaluation.batch_poll_s=${pollS}`,
  ];
}

/** Which optimizer stage a request is, read from our own prompts (the wire carries no stage label). */
export function stageOf(messages: ChatMessage[]): Stage {
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  if (/"hypotheses"/.test(system)) return 'deep_reflect';
  if (/\{"grades": \[/.test(system)) return 'judge';
  if (/"description": "<the new description>"/.test(system)) return 'describe';
  if (/^## Epoch Step History/m.test(user)) return 'meta_reflect';
  if (/"selected_indices"/.test(system)) return 'ranking';
  if (/"slow_update_content"/.test(system)) return 'slow_update';
  if (/"meta_skill_content"/.test(system)) return 'meta_skill';
  if (/"learning_rate"/.test(system)) return 'lr_autonomous';
  if (/"new_skill": "<the complete document>"/.test(system)) return 'rewrite';
  if (/## (Patches to Merge|Two Pre-merged Groups)/.test(user)) return 'merge';
  if (/^## Execution Notes \(\d+\)$/m.test(user)) return 'appendix_consolidate';
  return 'analyst';
}

/**
 * A loopback handler that plays both models over the wire with deterministic replies (the same
 * behaviour as the offline `sim` backend, so the loop has real work), chosen by the request's model
 * name. `override` can replace any reply (errors, malformed JSON) for a given request. `targetModel`
 * names the target when a test uses a real model name (a priced one); every other model is the optimizer.
 */
export function scriptedModels(
  tasks: readonly TaskItem[],
  override?: (
    req: RecordedRequest,
    stage: Stage | 'target',
  ) => Reply | undefined | Promise<Reply | undefined>,
  targetModel = scriptedTargetModel,
): Handler {
  const target = new SimTargetBackend(scriptedTargetModel, tasks);
  const optimizer = new SimOptimizerBackend(scriptedOptimizerModel);
  return async (req) => {
    const body = req.body as { model?: string; system?: unknown };
    const messages = openAiMessages(req).map((m) => ({
      role: m.role as ChatMessage['role'],
      content: contentText(m.content),
    }));
    // The Messages API (Anthropic) carries the system prompt beside the messages.
    if (body.system !== undefined) messages.unshift({ role: 'system', content: contentText(body.system) });
    const isTarget = body.model === targetModel;
    const stage: Stage | 'target' = isTarget ? 'target' : stageOf(messages);
    const forced = await override?.(req, stage);
    if (forced) return forced;
    const chat: ChatRequest = {
      role: isTarget ? 'target' : 'optimizer',
      stage: isTarget ? 'rollout' : (stage as Stage),
      messages,
    };
    const out = await (isTarget ? target : optimizer).call(chat);
    return {
      kind: 'reply',
      text: out.text
        .replace('[simulated target]', '[scripted target]')
        .replace(/\[simulated optimizer\]/g, '[scripted optimizer]'),
    };
  };
}

/**
 * The sim optimizer's reply to a recorded request (either wire), its JSON changed by `change`: for an
 * override that slips one scripted edit or rewrite into an otherwise ordinary run.
 */
export async function changedSimReply(
  req: RecordedRequest,
  stage: Stage,
  change: (reply: Record<string, unknown>) => void,
): Promise<Reply> {
  const body = req.body as { system?: unknown };
  const messages: ChatMessage[] = openAiMessages(req).map((m) => ({
    role: m.role as ChatMessage['role'],
    content: contentText(m.content),
  }));
  if (body.system !== undefined) messages.unshift({ role: 'system', content: contentText(body.system) });
  const out = await new SimOptimizerBackend(scriptedOptimizerModel).call({
    role: 'optimizer',
    stage,
    messages,
  });
  const reply = JSON.parse(/```json\n([\s\S]*)\n```/.exec(out.text)![1]!) as Record<string, unknown>;
  change(reply);
  return { kind: 'reply', text: '```json\n' + JSON.stringify(reply) + '\n```' };
}
