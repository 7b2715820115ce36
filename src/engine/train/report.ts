import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { AccountingSnapshot } from '../llm/accounting';
import { promptCacheSummary, promptCacheText, type PromptCacheSummary } from '../llm/spendText';
import { EVAL_FILE, RUN_DIR, RUN_FILE } from '../store/layout';
import { activationReportLines, type ActivationSummary } from '../activation/summary';
import { packageLineOrigins, type ProvenanceRecord } from './provenance';
import { isErrored } from './rollout';
import { describeGateTest, describeItemRegressions, testCheckLines } from '../../protocol/gateText';
import type {
  GateTestRecord,
  ItemRegressions,
  RolloutResult,
  StepRecord,
  TestCheck,
} from '../../protocol/records';
import {
  isAccepted,
  isInconclusive,
  isRejected,
  isSkipped,
  TARGET_ERROR_LABELS,
  type TargetErrorKind,
} from '../../protocol/vocabulary';

export interface PersistentFailure {
  id: string;
  evaluations: number;
  last_reason: string;
  task: string;
}

export interface SpeedFigures {
  selection_calls_saved?: number;
  speculative_calls?: number;
  speculative_calls_discarded?: number;
}

export interface RunReport {
  scores: {
    selection: { initial: number | null; best: number | null; final: number | null };
    test: { initial: number | null; best: number | null; final: number | null };
  };
  edits: { proposed: number; merged: number; applied: number; kept: number; acceptance_rate: number | null };
  steps: {
    total: number;
    accepted: number;
    rejected: number;
    /** The paired gate could not tell the candidate from the current skill (not kept). */
    inconclusive: number;
    skipped: number;
    human_decisions: number;
  };
  /** Steps whose gate ran the paired test or the per-item rule, with what they found. */
  gate_tests: Array<{
    step: number;
    action: string;
    test?: GateTestRecord;
    item_regressions?: ItemRegressions;
  }>;
  /** Why the run ended before its last epoch (gate patience), when it did. */
  stopped_early?: string;
  /** The test split's intervals and whether the selection gain shows on it. */
  test_check?: TestCheck;
  /** evaluation.no_skill_baseline: the target's hard score with no skill at all. */
  no_skill?: { selection: number; test: number | null };
  /** evaluation.early_stop / speed.speculate, when on: calls they saved or added (this process). */
  speed?: SpeedFigures;
  skill_length: Array<{ step: number; chars: number; tokens: number }>;
  edit_budget: Array<{ step: number; budget: number | null }>;
  persistent_failures: PersistentFailure[];
  /** What went wrong outside the skill: target items that could not be answered, reply fallbacks. */
  reliability: { errored_items: number; errored_by_kind: Record<string, number>; fallbacks: number };
  spend_by_role: Record<
    string,
    {
      calls: number;
      prompt_tokens: number;
      completion_tokens: number;
      dollars: number | null;
      cache_hits: number;
      /** Prompt tokens read from the provider's prompt cache (absent in reports written before it). */
      cached_tokens?: number;
    }
  >;
  /** The providers' prompt caches over the whole run. */
  prompt_cache?: PromptCacheSummary;
  /** The description's own track (activation.enabled). */
  activation?: ActivationSummary;
  kept_lines: Array<{
    line: number;
    /** A skill folder's file other than SKILL.md. */
    file?: string;
    text: string;
    step: number;
    source_type?: string;
    support_count?: number;
    score_delta: number;
    trajectories: number;
  }>;
}

/** Every rollout row in the run folder (train, selection, slow-update, test), grouped by task id. */
function allResults(outDir: string): Map<string, RolloutResult[]> {
  const byId = new Map<string, RolloutResult[]>();
  const visit = (dir: string, depth: number): void => {
    if (depth > 6 || !existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      if (entry === EVAL_FILE.predictions || entry === RUN_DIR.generatedSplits) continue;
      const p = join(dir, entry);
      if (entry === EVAL_FILE.results) {
        for (const line of readFileSync(p, 'utf8').split('\n')) {
          if (!line.trim()) continue;
          try {
            const r = JSON.parse(line) as RolloutResult;
            byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
          } catch {
            // A torn line from an interrupted write is not evidence either way.
          }
        }
      } else if (statSync(p).isDirectory()) visit(p, depth + 1);
    }
  };
  visit(outDir, 0);
  return byId;
}

