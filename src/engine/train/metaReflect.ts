import { readSkillArtifactIfAny, writeSkillArtifact } from '../skill/package/artifacts';
import { optimizerSkillView } from '../skill/package/views';
import { join } from 'node:path';
import type { PatchBody } from '../llm/contracts/payload';
import { metaReflectContract } from '../llm/contracts/reflect';
import { metaReflectSystemPrompt, metaReflectUserMessage } from '../prompts/deep';
import {
  applyEdits,
  assignEditIds,
  summarizeReport,
  type Edit,
  type EditReportRow,
  type ReportSummary,
} from '../skill/applyEdits';
import { skillHash } from '../skill/document';
import { writeJsonAtomic } from '../store/atomic';
import { askOptimizer } from './ask';
import type { RunContext } from './context';
import { epochDirName, RunLayout, STEP_FILE } from '../store/layout';
import { artifactSchemas, readArtifact } from '../store/runSchemas';
import type { StepBufferEntry, StepRecord } from '../../protocol/records';
import { isAccepted } from '../../protocol/vocabulary';

export interface MetaReflectArgs {
  epoch: number;
  /** The current skill at the end of the epoch; edits apply to it. */
  skill: string;
  /** This epoch's step records, in order. */
  history: readonly StepRecord[];
  /** This epoch's step-buffer entries (rejected edits, score transitions). */
  stepBuffer: readonly StepBufferEntry[];
  metaSkill?: string;
  /** `<run>/meta_reflect/epoch_XX` (`RunLayout.epochDir('meta_reflect', epoch)`) */
  dir: string;
  /** Edit budget; default `learningRate` (the loop passes none: optimizer.meta_learning_rate has no effect, see disposition.ts). */
  budget?: number;
  /** Gate score of the current skill when the epoch began, for the first step's "before". */
  startScore?: number;
}

export interface MetaReflectResult {
  /** The meta candidate, or null when no edit applied. It still has to pass the gate. */
  candidate: string | null;
  edits: Edit[];
  report: EditReportRow[];
  reasoning: string;
}

export type MetaReflectAction = 'candidate' | 'no_change' | 'no_history' | 'fallback';

/** `meta_reflect_result.json` (`STEP_FILE.metaReflectResult`) */
export interface MetaReflectFile {
  epoch: number;
  action: MetaReflectAction;
  reasoning: string;
  edits: Edit[];
  report: EditReportRow[];
  summary: ReportSummary;
  skill_hash: string;
  candidate_hash: string | null;
  fallback_reason?: string;
}

interface TriedEdit {
  op: string;
  target: string;
  content: string;
  fate: string;
}

/**
 * The edits a step tried and what became of them. The step's apply report (with the ranked edits
 * for full text) is the most precise source; without it, the step buffer's rejected edits; in
 * rewrite modes, the rewrite's change summary.
 */
function editsTried(outDir: string, record: StepRecord, entry: StepBufferEntry | undefined): TriedEdit[] {
  const layout = new RunLayout(outDir);
  const reportRows = readArtifact<EditReportRow[]>(
    layout.stepFile(record.step, STEP_FILE.applyReport),
    artifactSchemas.applyReport,
  );
  const humanIds = new Set((record.review?.rejected_edits ?? []).map((r) => r.id));
  const humanRejectedAll = record.review?.decision === 'human_reject';
  if (Array.isArray(reportRows) && reportRows.length > 0) {
    const ranked = readArtifact<{ edits?: Edit[] }>(
      layout.stepFile(record.step, STEP_FILE.ranked),
      artifactSchemas.patch,
    );
    const full = new Map((ranked?.edits ?? []).map((e) => [String(e.id ?? ''), e]));
    return reportRows.map((row) => {
      const e = full.get(row.id);
      const applied = row.status.startsWith('applied');
      const fate = !applied
        ? `not applied (${row.status}${row.error ? `: ${row.error}` : ''})`
        : humanIds.has(row.id) || (humanRejectedAll && !isAccepted(record.action))
          ? 'turned down by the person'
          : isAccepted(record.action)
            ? 'kept'
            : 'rejected by the gate';
      return {
        op: row.op,
        target: typeof e?.target === 'string' ? e.target : row.target,
        content: typeof e?.content === 'string' ? e.content : row.content_preview,
        fate,
      };
    });
  }
  if (entry?.rejected_edits?.length) {
    return entry.rejected_edits.map((r) => ({
      op: typeof r.op === 'string' ? r.op : typeof r.type === 'string' ? r.type : 'rewrite',
      target: typeof r.target === 'string' ? r.target : typeof r.title === 'string' ? r.title : '',
      content:
        typeof r.content === 'string'
          ? r.content
          : typeof r.instruction === 'string'
            ? r.instruction
            : JSON.stringify(r.change_summary ?? ''),
      fate: r.human ? 'turned down by the person' : 'rejected by the gate',
    }));
  }
  const fate = isAccepted(record.action) ? 'kept' : 'rejected by the gate';
  return (record.rewrite_change_summary ?? []).map((c) => ({ op: 'rewrite', target: '', content: c, fate }));
}

function score(n: number | undefined): string {
  return n === undefined || n < 0 ? '?' : n.toFixed(4);
}

