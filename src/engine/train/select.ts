import { lrAutonomousContract, rankingContract } from '../llm/contracts/update';
import { optimizerSkillView } from '../skill/package/views';
import { payloadKey, type UpdateMode } from '../prompts/modes';
import { blocks, metaSkillBlock, payloadLabel } from '../prompts/shared';
import { lrAutonomousSystemPrompt, rankingSystemPrompt } from '../prompts/system';
import { askOptimizer } from './ask';
import { itemsOf, type Item, type MergedPatch } from './aggregate';
import type { RunContext } from './context';

export function describeItem(item: Item, mode: UpdateMode): string {
  const s = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? ''));
  if (mode === 'patch')
    return `op=${s(item.op)}  target=${JSON.stringify(item.target ?? '')}  content=${JSON.stringify(item.content ?? '')}  support=${s(item.support_count ?? 1)}`;
  if (mode === 'rewrite_from_suggestions')
    return `type=${s(item.type)}  title=${JSON.stringify(item.title ?? '')}  instruction=${JSON.stringify(item.instruction ?? '')}  priority=${s(item.priority_hint ?? '')}  support=${s(item.support_count ?? 1)}`;
  const skill = s(item.new_skill);
  return `title=${JSON.stringify(item.title ?? '')}  change_summary=${JSON.stringify(item.change_summary ?? [])}  source=${s(item.source_type ?? '')}  support=${s(item.support_count ?? 1)}  new_skill_preview=${JSON.stringify(skill.slice(0, 300))}`;
}

/**
 * Gradient clipping (§3.2): keep the pool when it fits the budget; otherwise ask the optimizer to
 * pick `budget` items. Unlike the reference, a budget of 0 selects nothing.
 */
export async function rankAndSelect(
  ctx: RunContext,
  skill: string,
  merged: MergedPatch,
  budget: number,
  metaSkill?: string,
): Promise<MergedPatch> {
  const mode = ctx.settings.updateMode;
  const key = payloadKey(mode);
  const items = itemsOf(merged, mode);
  if (items.length <= budget) return merged;
  if (budget <= 0)
    return { ...merged, reasoning: `${merged.reasoning} [budget 0: nothing selected]`, [key]: [] };
  const user = blocks(
    metaSkillBlock(metaSkill),
    `## Current Skill\n<current_skill>\n${optimizerSkillView(skill, ctx.settings.packagePolicy)}\n</current_skill>`,
    `## Candidate Pool\n${items.length} ${payloadLabel(mode)}; budget: ${budget}\n\n${items.map((it, i) => `[${i}] ${describeItem(it, mode)}`).join('\n')}`,
    `Select up to ${budget} items by 0-based index, most important first.`,
  );
  const reply = await askOptimizer<{ reasoning?: string; selected_indices: number[] }>(
    ctx,
    'ranking',
    rankingContract(),
    rankingSystemPrompt(mode),
    user,
  );
  if (reply.ok) {
    const picked: number[] = [];
    for (const idx of reply.value.selected_indices) {
      if (picked.length >= budget) break;
      if (Number.isInteger(idx) && idx >= 0 && idx < items.length && !picked.includes(idx)) picked.push(idx);
    }
    if (picked.length > 0) {
      return {
        reasoning: `${merged.reasoning} [optimizer-ranked: selected ${picked.length}/${items.length} ${payloadLabel(mode)}]`,
        [key]: picked.map((i) => items[i]),
        ranking_details: reply.value,
      };
    }
  }
  return {
    reasoning: `${merged.reasoning} [fallback truncated ${items.length}->${budget} ${payloadLabel(mode)}]`,
    [key]: items.slice(0, budget),
  };
}

export interface LrDecision {
  learning_rate: number;
  raw_learning_rate: number | null;
  available_update_items: number;
  clamped: boolean;
  fallback: boolean;
  reasoning: string;
  confidence: string;
  risk_notes: string[];
  raw_response: string;
  error?: string;
}

/** Autonomous step size (§3.4): the optimizer decides how many items to apply this step. */
export async function decideLearningRate(
  ctx: RunContext,
  skill: string,
  merged: MergedPatch,
  evidence: { rolloutN: number; hard: number; soft: number },
  stepBufferText: string,
  metaSkill?: string,
): Promise<LrDecision> {
  const mode = ctx.settings.updateMode;
  const items = itemsOf(merged, mode);
  const user = blocks(
    metaSkillBlock(metaSkill),
    `## Current Skill\n<current_skill>\n${optimizerSkillView(skill, ctx.settings.packagePolicy)}\n</current_skill>`,
    `## Current Step Evidence\nrollout_n: ${evidence.rolloutN}\nrollout_hard: ${evidence.hard.toFixed(6)}\nrollout_soft: ${evidence.soft.toFixed(6)}\nproposed_update_items: ${items.length}\nupdate_item_type: ${payloadLabel(mode)}`,
    `## Proposed Items\n${items.map((it, i) => `[${i}] ${describeItem(it, mode)}`).join('\n')}`,
    'How many of these should be applied in this step?',
    stepBufferText && `## Previous Steps in This Epoch\n${stepBufferText}`,
  );
  const reply = await askOptimizer<{
    learning_rate: number;
    reasoning?: string;
    confidence?: string;
    risk_notes?: string[];
  }>(ctx, 'lr_autonomous', lrAutonomousContract(), lrAutonomousSystemPrompt(), user);
  if (!reply.ok) {
    return {
      learning_rate: 0,
      raw_learning_rate: null,
      available_update_items: items.length,
      clamped: false,
      fallback: true,
      reasoning: '',
      confidence: '',
      risk_notes: [],
      raw_response: reply.raw,
      error: reply.error,
    };
  }
  const raw = reply.value.learning_rate;
  return {
    learning_rate: Math.min(raw, items.length),
    raw_learning_rate: raw,
    available_update_items: items.length,
    clamped: raw > items.length,
    fallback: false,
    reasoning: reply.value.reasoning ?? '',
    confidence: reply.value.confidence ?? '',
    risk_notes: reply.value.risk_notes ?? [],
    raw_response: reply.raw,
  };
}
