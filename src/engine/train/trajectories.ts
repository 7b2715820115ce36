import type { AgentRun, RolloutResult, TurnStep } from '../../protocol/records';

/**
 * Trajectories as the optimizer sees them. Unlike the reference, the skill is NOT embedded in each
 * trajectory (the prompt carries it once) and the target's reply is cut to a bounded excerpt, so
 * analyst prompts grow with the number of trajectories, not with skill length × trajectories.
 */
export function renderTrajectory(r: RolloutResult, index: number, maxChars: number): string {
  const lines = [
    `### Trajectory ${index} (id=${r.id})`,
    `task_type: ${r.task_type ?? 'general'}`,
    `task: ${excerpt(r.task_description, Math.max(200, maxChars))}`,
    `model answer: ${excerpt(r.predicted_answer, 300)}`,
    `expected: ${r.expected.map((e) => excerpt(e, 200)).join(' | ')}`,
    `score: hard ${r.hard}, soft ${r.soft.toFixed(2)}${r.fail_reason ? ` (${excerpt(r.fail_reason, 300)})` : ''}`,
  ];
  if (r.agent_run)
    lines.push(`agent run: ${excerpt(describeAgentRun(r.agent_run), Math.min(1000, maxChars))}`);
  if (r.steps?.length) lines.push(`turns (${r.n_turns}):`, excerpt(renderSteps(r.steps), maxChars * 2));
  if (r.response) lines.push('model reply:', '"""', excerpt(r.response, maxChars), '"""');
  return lines.join('\n');
}

/** A multi-turn chat target's turns as the reference's analysts read them: replies, actions, observations. */
function renderSteps(steps: readonly TurnStep[]): string {
  return steps
    .map((s) =>
      s.cmd !== undefined
        ? `[turn ${s.turn} action] ${s.cmd}\n[obs] ${s.obs ?? ''}`
        : `[turn ${s.turn} reply] ${s.reply ?? ''}`,
    )
    .join('\n');
}

export function renderTrajectories(results: readonly RolloutResult[], maxChars: number): string {
  return results.map((r, i) => renderTrajectory(r, i + 1, maxChars)).join('\n\n---\n\n');
}

/** Keep head and tail of long text: answers usually sit at the end of a reply. */
export function excerpt(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.4);
  const tail = max - head;
  return `${text.slice(0, head)}\n[… ${text.length - max} characters omitted …]\n${text.slice(-tail)}`;
}

/** "exit 0 after 12.3 s" / "timed out after 600.0 s (SIGKILL)", plus stderr when there is any. */
export function describeAgentRun(run: AgentRun): string {
  const how = run.timed_out
    ? 'timed out'
    : run.exit_code !== null
      ? `exit ${run.exit_code}`
      : `killed by ${run.signal ?? 'a signal'}`;
  const did = [
    run.skill_loaded === undefined
      ? ''
      : run.skill_loaded
        ? 'the skill was loaded'
        : 'the skill was NOT loaded',
    run.turns !== undefined ? `${run.turns} turn(s)` : '',
    run.tool_calls?.length
      ? `tools: ${run.tool_calls
          .slice(0, 8)
          .map((c) => (c.detail ? `${c.name}(${c.detail})` : c.name))
          .join(', ')}${run.tool_calls.length > 8 ? ', …' : ''}`
      : '',
  ].filter(Boolean);
  const head = `${how} after ${(run.duration_ms / 1000).toFixed(1)} s${run.timed_out && run.signal ? ` (${run.signal})` : ''}${did.length ? `; ${did.join('; ')}` : ''}`;
  return run.stderr.trim() ? `${head}; stderr:\n${run.stderr.trim()}` : head;
}
