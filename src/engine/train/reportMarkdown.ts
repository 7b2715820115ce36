/** report.md: the run report (report.ts builds it) as Markdown for a person. */
import { relative } from 'node:path';
import { RUN_FILE } from '../store/layout';
import { promptCacheText } from '../llm/spendText';
import { activationReportLines } from '../activation/summary';
import {
  describeGatePower,
  GATE_OFF_TEXT,
  describeGateTest,
  describeItemRegressions,
  NO_SKILL_OFF,
  noSkillVerdict,
  testCheckLines,
} from '../../protocol/gateText';
import { TARGET_ERROR_LABELS, type TargetErrorKind } from '../../protocol/vocabulary';
import type { RunReport, SpeedFigures } from './report';
import { candidateName } from '../../protocol/webview';
import { describeSkillUse, skillUseAdvice, type SkillUse } from './agentSkillUse';

const f = (n: number | null | undefined, digits = 4): string =>
  n === null || n === undefined ? '–' : n.toFixed(digits);
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The paired gate's tests and the per-item rule, one row per step that ran them. */
function gateTestLines(r: RunReport): string[] {
  if (!r.gate_tests.length) return [];
  return [
    '## Gate tests',
    '',
    '| candidate | verdict | paired test | broken items |',
    '|---|---|---|---|',
    ...r.gate_tests.map(
      (g) =>
        `| ${g.origin ? candidateName(g.origin, g.step, g.epoch ?? 0) : g.step} | ${g.action} | ${g.test ? cell(describeGateTest(g.test)) : '–'} | ${g.item_regressions ? cell(describeItemRegressions(g.item_regressions)) : '–'} |`,
    ),
    '',
  ];
}

