/**
 * How an agent run ends: answered (a BackendReply with the answer, usage and a trace of what the
 * agent did) or errored (an AgentRunError with its kind), read from the finished process and its
 * transcript, or from a program that could not be started.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Logger } from '../../log';
import type { BackendReply, TaskContext, Usage } from '../types';
import type { Delivery } from './delivery';
import { AgentRunError, classifyRun, fixFor } from './errors';
import type { TaskDirs } from './isolation';
import type { AgentPreset } from './presets';
import type { ProcessResult, SpawnError } from './process';
import {
  parseCodexRollout,
  parseCopilotOtel,
  parseTranscript,
  sumUsage,
  type AgentUsage,
} from './transcript';

/** A finished agent run and what it is read against: who ran, for which task, where. */
export interface FinishedRun {
  run: ProcessResult;
  task: TaskContext;
  /** The prompt the agent was given. */
  prompt: string;
  dirs: TaskDirs;
  skillFile: string;
  /** Credential files the preset copied into the task's home. */
  seeded: string[];
  /** The preset in use; undefined for a custom command. */
  preset: AgentPreset | undefined;
  program: string;
  /** A short name for messages (CommandBackend.label). */
  label: string;
  /** The model named in accounting when the transcript names none. */
  model: string;
  delivery: Delivery;
  keepWorkspaces?: boolean;
  logger?: Logger;
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The tokens a run the person stopped had spent, as far as its transcript (or Copilot's telemetry,
 * Codex's session file) says; undefined when it reported none.
 */
export function stoppedRunUsage(
  finished: Pick<FinishedRun, 'run' | 'task' | 'dirs' | 'preset'>,
): AgentUsage | undefined {
  return agentUsage(
    finished,
    parseTranscript(finished.preset?.format ?? 'text', finished.run.stdout, finished.task.skillName),
  );
}

/** An agent's token count as the model client records it, its provider prompt cache included. */
export function agentSpent(u: AgentUsage): Usage {
  return {
    promptTokens: u.inputTokens,
    completionTokens: u.outputTokens,
    ...(u.cacheReadTokens ? { cachedTokens: u.cacheReadTokens } : {}),
    ...(u.cacheWriteTokens ? { cacheWriteTokens: u.cacheWriteTokens } : {}),
  };
}

/** What a run spent: the transcript's count, or the files the CLI keeps it in when it was cut short. */
function agentUsage(
  { dirs, preset }: Pick<FinishedRun, 'dirs' | 'preset'>,
  transcript: ReturnType<typeof parseTranscript>,
): AgentUsage | undefined {
  const format = preset?.format ?? 'text';
  if (format === 'copilot') {
    const otel = join(dirs.tmp, 'copilot-otel.jsonl');
    if (existsSync(otel)) return parseCopilotOtel(readFileSync(otel, 'utf8')) ?? transcript.usage;
  }
  // Codex reports usage only when its turn completes; a run cut short has it in its session file.
  if (format === 'codex' && !transcript.usage) return codexSessionUsage(dirs.home);
  return transcript.usage;
}

/** The reply of a finished run; throws its AgentRunError when classifyRun finds it errored. */
export function readFinishedRun(finished: FinishedRun): BackendReply {
  const { run, task, prompt, dirs, skillFile, seeded, preset, program, label, model, delivery } = finished;
  const { keepWorkspaces, logger } = finished;
  const format = preset?.format ?? 'text';
  const transcript = parseTranscript(format, run.stdout, task.skillName);
  if (format === 'text' && (run.timedOut || run.exitCode !== 0)) delete transcript.answer;
  const usage = agentUsage(finished, transcript);
  if (usage) transcript.usage = usage;
  const usageEstimated = transcript.usage === undefined;
  const trace: Record<string, unknown> = {
    agent: preset?.name ?? 'custom',
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    ...(run.gaveUp ? { gaveUp: true } : {}),
    stderr: run.stderr,
    durationMs: run.durationMs,
    truncated: run.truncated,
    stdoutBytes: run.stdoutBytes,
    stderrBytes: run.stderrBytes,
    delivery,
    skillPath: relative(dirs.work, skillFile).replace(/\\/g, '/'),
    skillLoaded: transcript.skillLoaded,
    ...(transcript.skillsAvailable ? { skillsAvailable: transcript.skillsAvailable } : {}),
    toolCalls: transcript.toolCalls,
    turns: transcript.turns,
    ...(transcript.usage ? { tokens: transcript.usage } : {}),
    ...(transcript.costUsd !== undefined
      ? { costUsd: transcript.costUsd, costAtListPrices: transcript.costAtListPrices === true }
      : {}),
    ...(transcript.model ? { agentModel: transcript.model } : {}),
    ...(seeded.length ? { seededFrom: seeded } : {}),
    // Text outputs report no token counts: these are length-based estimates.
    usageEstimated,
    ...(keepWorkspaces ? { workspace: dirs.work } : {}),
  };
  const verdict = classifyRun(run, transcript, label);
  if (verdict) {
    logger?.log('warn', 'command', `task ${task.taskId}: errored (${verdict.kind}): ${verdict.message}`);
    throw new AgentRunError(verdict.kind, verdict.message, {
      transient: verdict.transient,
      fix: fixFor(
        verdict.kind,
        preset?.label ?? program,
        preset?.authHint ?? 'check the credentials the command needs',
      ),
      key: 'model.target_backend',
      trace: { ...trace, outcome: 'errored', errorKind: verdict.kind, error: verdict.message },
      // What the CLI spent before it failed is paid for all the same: the model client records it.
      ...(transcript.usage ? { spent: agentSpent(transcript.usage) } : {}),
    });
  }
  const answer = transcript.answer ?? '';
  return {
    text: answer,
    usage: transcript.usage
      ? {
          ...agentSpent(transcript.usage),
          // The CLI's own price, when it knows the list price of every model it used.
          ...(transcript.costUsd !== undefined && transcript.costAtListPrices
            ? { costUsd: transcript.costUsd }
            : {}),
        }
      : {
          promptTokens: estimateTokens(task.skill) + estimateTokens(prompt),
          completionTokens: estimateTokens(answer),
        },
    model: transcript.model ?? model,
    trace: { ...trace, outcome: 'answered' },
  };
}

/** The running total of the session file(s) Codex wrote under the task's home, if any. */
function codexSessionUsage(home: string): AgentUsage | undefined {
  const sessions = join(home, '.codex', 'sessions');
  if (!existsSync(sessions)) return undefined;
  const found: AgentUsage[] = [];
  for (const file of readdirSync(sessions, { recursive: true, encoding: 'utf8' })) {
    if (!/rollout-[^/\\]*\.jsonl$/.test(file)) continue;
    const u = parseCodexRollout(readFileSync(join(sessions, file), 'utf8'));
    if (u) found.push(u);
  }
  return found.length ? sumUsage(found) : undefined;
}

/** The not_installed error for a program that could not be started. */
export function notInstalledError(
  err: SpawnError,
  label: string,
  preset: AgentPreset | undefined,
): AgentRunError {
  const missing = err.code === 'ENOENT';
  const problem = missing ? `${label} was not found on PATH` : `${label} could not be started (${err.code})`;
  return new AgentRunError('not_installed', problem, {
    fix: missing
      ? fixFor(
          'not_installed',
          preset ? `${preset.label} (npm install -g ${preset.npmPackage})` : 'the agent CLI',
          '',
        )
      : 'check that the program is executable by you',
    key: preset ? `model.${preset.pathKey}` : 'model.target_command',
    cause: err,
  });
}
