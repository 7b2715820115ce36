import { mergeContract } from '../llm/contracts/update';
import { optimizerSkillView } from '../skill/package/views';
import { payloadKey, type UpdateMode } from '../prompts/modes';
import { blocks, metaSkillBlock } from '../prompts/shared';
import { mergeSystemPrompt } from '../prompts/system';
import { askOptimizer } from './ask';
import type { RunContext } from './context';
import type { RawPatch } from './reflect';

export type Item = Record<string, unknown>;

/** A merged patch as written to `merged_patch.json`: `{reasoning, <payload key>: [...]}`. */
export interface MergedPatch {
  reasoning: string;
  [key: string]: unknown;
}

export function itemsOf(patch: MergedPatch | RawPatch['patch'], mode: UpdateMode): Item[] {
  const items = patch[payloadKey(mode)];
  return Array.isArray(items) ? (items.filter((i) => i && typeof i === 'object') as Item[]) : [];
}

function patchOf(reasoning: string, mode: UpdateMode, items: Item[]): MergedPatch {
  return { reasoning, [payloadKey(mode)]: items };
}

/**
 * Reference normalisation (§1.1 step 5): take each raw patch's items, stamp `source_type` and
 * `support_count = max(batch_size, 1)` where missing, and split into failure and success groups.
 * Provenance (which minibatch and trajectories an item came from) is attached for the audit trail.
 */
export function normalisePatches(
  raw: RawPatch[],
  mode: UpdateMode,
): { failure: MergedPatch[]; success: MergedPatch[] } {
  const failure: MergedPatch[] = [];
  const success: MergedPatch[] = [];
  for (const p of raw) {
    const items = itemsOf(p.patch, mode);
    if (items.length === 0) continue;
    const source = p.source_type ?? 'failure';
    const support = Math.max(Math.trunc(Number(p.batch_size ?? 0)) || 0, 1);
    const stamped = items.map((item) => ({
      ...item,
      source_type: item.source_type ?? source,
      support_count: item.support_count ?? support,
      ...(p.minibatch
        ? { provenance: { minibatch: p.minibatch, trajectory_ids: p.trajectory_ids ?? [] } }
        : {}),
    }));
    (source === 'success' ? success : failure).push(patchOf(String(p.patch.reasoning ?? ''), mode, stamped));
  }
  return { failure, success };
}

function mergeUserMessage(
  skill: string,
  group: 'failure' | 'success',
  level: number,
  patches: MergedPatch[],
  metaSkill?: string,
): string {
  return blocks(
    metaSkillBlock(metaSkill),
    `## Current Skill\n<current_skill>\n${skill.trim()}\n</current_skill>`,
    `## Patches to Merge\ngroup: ${group}; level: ${level}; count: ${patches.length}\n\n\`\`\`json\n${JSON.stringify(patches, null, 2)}\n\`\`\``,
  );
}

async function mergeChunk(
  ctx: RunContext,
  skill: string,
  group: 'failure' | 'success',
  level: number,
  chunk: MergedPatch[],
  metaSkill?: string,
): Promise<MergedPatch> {
  const mode = ctx.settings.updateMode;
  const reply = await askOptimizer<MergedPatch>(
    ctx,
    'merge',
    mergeContract(mode),
    mergeSystemPrompt(group, mode),
    mergeUserMessage(optimizerSkillView(skill, ctx.settings.packagePolicy), group, level, chunk, metaSkill),
    mode === 'full_rewrite_minibatch' ? ctx.settings.rewriteMaxTokens : undefined,
  );
  if (reply.ok) {
    const items = itemsOf(reply.value, mode).map((i) => ({ ...i, merge_level: level }));
    return { ...reply.value, [payloadKey(mode)]: items };
  }
  return patchOf(
    'fallback concatenation',
    mode,
    chunk.flatMap((p) => itemsOf(p, mode)),
  );
}

/** One group's merge tree: chunks of `merge_batch_size` merged in parallel, level by level. */
export async function mergeGroup(
  ctx: RunContext,
  skill: string,
  group: 'failure' | 'success',
  patches: MergedPatch[],
  metaSkill?: string,
): Promise<MergedPatch> {
  const mode = ctx.settings.updateMode;
  if (patches.length === 0) return patchOf('no patches', mode, []);
  const size = Math.max(2, ctx.settings.mergeBatchSize);
  let current = patches;
  let level = 1;
  while (current.length > 1) {
    const chunks: MergedPatch[][] = [];
    for (let i = 0; i < current.length; i += size) chunks.push(current.slice(i, i + size));
    current = await Promise.all(
      chunks.map((chunk) =>
        chunk.length === 1
          ? Promise.resolve(chunk[0])
          : mergeChunk(ctx, skill, group, level, chunk, metaSkill),
      ),
    );
    level++;
  }
  return current[0];
}

/**
 * Hierarchical merge (§3.1). The failure and success trees run concurrently (the reference runs
 * them one after the other); the final merge waits for both.
 */
export async function aggregate(
  ctx: RunContext,
  skill: string,
  raw: RawPatch[],
  metaSkill?: string,
): Promise<MergedPatch> {
  const mode = ctx.settings.updateMode;
  const groups = normalisePatches(raw, mode);
  const [f, s] = await Promise.all([
    mergeGroup(ctx, skill, 'failure', groups.failure, metaSkill),
    mergeGroup(ctx, skill, 'success', groups.success, metaSkill),
  ]);
  const fItems = itemsOf(f, mode);
  const sItems = itemsOf(s, mode);
  if (fItems.length === 0 && sItems.length === 0) return patchOf('no updates from either group', mode, []);
  if (sItems.length === 0) return f;
  if (fItems.length === 0) return s;
  const user = blocks(
    metaSkillBlock(metaSkill),
    `## Current Skill\n<current_skill>\n${optimizerSkillView(skill, ctx.settings.packagePolicy)}\n</current_skill>`,
    `## Two Pre-merged Groups\ngroup: final; failure items: ${fItems.length} (high priority); success items: ${sItems.length}\n\n\`\`\`json\n${JSON.stringify([f, s], null, 2)}\n\`\`\``,
  );
  const reply = await askOptimizer<MergedPatch>(
    ctx,
    'merge',
    mergeContract(mode),
    mergeSystemPrompt('final', mode),
    user,
    mode === 'full_rewrite_minibatch' ? ctx.settings.rewriteMaxTokens : undefined,
  );
  if (reply.ok) return reply.value;
  return patchOf('fallback: failure first, then success', mode, [...fItems, ...sItems]);
}
