import type { SmokeResult } from '../../engine/smoke';

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function quoted(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(' or ');
}

/** The smoke run as lines for people: outcome, answer and score, the skill for agents, the cost. */
export function renderSmoke(r: SmokeResult): string[] {
  const lines = [`Smoke run: train task ${r.task_id} through the target with the initial skill`];
  lines.push(`  target    ${r.target}`);
  if (r.outcome === 'answered') {
    lines.push(
      `  answered  predicted ${JSON.stringify(r.predicted ?? '')}, expected ${quoted(r.expected)}`,
      `  score     hard ${r.hard ?? 0}, soft ${(r.soft ?? 0).toFixed(2)}${r.fail_reason ? ` (${r.fail_reason})` : ''}`,
    );
  } else if (r.error) {
    lines.push(
      `  errored   ${r.error.label} [${r.error.kind}]: ${r.error.message}`,
      ...(r.error.fix ? [`  fix       ${r.error.fix}`] : []),
    );
  }
  if (r.skill_loaded !== undefined) {
    lines.push(
      `  skill     ${
        r.skill_loaded === null
          ? 'unknown (a custom command prints no trace of what it read)'
          : r.skill_loaded
            ? 'loaded by the agent'
            : r.outcome === 'errored'
              ? 'not loaded before the run ended'
              : 'NOT loaded by the agent (its description did not make the agent open it)'
      }`,
    );
  }
  if (r.agent) {
    const a = r.agent;
    const parts = [
      ...(a.turns !== undefined ? [plural(a.turns, 'turn')] : []),
      ...(a.tool_calls !== undefined ? [plural(a.tool_calls, 'tool call')] : []),
      ...(a.duration_ms !== undefined ? [`${(a.duration_ms / 1000).toFixed(1)} s`] : []),
      ...(a.cost_usd !== undefined ? [`$${a.cost_usd.toFixed(4)} by its own count`] : []),
    ];
    lines.push(`  agent     ${a.name}${parts.length ? `: ${parts.join(', ')}` : ''}`);
  }
  const c = r.cost;
  lines.push(
    `  cost      ${plural(c.target_calls, 'target call')}${c.failed_calls ? ` (+${c.failed_calls} failed)` : ''}${c.retries ? `, ${plural(c.retries, 'retry', 'retries')}` : ''}, ${plural(c.optimizer_calls, 'optimizer call')}, ${c.prompt_tokens} prompt + ${c.completion_tokens} completion tokens, ${c.dollars === null ? 'price unknown' : `$${c.dollars.toFixed(4)}`}`,
  );
  lines.push(
    r.outcome === 'answered'
      ? `The target answered${r.hard !== undefined && r.hard < 1 ? ' (a wrong answer is for training to fix, not a setup problem)' : ''}. No run folder was written.`
      : 'The target did not answer: fix the cause above and run validate --smoke again. No run folder was written.',
  );
  return lines;
}

/** One line for stderr when the target errored: where (the task and target), what, and the fix. */
export function smokeErrorLine(r: SmokeResult): string {
  const { message, fix } = smokeError(r);
  return `${message}${fix ? `. Fix: ${fix}` : ''}`;
}

/** The smoke failure as the `{"error": {reason, message, fix}}` of `--json`. */
export function smokeError(r: SmokeResult): { reason: 'target'; message: string; fix?: string } {
  const e = r.error;
  const what = e ? `${e.label} [${e.kind}]: ${e.message}` : 'no answer';
  const message = `smoke task ${r.task_id}: the target ${r.target} did not answer (${what})`;
  return { reason: 'target', message, ...(e?.fix ? { fix: e.fix } : {}) };
}