/**
 * Items that failed every time they were evaluated, under every skill version: the skill is
 * unlikely to be the problem (a wrong expected answer, an unanswerable task, a scorer mismatch).
 */
export function persistentFailures(outDir: string, minEvaluations = 2): PersistentFailure[] {
  const out: PersistentFailure[] = [];
  for (const [id, all] of allResults(outDir)) {
    const rows = all.filter((r) => !isErrored(r));
    if (rows.length < minEvaluations || rows.some((r) => r.hard > 0)) continue;
    const last = rows[rows.length - 1];
    out.push({
      id,
      evaluations: rows.length,
      last_reason: last.fail_reason ?? last.error ?? 'failed',
      task: last.task_description,
    });
  }
  return out.sort((a, b) => b.evaluations - a.evaluations || a.id.localeCompare(b.id));
}

export function buildReport(args: {
  outDir: string;
  history: readonly StepRecord[];
  baselineSelection: number;
  bestSelection: number;
  finalSelection: number | null;
  tests: { initial?: number; best?: number; final?: number };
  accounting: AccountingSnapshot;
  bestSkill: string;
  provenance: readonly ProvenanceRecord[];
  humanDecisions: number;
  stoppedEarly?: string;
  testCheck?: TestCheck;
  noSkill?: { selection: number; test?: number };
  activation?: ActivationSummary;
  speed?: SpeedFigures;
}): RunReport {
  const h = args.history;
  const sum = (f: (r: StepRecord) => number): number => h.reduce((n, r) => n + f(r), 0);
  const applied = sum((r) => r.edit_apply_summary?.applied ?? 0);
  const kept = sum((r) => (isAccepted(r.action) ? (r.edit_apply_summary?.applied ?? 0) : 0));
  const roles: RunReport['spend_by_role'] = {};
  for (const e of args.accounting.entries) {
    // The judge runs on the optimizer's backend but is its own line of spend.
    const r = (roles[e.stage === 'judge' ? 'judge' : e.role] ??= {
      calls: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      dollars: 0,
      cache_hits: 0,
      cached_tokens: 0,
    });
    r.calls += e.calls;
    r.cached_tokens = (r.cached_tokens ?? 0) + e.cachedTokens;
    r.prompt_tokens += e.promptTokens;
    r.completion_tokens += e.completionTokens;
    r.cache_hits += e.cacheHits;
    r.dollars = r.dollars === null || e.dollars === null ? null : r.dollars + e.dollars;
  }
  return {
    scores: {
      selection: { initial: args.baselineSelection, best: args.bestSelection, final: args.finalSelection },
      test: {
        initial: args.tests.initial ?? null,
        best: args.tests.best ?? null,
        final: args.tests.final ?? null,
      },
    },
    edits: {
      proposed: sum((r) => r.n_edits_proposed ?? 0),
      merged: sum((r) => r.n_edits_merged ?? 0),
      applied,
      kept,
      acceptance_rate: applied ? kept / applied : null,
    },
    steps: {
      total: h.length,
      accepted: h.filter((r) => isAccepted(r.action)).length,
      rejected: h.filter((r) => isRejected(r.action)).length,
      inconclusive: h.filter((r) => isInconclusive(r.action)).length,
      skipped: h.filter((r) => isSkipped(r.action)).length,
      human_decisions: args.humanDecisions + h.filter((r) => r.review).length,
    },
    gate_tests: h
      .filter((r) => r.gate_test || r.item_regressions)
      .map((r) => ({
        step: r.step,
        action: r.action,
        ...(r.gate_test ? { test: r.gate_test } : {}),
        ...(r.item_regressions ? { item_regressions: r.item_regressions } : {}),
      })),
    ...(args.stoppedEarly ? { stopped_early: args.stoppedEarly } : {}),
    ...(args.testCheck ? { test_check: args.testCheck } : {}),
    ...(args.noSkill
      ? { no_skill: { selection: args.noSkill.selection, test: args.noSkill.test ?? null } }
      : {}),
    ...(args.speed ? { speed: args.speed } : {}),
    skill_length: h.map((r) => ({
      step: r.step,
      chars: r.skill_len,
      tokens: r.skill_tokens ?? Math.ceil(r.skill_len / 4),
    })),
    edit_budget: h.map((r) => ({ step: r.step, budget: r.edit_budget ?? null })),
    persistent_failures: persistentFailures(args.outDir),
    reliability: reliability(args.outDir, h),
    spend_by_role: roles,
    prompt_cache: promptCacheSummary(args.accounting.totals),
    ...(args.activation ? { activation: args.activation } : {}),
    kept_lines: packageLineOrigins(args.bestSkill, args.provenance).map((o) => ({
      line: o.line + 1,
      ...(o.file ? { file: o.file } : {}),
      text: o.text,
      step: o.origin.step,
      ...(o.origin.source_type ? { source_type: o.origin.source_type } : {}),
      ...(o.origin.support_count !== undefined ? { support_count: o.origin.support_count } : {}),
      score_delta: o.origin.score_after - o.origin.score_before,
      trajectories: o.origin.trajectory_ids.length,
    })),
  };
}

