/**
 * model.reasoning_effort where a role's API gets none: the reference hands it to the Claude CLI
 * (`--effort`) and to every Azure model, and drops it for its OpenAI-compatible families; here the
 * Anthropic Messages API, OpenAI models without reasoning and those families get none. Said once per
 * role when set away from its default (a reference config's `medium` says nothing).
 */
import { keysSet } from '../config/idleKeys';
import type { SkillOptConfig } from '../config/schema';
import { modelFields } from '../config/schema/sections';
import type { BackendKind } from '../../protocol/vocabulary';
import type { ChatFamily } from './chatFamilies';
import { isReasoningModel } from './openaiRequests';
import { needsResponsesApi } from './openaiResponses';
import type { ModelRole } from './types';

const FAMILY_NAMES: Readonly<Record<ChatFamily, string>> = {
  qwen: 'qwen_chat',
  minimax: 'minimax_chat',
  openai_compatible: 'openai_compatible',
};

export function effortNotice(
  cfg: SkillOptConfig,
  role: ModelRole,
  kind: BackendKind,
  model: string,
  family?: ChatFamily,
): string | undefined {
  if (keysSet(cfg.model, modelFields, ['reasoning_effort']).length === 0) return undefined;
  const said = `${role}: model.reasoning_effort ${cfg.model.reasoning_effort} is not sent to`;
  if (family) return `${said} the ${FAMILY_NAMES[family]} backend (the reference drops it there too)`;
  if (kind === 'anthropic')
    return `${said} the Anthropic Messages API (the reference hands it to the Claude CLI's --effort); set model.thinking_budget for extended thinking`;
  if ((kind === 'openai' || kind === 'azure_openai') && !isReasoningModel(model) && !needsResponsesApi(model))
    return `${said} ${model}, which takes none (only o-series and gpt-5 models do)`;
  return undefined;
}
