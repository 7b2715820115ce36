import { main } from '../../src/cli/main';

export interface CliOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** The `skillopt` CLI run in the test's own process (its entry point, `main`), output captured. */
export async function cliInProcess(argv: string[]): Promise<CliOutput> {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = process.stdout.write.bind(process.stdout);
  const stderr = process.stderr.write.bind(process.stderr);
  const capture =
    (into: string[]) =>
    (chunk: string | Uint8Array): boolean => {
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    };
  process.stdout.write = capture(out) as typeof process.stdout.write;
  process.stderr.write = capture(err) as typeof process.stderr.write;
  try {
    const code = await main(argv);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}