/** Errored target rows anywhere in the run folder, by cause, and the steps' structured-reply fallbacks. */
function reliability(outDir: string, history: readonly StepRecord[]): RunReport['reliability'] {
  const byKind: Record<string, number> = {};
  let errored = 0;
  for (const rows of allResults(outDir).values()) {
    for (const r of rows.filter(isErrored)) {
      errored++;
      const kind = r.error_kind ?? 'other';
      byKind[kind] = (byKind[kind] ?? 0) + 1;
    }
  }
  const fallbacks = history.reduce((n, r) => n + (r.fallbacks?.length ?? 0), 0);
  return { errored_items: errored, errored_by_kind: byKind, fallbacks };
}

const f = (n: number | null | undefined, digits = 4): string =>
  n === null || n === undefined ? '–' : n.toFixed(digits);
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The paired gate's tests and the per-item rule, one row per step that ran them. */
function gateTestLines(r: RunReport): string[] {
  if (!r.gate_tests.length) return [];
  return [
    '## Gate tests',
    '',
    '| step | verdict | paired test | broken items |',
    '|---|---|---|---|',
    ...r.gate_tests.map(
      (g) =>
        `| ${g.step} | ${g.action} | ${g.test ? cell(describeGateTest(g.test)) : '–'} | ${g.item_regressions ? cell(describeItemRegressions(g.item_regressions)) : '–'} |`,
    ),
    '',
  ];
}

