import type { AccountingSnapshot } from '../llm/accounting';
import { promptCacheSummary, type PromptCacheSummary } from '../llm/spendText';
import type { ActivationSummary } from '../activation/summary';
import { forEachResultRow, runSkillUse, type SkillUse } from './agentSkillUse';
import { packageLineOrigins, type ProvenanceRecord } from './provenance';
import { isErrored } from './rollout';
import type {
  GatePower,
  GateTestRecord,
  ItemRegressions,
  NoSkillScores,
  RolloutRow,
  StepRecord,
  TestCheck,
} from '../../protocol/records';
import { isAccepted, isInconclusive, isRejected, isSkipped } from '../../protocol/vocabulary';

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
  gate_tests: GateTestRow[];
  /** Why the run ended before its last epoch (gate patience), when it did. */
  stopped_early?: string;
  /** The test split's intervals and whether the selection gain shows on it. */
  test_check?: TestCheck;
  /** evaluation.no_skill_baseline: the target's hard score with no skill at all. */
  no_skill?: NoSkillScores;
  /** The run scored its end without the target alone (evaluation.no_skill_baseline: false). */
  no_skill_off?: true;
  /** What the gate could tell from noise on the selection split (the power check). */
  gate_power?: GatePower;
  /** evaluation.use_gate: false: every candidate was accepted. */
  gate_off?: true;
  /** evaluation.early_stop / speed.speculate, when on: calls they saved or added (this process). */
  speed?: SpeedFigures;
  skill_length: Array<{ step: number; chars: number; tokens: number }>;
  edit_budget: Array<{ step: number; budget: number | null }>;
  persistent_failures: PersistentFailure[];
  /**
   * What went wrong outside the skill: target items that could not be answered, structured replies
   * asked again (by stage, every process of the run) and reply fallbacks.
   */
  reliability: {
    errored_items: number;
    errored_by_kind: Record<string, number>;
    fallbacks: number;
    /** Absent in reports written before re-asks were counted. */
    reasks?: Record<string, number>;
    /** An agent target: how many of its runs with the skill opened it (agentSkillUse.ts). */
    agent_skill_use?: SkillUse;
  };
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
      /** Extra attempts beyond the first, and calls that failed after every attempt (absent in older reports). */
      retries?: number;
      failures?: number;
      /** Requests cut off before their reply, tokens unknown (absent in older reports). */
      cut_off?: number;
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
function allResults(outDir: string): Map<string, RolloutRow[]> {
  const byId = new Map<string, RolloutRow[]>();
  forEachResultRow(outDir, (r) => byId.set(r.id, [...(byId.get(r.id) ?? []), r]));
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

/** A candidate whose gate ran the paired test or the per-item rule: a step's, or an epoch end's. */
export interface GateTestRow {
  step: number;
  action: string;
  /** An epoch end's candidate (absent for a step's), with its epoch. */
  origin?: 'slow_update' | 'meta_reflect';
  epoch?: number;
  test?: GateTestRecord;
  item_regressions?: ItemRegressions;
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
  noSkill?: NoSkillScores;
  noSkillOff?: boolean;
  gatePower?: GatePower;
  gateOff?: boolean;
  /** The epoch ends' gate findings (their result files). */
  epochEndGates?: readonly GateTestRow[];
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
      retries: 0,
      failures: 0,
      cut_off: 0,
    });
    r.calls += e.calls;
    r.cut_off = (r.cut_off ?? 0) + e.cutOff;
    r.retries = (r.retries ?? 0) + e.retries;
    r.failures = (r.failures ?? 0) + e.failures;
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
    gate_tests: [
      ...h
        .filter((r) => r.gate_test || r.item_regressions)
        .map((r): GateTestRow => ({
          step: r.step,
          action: r.action,
          ...(r.gate_test ? { test: r.gate_test } : {}),
          ...(r.item_regressions ? { item_regressions: r.item_regressions } : {}),
        })),
      ...(args.epochEndGates ?? []),
    ].sort((a, b) => a.step - b.step || Number(a.origin !== undefined) - Number(b.origin !== undefined)),
    ...(args.stoppedEarly ? { stopped_early: args.stoppedEarly } : {}),
    ...(args.testCheck ? { test_check: args.testCheck } : {}),
    ...(args.noSkill ? { no_skill: args.noSkill } : {}),
    ...(args.noSkillOff ? { no_skill_off: true as const } : {}),
    ...(args.gatePower ? { gate_power: args.gatePower } : {}),
    ...(args.gateOff ? { gate_off: true as const } : {}),
    ...(args.speed ? { speed: args.speed } : {}),
    skill_length: h.map((r) => ({
      step: r.step,
      chars: r.skill_len,
      tokens: r.skill_tokens ?? Math.ceil(r.skill_len / 4),
    })),
    edit_budget: h.map((r) => ({ step: r.step, budget: r.edit_budget ?? null })),
    persistent_failures: persistentFailures(args.outDir),
    reliability: { ...reliability(args.outDir, h), reasks: { ...(args.accounting.reasks ?? {}) } },
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
  const skillUse = runSkillUse(outDir);
  return {
    errored_items: errored,
    errored_by_kind: byKind,
    fallbacks,
    ...(skillUse ? { agent_skill_use: skillUse } : {}),
  };
}
