/**
 * The smoke run behind `skillopt validate --smoke`: ONE train task through the configured target
 * with the initial skill, scored by the configured scorer, in a throwaway folder. It proves the
 * target really answers (key, base URL, model name, agent program, skill delivery) before a run
 * pays the optimizer for anything; the optimizer is never called.
 */
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TARGET_ERROR_LABELS, type TargetErrorKind } from '../protocol/vocabulary';
import { SkillOptError } from './errors';
import { AgentRunError } from './llm/agents/errors';
import { errorKind } from './llm/retry';
import type { ChatResult, ModelClient } from './llm/types';
import { prepareRun, type PrepareOptions, type PreparedRun } from './run';
import { isErrored, rollout } from './train/rollout';
import type { RolloutResult } from '../protocol/records';

/**
 * A smoke run must reach the real target (a cached reply proves nothing and a new one should not
 * be stored), and its agent workspace is throwaway whatever the config says about keeping them.
 */
export const SMOKE_OVERRIDES: readonly string[] = [
  'cache.enabled=false',
  'model.target_keep_workspaces=false',
];

export interface SmokeError {
  kind: TargetErrorKind;
  /** TARGET_ERROR_LABELS[kind]: what the kind means, in a few words. */
  label: string;
  message: string;
  fix?: string;
}

export interface SmokeCost {
  target_calls: number;
  optimizer_calls: number;
  failed_calls: number;
  retries: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** null when the model's price is unknown (never a made-up 0). */
  dollars: number | null;
  seconds: number;
}

export interface SmokeResult {
  target: string;
  simulated: boolean;
  task_id: string;
  outcome: 'answered' | 'errored';
  expected: string[];
  /** Answered only. */
  predicted?: string;
  hard?: number;
  soft?: number;
  fail_reason?: string;
  /** Errored only. */
  error?: SmokeError;
  /**
   * Agent targets only (absent for chat models): whether the agent opened the skill, from its
   * run's trace; null when the agent's output cannot tell (a custom `command` prints plain text).
   */
  skill_loaded?: boolean | null;
  /** Agent targets only: the run as its trace records it. */
  agent?: { name: string; turns?: number; tool_calls?: number; duration_ms?: number; cost_usd?: number };
  cost: SmokeCost;
}

/** prepareRun for a smoke run: validates everything, writes nothing of a run, forces a real call. */
export function prepareSmoke(opts: PrepareOptions): PreparedRun {
  return prepareRun({ ...opts, overrides: [...(opts.overrides ?? []), ...SMOKE_OVERRIDES], dryRun: true });
}

/** The target client, remembering the last reply's trace and the error it rejected with. */
function watched(client: ModelClient): {
  client: ModelClient;
  seen: { reply?: ChatResult; error?: unknown };
} {
  const seen: { reply?: ChatResult; error?: unknown } = {};
  return {
    seen,
    client: {
      role: client.role,
      backend: client.backend,
      model: client.model,
      async chat(req, signal) {
        try {
          seen.reply = await client.chat(req, signal);
          return seen.reply;
        } catch (err) {
          seen.error = err;
          throw err;
        }
      },
    },
  };
}

function agentPart(trace: Record<string, unknown> | undefined): Pick<SmokeResult, 'skill_loaded' | 'agent'> {
  if (!trace || typeof trace.agent !== 'string') return {};
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const turns = num(trace.turns);
  const duration = num(trace.durationMs);
  const cost = num(trace.costUsd);
  return {
    skill_loaded: trace.agent === 'custom' ? null : trace.skillLoaded === true,
    agent: {
      name: trace.agent,
      ...(turns !== undefined ? { turns } : {}),
      ...(Array.isArray(trace.toolCalls) ? { tool_calls: trace.toolCalls.length } : {}),
      ...(duration !== undefined ? { duration_ms: duration } : {}),
      ...(cost !== undefined ? { cost_usd: cost } : {}),
    },
  };
}

function describeFailure(err: unknown, fallback: { kind?: string; message?: string }): SmokeError {
  const kind =
    err !== undefined ? errorKind(err) : ((fallback.kind as TargetErrorKind | undefined) ?? 'other');
  const message = SkillOptError.is(err)
    ? err.problem
    : err instanceof Error
      ? err.message
      : (fallback.message ?? 'the target did not answer');
  const fix = SkillOptError.is(err) ? err.place.fix : undefined;
  return { kind, label: TARGET_ERROR_LABELS[kind] ?? kind, message, ...(fix ? { fix } : {}) };
}

/**
 * Run the first train task once through `prepared`'s target with its initial skill. Resolves with
 * the outcome whether the target answered or errored; rejects only when cancelled or when the
 * setup itself is broken (a scorer that cannot run, say).
 */
export async function smokePrepared(
  prepared: PreparedRun,
  opts: { signal: AbortSignal },
): Promise<SmokeResult> {
  const item = prepared.splits.train[0];
  if (!item) {
    throw new SkillOptError('tasks', 'the train split is empty: there is no task to run', {
      key: 'env.split_ratio',
      fix: 'give the train split at least one task',
    });
  }
  setMaxListeners(0, opts.signal);
  const { models, settings: s } = prepared;
  const before = models.accounting.snapshot();
  const { client, seen } = watched(models.target);
  // rollout() writes its results and conversation here; nothing reaches a run folder.
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-smoke-'));
  let results: RolloutResult[];
  try {
    results = await rollout({
      items: [item],
      skill: prepared.initialSkill,
      dir,
      client,
      scorer: prepared.scorer,
      stage: 'rollout',
      answerTag: s.answerTag,
      ...(s.targetSystemTemplate !== undefined ? { systemTemplate: s.targetSystemTemplate } : {}),
      maxTokens: s.targetMaxTokens,
      ...(s.targetTemperature !== undefined ? { temperature: s.targetTemperature } : {}),
      ...(prepared.turns ? { turns: prepared.turns } : {}),
      signal: opts.signal,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const result = results[0];
  const spent = models.accounting.delta(before);
  const calls = (role: 'target' | 'optimizer'): number =>
    spent.entries.filter((e) => e.role === role).reduce((n, e) => n + e.calls, 0);
  const cost: SmokeCost = {
    target_calls: calls('target'),
    optimizer_calls: calls('optimizer'),
    failed_calls: spent.totals.failures,
    retries: spent.totals.retries,
    prompt_tokens: spent.totals.promptTokens,
    completion_tokens: spent.totals.completionTokens,
    dollars: spent.totals.dollars,
    seconds: Math.round(spent.totals.seconds * 1000) / 1000,
  };
  const common = {
    target: models.describe.target,
    simulated: models.target.backend === 'sim',
    task_id: item.id,
    expected: item.answers,
  };
  if (isErrored(result)) {
    const trace = seen.error instanceof AgentRunError ? seen.error.trace : undefined;
    return {
      ...common,
      outcome: 'errored',
      error: describeFailure(seen.error, {
        ...(result.error_kind ? { kind: result.error_kind } : {}),
        ...(result.error ? { message: result.error } : {}),
      }),
      ...agentPart(trace),
      cost,
    };
  }
  return {
    ...common,
    outcome: 'answered',
    predicted: result.predicted_answer,
    hard: result.hard,
    soft: result.soft,
    ...(result.fail_reason ? { fail_reason: result.fail_reason } : {}),
    ...agentPart(seen.reply?.trace),
    cost,
  };
}