export function renderReport(r: RunReport, outDir: string, simulated: boolean): string {
  const lines: string[] = ['# SkillOpt run report', ''];
  if (simulated)
    lines.push(
      '> **Simulated models.** This run used the offline `sim` backend; the numbers show the mechanics, not a real model.',
      '',
    );
  lines.push(
    `Run folder: \`${outDir}\``,
    '',
    '## Scores',
    '',
    '| skill | selection | test |',
    '|---|---|---|',
  );
  if (r.no_skill)
    lines.push(`| no skill (the target alone) | ${f(r.no_skill.selection)} | ${f(r.no_skill.test)} |`);
  lines.push(`| initial | ${f(r.scores.selection.initial)} | ${f(r.scores.test.initial)} |`);
  lines.push(`| best | ${f(r.scores.selection.best)} | ${f(r.scores.test.best)} |`);
  lines.push(`| final | ${f(r.scores.selection.final)} | ${f(r.scores.test.final)} |`, '');
  if (r.test_check) lines.push(...testCheckLines(r.test_check));
  lines.push(...activationReportLines(r.activation));
  const e = r.edits;
  lines.push(
    '## Edits',
    '',
    `Proposed by analysts ${e.proposed}, after merging ${e.merged}, applied to candidates ${e.applied}, kept by the gate ${e.kept} (acceptance ${e.acceptance_rate === null ? '–' : `${(e.acceptance_rate * 100).toFixed(0)}%`}).`,
    `Steps: ${r.steps.total} (accepted ${r.steps.accepted}, rejected ${r.steps.rejected}, ${r.steps.inconclusive ? `inconclusive ${r.steps.inconclusive}, ` : ''}skipped ${r.steps.skipped}); human decisions ${r.steps.human_decisions}.`,
    ...(r.stopped_early ? ['', `Stopped early: ${r.stopped_early}.`] : []),
    ...(r.speed ? ['', speedLine(r.speed)] : []),
    '',
    ...gateTestLines(r),
    '## Skill length and edit budget per step',
    '',
    '| step | characters | tokens (estimate: chars/4) | edit budget |',
    '|---|---|---|---|',
  );
  r.skill_length.forEach((s, i) =>
    lines.push(`| ${s.step} | ${s.chars} | ${s.tokens} | ${r.edit_budget[i]?.budget ?? '–'} |`),
  );
  lines.push('', '## Persistent failures', '');
  if (!r.persistent_failures.length) lines.push('None: every task passed at least once.');
  else {
    lines.push(
      'These failed under every skill version that was evaluated on them. The skill is unlikely to be the cause: check the expected answer, the task text and the scorer.',
      '',
      '| task | evaluations | last failure |',
      '|---|---|---|',
    );
    for (const p of r.persistent_failures)
      lines.push(
        `| \`${cell(p.id)}\` ${cell(p.task.slice(0, 80))} | ${p.evaluations} | ${cell(p.last_reason.slice(0, 160))} |`,
      );
  }
  const rel = r.reliability;
  const kinds = Object.entries(rel.errored_by_kind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${TARGET_ERROR_LABELS[k as TargetErrorKind] ?? k} ×${n}`)
    .join(', ');
  lines.push(
    '',
    '## Reliability',
    '',
    rel.errored_items
      ? `The target could not answer ${rel.errored_items} evaluation(s) (${kinds}); they were kept out of every score, gate and reflection (\`outcome: errored\` in results.jsonl).`
      : 'The target answered every evaluation.',
    `Structured-reply fallbacks in steps: ${rel.fallbacks}.`,
  );
  lines.push(
    '',
    '## Spend by role',
    '',
    '| role | calls | prompt tokens | from prompt cache | completion tokens | cache hits | dollars |',
    '|---|---|---|---|---|---|---|',
  );
  for (const [role, s] of Object.entries(r.spend_by_role)) {
    lines.push(
      `| ${role} | ${s.calls} | ${s.prompt_tokens} | ${s.cached_tokens ?? 0} | ${s.completion_tokens} | ${s.cache_hits} | ${s.dollars !== null ? `$${s.dollars.toFixed(4)}` : simulated ? 'none (simulated)' : 'unknown price'} |`,
    );
  }
  // A simulated model has no provider cache: "0.0% read, saved $0.0000" would read as a finding.
  if (simulated && !r.prompt_cache?.cache_share)
    lines.push('', 'Prompt cache: none (simulated models have no price and no provider prompt cache).');
  else if (r.prompt_cache) lines.push('', `Prompt cache: ${promptCacheText(r.prompt_cache)}.`);
  lines.push('', '## Where the kept lines came from', '');
  if (!r.kept_lines.length) lines.push('No line of the best skill was added by an accepted step.');
  else {
    lines.push(
      '| line | text | step | source | support | score change | trajectories |',
      '|---|---|---|---|---|---|---|',
    );
    for (const k of r.kept_lines) {
      lines.push(
        `| ${k.file ? `${k.file}:` : ''}${k.line} | ${cell(k.text.slice(0, 90))} | ${k.step} | ${k.source_type ?? '–'} | ${k.support_count ?? '–'} | ${k.score_delta >= 0 ? '+' : ''}${k.score_delta.toFixed(4)} | ${k.trajectories} |`,
      );
    }
  }
  lines.push(
    '',
    `Files: ${[RUN_FILE.history, RUN_FILE.summary, RUN_FILE.provenance, RUN_FILE.bestSkill].map((f) => `\`${f}\``).join(', ')} in ${relative(process.cwd(), outDir) || '.'}.`,
    '',
  );
  return lines.join('\n');
}

/** What the speed options did: calls an early stop saved, speculative calls and how many were thrown away. */
function speedLine(x: SpeedFigures): string {
  const parts: string[] = [];
  if (x.selection_calls_saved !== undefined)
    parts.push(`early stop saved ${x.selection_calls_saved} selection call(s)`);
  if (x.speculative_calls !== undefined)
    parts.push(
      `speculation made ${x.speculative_calls} rollout call(s) ahead, ${x.speculative_calls_discarded ?? 0} of them discarded (extra)`,
    );
  return `Speed: ${parts.join('; ')} (this process).`;
}
