import { rewriteContract } from '../llm/contracts/update';
import { withFilesOf } from '../skill/package/text';
import { optimizerSkillView, withoutPackageView } from '../skill/package/views';
import { applyEdits, assignEditIds, summarizeReport, type Edit } from '../skill/applyEdits';
import {
  extractAppendixNotes,
  extractSlowUpdate,
  findProtectedRegions,
  replaceAppendix,
  replaceSlowUpdate,
} from '../skill/document';
import { keepFrontMatter } from '../skill/frontMatterGuard';
import { blocks } from '../prompts/shared';
import { rewriteSystemPrompt } from '../prompts/system';
import { STEP_FILE } from '../store/layout';
import { askOptimizer } from './ask';
import { itemsOf, type MergedPatch } from './aggregate';
import type { RunContext } from './context';

export interface UpdateOutcome {
  /** null when a rewrite mode produced nothing (`skip_no_rewrite`). */
  candidate: string | null;
  edits: Edit[];
  report?: ReturnType<typeof applyEdits>['report'];
  summary?: ReturnType<typeof summarizeReport>;
  changeSummary?: string[];
  /** Written as `rewrite_result.json` / `full_rewrite_result.json`. */
  artifact?: { file: string; value: unknown };
  /** Rewrite modes: the model touched the protected block and we restored it. */
  protectedRestored?: boolean;
  /** Rewrite modes: why the rewrite's front matter was replaced by the current one (frontMatterGuard.ts). */
  frontMatterRestored?: string;
}

/** A whole-skill rewrite with the current skill's protected blocks, package files and host front matter kept. */
function keptRewrite(
  skill: string,
  newSkill: string,
): { text: string; protectedRestored: boolean; frontMatterRestored?: string } {
  const kept = keepProtectedBlock(skill, withFilesOf(skill, withoutPackageView(`${newSkill.trimEnd()}\n`)));
  const front = keepFrontMatter(skill, kept.text);
  return {
    text: front.text,
    protectedRestored: kept.restored,
    ...(front.restored ? { frontMatterRestored: front.restored } : {}),
  };
}

/**
 * Rewrite modes have no code-level protection in the reference; here each protected block of the
 * current skill (slow update, appendix) is put back verbatim whatever the rewrite did to it.
 */
export function keepProtectedBlock(previous: string, next: string): { text: string; restored: boolean } {
  let text = next;
  const had = new Set(findProtectedRegions(previous).map((r) => r.kind));
  const count = (t: string, kind: string): number =>
    findProtectedRegions(t).filter((r) => r.kind === kind).length;
  if (had.has('slow_update')) {
    const block = extractSlowUpdate(previous) ?? '';
    if (extractSlowUpdate(text) !== block || count(text, 'slow_update') !== 1)
      text = replaceSlowUpdate(text, block);
  }
  if (had.has('appendix')) {
    const notes = extractAppendixNotes(previous);
    const same = count(text, 'appendix') === 1 && extractAppendixNotes(text).join('\n') === notes.join('\n');
    if (!same) text = replaceAppendix(text, notes);
  }
  return { text, restored: text !== next };
}

export async function updateSkill(
  ctx: RunContext,
  skill: string,
  ranked: MergedPatch,
  stepBufferText: string,
): Promise<UpdateOutcome> {
  const mode = ctx.settings.updateMode;
  const items = itemsOf(ranked, mode);
  if (mode === 'patch') {
    const edits = assignEditIds(items as Edit[]);
    const { text, report } = applyEdits(skill, edits, {
      anchorMode: ctx.settings.anchorMode,
      packagePolicy: ctx.settings.packagePolicy,
    });
    return { candidate: text, edits, report, summary: summarizeReport(report) };
  }
  if (mode === 'full_rewrite_minibatch') {
    const chosen = items.find((i) => typeof i.new_skill === 'string' && i.new_skill.trim());
    if (!chosen) return { candidate: null, edits: [] };
    const kept = keptRewrite(skill, String(chosen.new_skill));
    return {
      candidate: kept.text,
      edits: [],
      changeSummary: Array.isArray(chosen.change_summary) ? chosen.change_summary.map(String) : [],
      artifact: {
        file: STEP_FILE.fullRewriteResult,
        value: {
          selected_candidate: chosen,
          merged_patch: ranked,
          ...(kept.frontMatterRestored ? { front_matter_restored: kept.frontMatterRestored } : {}),
        },
      },
      protectedRestored: kept.protectedRestored,
      ...(kept.frontMatterRestored ? { frontMatterRestored: kept.frontMatterRestored } : {}),
    };
  }
  if (items.length === 0) return { candidate: null, edits: [] };
  const user = blocks(
    `## Current Skill\n<current_skill>\n${optimizerSkillView(skill, ctx.settings.packagePolicy)}\n</current_skill>`,
    `## Selected Suggestions\n\`\`\`json\n${JSON.stringify(items, null, 2)}\n\`\`\``,
    stepBufferText && `## Previous Steps in This Epoch\n${stepBufferText}`,
  );
  const reply = await askOptimizer<{ reasoning?: string; change_summary: string[]; new_skill: string }>(
    ctx,
    'rewrite',
    rewriteContract(),
    rewriteSystemPrompt(),
    user,
    ctx.settings.rewriteMaxTokens,
  );
  if (!reply.ok || !reply.value.new_skill.trim()) return { candidate: null, edits: [] };
  const kept = keptRewrite(skill, reply.value.new_skill);
  return {
    candidate: kept.text,
    edits: [],
    changeSummary: reply.value.change_summary,
    artifact: {
      file: STEP_FILE.rewriteResult,
      value: {
        ...reply.value,
        ...(kept.frontMatterRestored ? { front_matter_restored: kept.frontMatterRestored } : {}),
      },
    },
    protectedRestored: kept.protectedRestored,
    ...(kept.frontMatterRestored ? { frontMatterRestored: kept.frontMatterRestored } : {}),
  };
}
