import { SkillOptError } from '../../errors';
import type { Usage } from '../types';
import type { ProcessResult } from './process';
import type { AgentErrorKind, AgentTranscript } from './transcript';
import { statusKind } from './transcript';

export type { AgentErrorKind } from './transcript';

/**
 * An agent run that ended without an answer: the CLI could not start (`not_installed`), the
 * provider refused the credentials (`auth`), the API failed (`api`), the process died or printed
 * no final event (`crash`), or the wall-clock limit passed with no answer (`timeout`).
 *
 * This is infrastructure, not a wrong answer: the training loop must keep such a task out of every
 * score (see AGENT_RUN_ERRORED in the report), and stop the run on `not_installed` and `auth`.
 * `transient` marks the causes another attempt can fix (HTTP 408/409/429/5xx, a connection error,
 * a process killed by a signal it did not ask for); the model client retries exactly those.
 *
 * `reason` is `config` for `not_installed` (nothing can run until the setup changes) and `llm` for
 * the others, so code that only knows SkillOptError still branches correctly.
 */
export class AgentRunError extends SkillOptError {
  readonly transient: boolean;
  declare readonly kind: AgentErrorKind;

  constructor(
    kind: AgentErrorKind,
    problem: string,
    opts: {
      transient?: boolean;
      fix?: string;
      key?: string;
      /** The trace of the failed run (exit code, stderr, events), for the trajectory. */
      trace?: Record<string, unknown>;
      /** Tokens the CLI reported before it failed (read by spentBy in the model client). */
      spent?: Usage;
      cause?: unknown;
    } = {},
  ) {
    super(
      kind === 'not_installed' ? 'config' : 'llm',
      problem,
      { ...(opts.key ? { key: opts.key } : {}), ...(opts.fix ? { fix: opts.fix } : {}) },
      { kind, ...(opts.cause !== undefined ? { cause: opts.cause } : {}) },
    );
    this.transient = opts.transient === true;
    this.trace = opts.trace;
    this.spent = opts.spent;
  }

  readonly trace: Record<string, unknown> | undefined;
  readonly spent: Usage | undefined;

  /** The same error with the text another layer cleaned (secrets redacted), keeping kind and trace. */
  withText(problem: string, fix: string | undefined): AgentRunError {
    return new AgentRunError(this.kind, problem, {
      transient: this.transient,
      ...(fix ? { fix } : {}),
      ...(this.place.key ? { key: this.place.key } : {}),
      ...(this.trace ? { trace: this.trace } : {}),
      ...(this.spent ? { spent: this.spent } : {}),
    });
  }

  static isAgentRunError(err: unknown): err is AgentRunError {
    return err instanceof AgentRunError;
  }
}

/** What to do about each kind, for the message the user sees. */
export function fixFor(kind: AgentErrorKind, agent: string, authHint: string): string {
  switch (kind) {
    case 'not_installed':
      return `install ${agent} (see the README's "Agent targets"), or give the full path of the program in the config`;
    case 'auth':
      return authHint;
    case 'api':
      return 'check model.target and model.target_base_url; a 429 or 5xx is retried, other statuses are not';
    case 'crash':
      return 'run the same command by hand in an empty folder to see why it stops (stderr is in the trajectory)';
    case 'timeout':
      return 'raise env.exec_timeout, or check that the provider answers';
  }
}

function tail(text: string, max = 600): string {
  const t = text.trim();
  return t.length > max ? `…${t.slice(-max)}` : t;
}

/** Decides answered or errored from the process result and the transcript. */
export function classifyRun(
  run: ProcessResult,
  t: AgentTranscript,
  label: string,
): { kind: AgentErrorKind; message: string; transient: boolean } | undefined {
  if (t.error) return { kind: t.error.kind, message: t.error.message, transient: t.error.transient };
  // A run killed at the time limit answered only if the CLI had printed its final event: a message
  // seen mid-run (Codex prints each turn's) is not the answer.
  if (t.answer !== undefined && (t.completed || !run.timedOut)) return undefined;
  const stderr = tail(run.stderr);
  if (run.timedOut) {
    return { kind: 'timeout', message: `${label} gave no answer within the time limit`, transient: false };
  }
  // Not logged in, a rejected key: CLIs say so on stderr before any JSON.
  const fromStderr = stderr ? statusKind(undefined, stderr) : undefined;
  if (fromStderr?.kind === 'auth') return { kind: 'auth', message: stderr, transient: false };
  if (run.exitCode === null) {
    return {
      kind: 'crash',
      message: `${label} was killed by ${run.signal ?? 'a signal'}${stderr ? `: ${stderr}` : ''}`,
      // Killed from outside (out of memory, a stray kill): another run may well succeed.
      transient: true,
    };
  }
  if (run.exitCode !== 0) {
    return {
      kind: fromStderr?.transient ? 'api' : 'crash',
      message: `${label} exited with ${run.exitCode}${stderr ? `: ${stderr}` : ' and printed nothing on stderr'}`,
      transient: fromStderr?.transient === true,
    };
  }
  return {
    kind: 'crash',
    message: `${label} exited without its final event${stderr ? `: ${stderr}` : ''}`,
    transient: false,
  };
}
