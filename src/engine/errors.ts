/**
 * One error type for everything the engine refuses to do, with a typed reason so callers branch on
 * `reason`, never on message text. Messages name where the problem is and how to fix it, because
 * they are shown to people verbatim (CLI, notifications).
 */
import type { TargetErrorKind } from '../protocol/vocabulary';

export type ErrorReason =
  | 'config'
  | 'tasks'
  | 'skill'
  | 'scorer'
  | 'llm'
  | 'llm-reply'
  /** The target could not answer most items (auth, endpoint, crash…): not the skill's fault. */
  | 'target'
  | 'budget'
  | 'cancelled'
  | 'untrusted'
  | 'io'
  | 'internal';

export interface ErrorPlace {
  /** File the problem is in, as the user wrote it. */
  file?: string;
  /** 1-based line, when known. */
  line?: number;
  /** Dotted config key or JSON path, when known. */
  key?: string;
  /** What to change. */
  fix?: string;
}

export class SkillOptError extends Error {
  override readonly name = 'SkillOptError';
  /** For model-call failures: why the call could not be answered. */
  readonly kind?: TargetErrorKind;

  constructor(
    readonly reason: ErrorReason,
    readonly problem: string,
    readonly place: ErrorPlace = {},
    options?: { cause?: unknown; kind?: TargetErrorKind },
  ) {
    super(formatMessage(problem, place), options?.cause === undefined ? undefined : { cause: options.cause });
    if (options?.kind) this.kind = options.kind;
  }

  static is(err: unknown, reason?: ErrorReason): err is SkillOptError {
    return err instanceof SkillOptError && (reason === undefined || err.reason === reason);
  }
}

function formatMessage(problem: string, place: ErrorPlace): string {
  let where = place.file ?? '';
  if (place.file && place.line !== undefined) where += `:${place.line}`;
  if (place.key) where = where ? `${where} (${place.key})` : place.key;
  const head = where ? `${where}: ${problem}` : problem;
  // A problem that ends in its own full stop gets no second one.
  return place.fix ? `${head.replace(/\.$/, '')}. Fix: ${place.fix}` : head;
}

/** Thrown when an AbortSignal fires; callers treat it as a clean stop, not a failure. */
export function cancelledError(what = 'Operation'): SkillOptError {
  return new SkillOptError('cancelled', `${what} was cancelled`);
}

/**
 * An error's text split at its own " Fix: " (formatMessage's), the full stop trimmed from each
 * part. With `inline` the fix stays in the problem, in brackets: it is one cause among several.
 */
export function splitFix(text: string, inline = false): { problem: string; fix?: string } {
  const cut = text.indexOf(' Fix: ');
  const trim = (t: string): string => t.replace(/[.\s]+$/, '');
  if (cut < 0) return { problem: trim(text) };
  const [problem, fix] = [trim(text.slice(0, cut)), trim(text.slice(cut + ' Fix: '.length))];
  return inline ? { problem: `${problem} (fix: ${fix})` } : { problem, fix };
}

/** The text of any thrown value: an Error's message, else the value as a string. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
