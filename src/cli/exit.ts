/** Documented exit codes (README, `skillopt --help`). */
export const ExitCode = {
  Ok: 0,
  Failed: 1,
  Usage: 2,
  Budget: 3,
  Interrupted: 130,
} as const;

/** A command-line mistake: printed on one line with its fix, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}
