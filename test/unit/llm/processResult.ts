import type { ProcessResult } from '../../../src/engine/llm/agents/process';

/** A finished agent process as the runner reports it: exit 0, no output, unless `over` says else. */
export function processResult(over: Partial<ProcessResult> = {}): ProcessResult {
  return {
    stdout: '',
    stderr: '',
    exitCode: 0,
    signal: null,
    timedOut: false,
    durationMs: 10,
    truncated: false,
    stdoutBytes: 0,
    stderrBytes: 0,
    cancelled: false,
    ...over,
  };
}