export function renderReport(
  r: RunReport,
  outDir: string,
  simulated: boolean,
  /** A run that stopped or failed before its end: why, and how to go on. */
  stopped?: { reason: string; resume: string },
): string {
  const lines: string[] = [stopped ? '# SkillOpt run report (stopped run)' : '# SkillOpt run report', ''];
  if (stopped)
    lines.push(
      `> **Stopped before its end:** ${stopped.reason.replace(/\n/g, ' ')}`,
      '>',
      `> What it had reached when it stopped; the test split was not scored. Resume: \`${stopped.resume}\` (a finished run replaces this report).`,
      '',
    );
  if (simulated)
    lines.push(
      '> **Simulated models.** This run used the offline `sim` backend; the numbers show the mechanics, not a real model.',
      '',
    );
  lines.push(
    `Run folder: \`${outDir}\``,
    '',
    '## Scores',
    '',
    '| skill | selection | test |',
    '|---|---|---|',
  );
  if (r.no_skill)
    lines.push(`| no skill (the target alone) | ${f(r.no_skill.selection)} | ${f(r.no_skill.test)} |`);
  lines.push(`| initial | ${f(r.scores.selection.initial)} | ${f(r.scores.test.initial)} |`);
  lines.push(`| best | ${f(r.scores.selection.best)} | ${f(r.scores.test.best)} |`);
  lines.push(`| final | ${f(r.scores.selection.final)} | ${f(r.scores.test.final)} |`, '');
  if (r.no_skill)
    lines.push(
      noSkillVerdict(r.no_skill, { selection: r.scores.selection.best, test: r.scores.test.best }),
      '',
    );
  else if (r.no_skill_off) lines.push(NO_SKILL_OFF, '');
  if (r.test_check) lines.push(...testCheckLines(r.test_check));
  lines.push(...activationReportLines(r.activation));
  const e = r.edits;
  lines.push(
    '## Edits',
    '',
    `Proposed by analysts ${e.proposed}, after merging ${e.merged}, applied to candidates ${e.applied}, kept by the gate ${e.kept} (acceptance ${e.acceptance_rate === null ? '–' : `${(e.acceptance_rate * 100).toFixed(0)}%`}).`,
    `Steps: ${r.steps.total} (accepted ${r.steps.accepted}, rejected ${r.steps.rejected}, ${r.steps.inconclusive ? `inconclusive ${r.steps.inconclusive}, ` : ''}skipped ${r.steps.skipped}); human decisions ${r.steps.human_decisions}.`,
    ...(r.gate_power ? ['', `Gate: ${describeGatePower(r.gate_power)}.`] : []),
    ...(r.gate_off ? ['', `Gate: ${GATE_OFF_TEXT}.`] : []),
    ...(r.stopped_early ? ['', `Stopped early: ${r.stopped_early}.`] : []),
    ...(r.speed ? ['', speedLine(r.speed)] : []),
    '',
    ...gateTestLines(r),
    '## Skill length and edit budget per step',
    '',
    '| step | characters | tokens (estimate: chars/4) | edit budget |',
    '|---|---|---|---|',
  );
  r.skill_length.forEach((s, i) =>
    lines.push(`| ${s.step} | ${s.chars} | ${s.tokens} | ${r.edit_budget[i]?.budget ?? '–'} |`),
  );
  lines.push('', '## Persistent failures', '');
  if (!r.persistent_failures.length) lines.push('None: every task passed at least once.');
  else {
    lines.push(
      'These failed under every skill version that was evaluated on them. The skill is unlikely to be the cause: check the expected answer, the task text and the scorer.',
      '',
      '| task | evaluations | last failure |',
      '|---|---|---|',
    );
    for (const p of r.persistent_failures)
      lines.push(
        `| \`${cell(p.id)}\` ${cell(p.task.slice(0, 80))} | ${p.evaluations} | ${cell(p.last_reason.slice(0, 160))} |`,
      );
  }
  const rel = r.reliability;
  const kinds = Object.entries(rel.errored_by_kind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${TARGET_ERROR_LABELS[k as TargetErrorKind] ?? k} ×${n}`)
    .join(', ');
  lines.push(
    '',
    '## Reliability',
    '',
    rel.errored_items
      ? `The target could not answer ${rel.errored_items} evaluation(s) (${kinds}); they were kept out of every score, gate and reflection (\`outcome: errored\` in results.jsonl).`
      : 'The target answered every evaluation.',
    ...skillUseLines(rel.agent_skill_use),
    reaskLine(rel.reasks),
    `Structured-reply fallbacks in steps: ${rel.fallbacks}.`,
    retryLine(r.spend_by_role),
  );
  lines.push(
    '',
    '## Spend by role',
    '',
    '| role | calls | prompt tokens | from prompt cache | completion tokens | cache hits | dollars |',
    '|---|---|---|---|---|---|---|',
  );
  for (const [role, s] of Object.entries(r.spend_by_role)) {
    lines.push(
      `| ${role} | ${s.calls} | ${s.prompt_tokens} | ${s.cached_tokens ?? 0} | ${s.completion_tokens} | ${s.cache_hits} | ${s.dollars !== null && !(simulated && s.dollars === 0) ? `$${s.dollars.toFixed(4)}` : simulated ? 'none (simulated)' : 'unknown price'} |`,
    );
  }
  // A simulated model has no provider cache: "0.0% read, saved $0.0000" would read as a finding.
  if (simulated && !r.prompt_cache?.cache_share)
    lines.push('', 'Prompt cache: none (simulated models have no price and no provider prompt cache).');
  else if (r.prompt_cache) lines.push('', `Prompt cache: ${promptCacheText(r.prompt_cache)}.`);
  lines.push('', '## Where the kept lines came from', '');
  if (!r.kept_lines.length) lines.push('No line of the best skill was added by an accepted step.');
  else {
    lines.push(
      '| line | text | step | source | support | score change | trajectories |',
      '|---|---|---|---|---|---|---|',
    );
    for (const k of r.kept_lines) {
      lines.push(
        `| ${k.file ? `${k.file}:` : ''}${k.line} | ${cell(k.text.slice(0, 90))} | ${k.step} | ${k.source_type ?? '–'} | ${k.support_count ?? '–'} | ${k.score_delta >= 0 ? '+' : ''}${k.score_delta.toFixed(4)} | ${k.trajectories} |`,
      );
    }
  }
  lines.push(
    '',
    `Files: ${[RUN_FILE.history, RUN_FILE.summary, RUN_FILE.provenance, RUN_FILE.bestSkill].map((f) => `\`${f}\``).join(', ')} in ${relative(process.cwd(), outDir) || '.'}.`,
    '',
  );
  return lines.join('\n');
}

/** What the speed options did: calls an early stop saved, speculative calls and how many were thrown away. */
function speedLine(x: SpeedFigures): string {
  const parts: string[] = [];
  if (x.selection_calls_saved !== undefined)
    parts.push(`early stop saved ${x.selection_calls_saved} selection call(s)`);
  if (x.speculative_calls !== undefined)
    parts.push(
      `speculation made ${x.speculative_calls} rollout call(s) ahead, ${x.speculative_calls_discarded ?? 0} of them discarded (extra)`,
    );
  return `Speed: ${parts.join('; ')} (this process).`;
}

/** Structured replies the optimizer or the judge had to be asked for again, by stage. */
function reaskLine(reasks: Record<string, number> | undefined): string {
  const parts = Object.entries(reasks ?? {})
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = parts.reduce((n, [, k]) => n + k, 0);
  return total
    ? `Structured replies asked again (unusable the first time): ${total} (${parts.map(([s, n]) => `${s} ×${n}`).join(', ')}).`
    : 'Structured replies asked again (unusable the first time): 0.';
}

/** Retried attempts and calls that failed after every attempt, per role (the provider's side of reliability). */
function retryLine(roles: RunReport['spend_by_role']): string {
  const part = (key: 'retries' | 'failures' | 'cut_off'): string =>
    Object.entries(roles)
      .map(([role, s]) => `${role} ${s[key] ?? 0}`)
      .join(', ');
  const retried = `Retried attempts: ${part('retries')}. Calls that failed after every attempt: ${part('failures')}.`;
  // Said only when it happened: then the spend above is a lower bound.
  if (!Object.values(roles).some((s) => s.cut_off)) return retried;
  return `${retried} Requests cut off before their reply (a stop, limits.request_timeout_s or an agent target's env.exec_timeout; tokens unknown, may be billed): ${part('cut_off')}.`;
}

/** An agent target: how often it opened the skill, and what to fix when seldom. */
function skillUseLines(use: SkillUse | undefined): string[] {
  if (!use) return [];
  const advice = skillUseAdvice(use);
  const said = describeSkillUse(use);
  const sentence = (t: string): string => `${t.charAt(0).toUpperCase()}${t.slice(1)}.`;
  return [advice ? `${sentence(said)} ${sentence(advice)}` : sentence(said)];
}