/** The epoch as the optimizer reads it: per step, the action, score before → after, and every edit's fate. */
export function renderEpochHistory(
  outDir: string,
  history: readonly StepRecord[],
  stepBuffer: readonly StepBufferEntry[],
  startScore?: number,
): string {
  const byStep = new Map(stepBuffer.map((e) => [e.step, e]));
  const lines: string[] = [];
  if (startScore !== undefined) lines.push(`Selection score when the epoch began: ${score(startScore)}`);
  let before = startScore;
  for (const record of [...history].sort((a, b) => a.step - b.step)) {
    const entry = byStep.get(record.step);
    const action = record.action.toUpperCase();
    if (record.candidate_gate_score === undefined) {
      lines.push('', `### Step ${record.step}: ${action} (no candidate was evaluated)`);
    } else {
      const from = entry?.score_before ?? before;
      lines.push(
        '',
        `### Step ${record.step}: ${action}, selection score ${score(from)} → ${score(record.candidate_gate_score)}`,
      );
    }
    const nFail = entry?.n_fail ?? Math.round((1 - record.rollout_hard) * record.rollout_n);
    lines.push(`rollout: ${nFail}/${record.rollout_n} failed`);
    const patterns = (entry?.failure_patterns ?? []).slice(0, 4);
    if (patterns.length)
      lines.push(`failure patterns: ${patterns.map((p) => `${p.pattern} ×${p.count}`).join('; ')}`);
    const tried = editsTried(outDir, record, entry);
    if (tried.length) {
      lines.push('edits tried:');
      tried.forEach((t, i) =>
        lines.push(
          `  ${i + 1}. [${t.op}] ${t.fate} target=${JSON.stringify(t.target)} content=${JSON.stringify(t.content)}`,
        ),
      );
    }
    before = record.current_score;
  }
  return lines.join('\n').trim();
}

function fileResult(
  saved: MetaReflectFile,
  dir: string,
  skill: string,
  settings: Pick<RunContext['settings'], 'anchorMode' | 'packagePolicy'>,
): MetaReflectResult {
  let candidate: string | null = null;
  if (saved.candidate_hash) {
    const path = join(dir, STEP_FILE.candidate);
    candidate = readSkillArtifactIfAny(path) ?? null;
    // A crash between the two writes leaves no candidate file: re-apply the saved edits.
    if (candidate === null || skillHash(candidate) !== saved.candidate_hash) {
      // Under the run's package policy, as first applied: it decides which edits apply.
      const replay = applyEdits(skill, saved.edits, {
        anchorMode: settings.anchorMode,
        packagePolicy: settings.packagePolicy,
      }).text;
      candidate = skillHash(replay) === saved.candidate_hash ? replay : null;
    }
  }
  return { candidate, edits: saved.edits, report: saved.report, reasoning: saved.reasoning };
}

/**
 * Meta reflect (issue 8): at the end of an epoch, one optimizer call over the epoch's step history
 * asks for higher-level edits (consolidate, generalise, remove what the rejections show does not
 * help); they are applied to the current skill as a meta candidate. Gating it is the caller's job.
 * The result file makes the stage resumable without another model call.
 */
export async function metaReflect(ctx: RunContext, args: MetaReflectArgs): Promise<MetaReflectResult> {
  const resultPath = join(args.dir, STEP_FILE.metaReflectResult);
  const saved = readArtifact<MetaReflectFile>(resultPath, artifactSchemas.metaReflect);
  if (saved) return fileResult(saved, args.dir, args.skill, ctx.settings);

  const write = (
    action: MetaReflectAction,
    result: MetaReflectResult,
    fallbackReason?: string,
  ): MetaReflectResult => {
    if (result.candidate !== null) writeSkillArtifact(join(args.dir, STEP_FILE.candidate), result.candidate);
    const file: MetaReflectFile = {
      epoch: args.epoch,
      action,
      reasoning: result.reasoning,
      edits: result.edits,
      report: result.report,
      summary: summarizeReport(result.report),
      skill_hash: skillHash(args.skill),
      candidate_hash: result.candidate === null ? null : skillHash(result.candidate),
      ...(fallbackReason ? { fallback_reason: fallbackReason } : {}),
    };
    writeJsonAtomic(resultPath, file);
    return result;
  };
  const empty = (reasoning: string): MetaReflectResult => ({
    candidate: null,
    edits: [],
    report: [],
    reasoning,
  });
  if (args.history.length === 0) return write('no_history', empty('no steps in this epoch'));

  const budget = Math.max(1, args.budget ?? ctx.settings.learningRate);
  const user = metaReflectUserMessage({
    skill: optimizerSkillView(args.skill, ctx.settings.packagePolicy),
    epoch: args.epoch,
    budget,
    historyText: renderEpochHistory(ctx.outDir, args.history, args.stepBuffer, args.startScore),
    ...(args.metaSkill ? { metaSkill: args.metaSkill } : {}),
  });
  const reply = await askOptimizer<PatchBody>(
    ctx,
    'meta_reflect',
    metaReflectContract(),
    metaReflectSystemPrompt(),
    user,
  );
  if (!reply.ok) return write('fallback', empty(''), reply.error);

  const items = Array.isArray(reply.value.edits) ? (reply.value.edits as Edit[]) : [];
  const origin = `meta_reflect_${epochDirName(args.epoch)}`;
  const edits = assignEditIds(items.slice(0, budget).map((e) => ({ ...e, update_origin: origin })));
  const reasoning = reply.value.reasoning.trim();
  if (edits.length === 0) return write('no_change', { candidate: null, edits, report: [], reasoning });
  const { text, report } = applyEdits(args.skill, edits, {
    anchorMode: ctx.settings.anchorMode,
    packagePolicy: ctx.settings.packagePolicy,
  });
  const changed = summarizeReport(report).applied > 0 && text !== args.skill;
  return write(changed ? 'candidate' : 'no_change', {
    candidate: changed ? text : null,
    edits,
    report,
    reasoning,
  });
}
