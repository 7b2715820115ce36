/**
 * The Skills view's rows as plain data: one per skill, with which agent loads it, its latest run's
 * best score and when, whether it has evals, and its front-matter problems. Pure (no `vscode`):
 * the tree provider turns these into TreeItems, and unit tests check the wording.
 */
import { SkillTreeContext } from '../constants';
import type { RunView } from '../runs/liveState';
import { statusText } from '../runs/liveState';
import { bestScoreOf, formatScore, type NodeIcon } from '../runs/treeNodes';
import { HOST_LABEL, type SkillHost, type SkillInfo } from './discovery';
import { formatAgo } from './skillRuns';

export interface LastRun {
  run: RunView;
  /** When the run last wrote its record (ms since the epoch). */
  at?: number;
}

export interface SkillRow {
  id: string;
  /** The SKILL.md file. */
  path: string;
  label: string;
  description: string;
  tooltip: string;
  /** What a screen reader says: the row as it reads. */
  accessibilityLabel: string;
  icon: NodeIcon;
  contextValue: string;
  /** The latest run's folder, for Reveal Last Run. */
  runId?: string;
}

const hostOrder: SkillHost[] = ['copilot', 'claude', 'codex', 'setting', 'trained'];

/** By name, then by which agent loads it, then by path: the same skill in two places sits together. */
export function sortSkills<S extends Pick<SkillInfo, 'name' | 'host' | 'path'>>(skills: readonly S[]): S[] {
  return [...skills].sort(
    (a, b) =>
      a.name.localeCompare(b.name) ||
      hostOrder.indexOf(a.host) - hostOrder.indexOf(b.host) ||
      a.path.localeCompare(b.path),
  );
}

function hostDetail(host: SkillHost): string {
  if (host === 'setting') return 'Loaded by VS Code (a folder in chat.agentSkillsLocations)';
  if (host === 'trained')
    return 'Not in a folder an agent loads skills from; listed because a run trained it';
  return `Loaded by ${HOST_LABEL[host]}`;
}

/** "best 0.620 · 3 h ago", "training · best 0.550", "interrupted · 2 days ago". */
function runText(last: LastRun, now: number): string {
  const status = statusText(last.run);
  const best = bestScoreOf(last.run);
  const parts: string[] = [];
  if (status === 'running') parts.push('training');
  else if (status !== 'finished') parts.push(status);
  if (best !== undefined) parts.push(`best ${formatScore(best)}`);
  if (status !== 'running' && last.at !== undefined) parts.push(formatAgo(last.at, now));
  return parts.join(' · ');
}

export function skillRow(skill: SkillInfo, last: LastRun | undefined, now: number): SkillRow {
  const errors = skill.problems.filter((p) => p.severity === 'error').length;
  const warnings = skill.problems.length - errors;
  const problems = [
    ...(errors ? [`${errors} error${errors === 1 ? '' : 's'}`] : []),
    ...(warnings ? [`${warnings} warning${warnings === 1 ? '' : 's'}`] : []),
  ];
  // A score is what a trained skill's row is read for: first, before a narrow view cuts the rest.
  const description = [
    ...(last ? [runText(last, now), HOST_LABEL[skill.host]] : [HOST_LABEL[skill.host], 'not trained yet']),
    ...(skill.hasEvals ? ['has evals'] : []),
    ...problems,
  ].join(' · ');
  const tooltip = [
    skill.name,
    ...(skill.description ? [skill.description] : []),
    '',
    skill.path,
    hostDetail(skill.host),
    ...(last
      ? [
          `Last run: ${last.run.name} (${statusText(last.run)}${last.at !== undefined ? `, ${formatAgo(last.at, now)}` : ''})`,
          `Best selection score ${formatScore(bestScoreOf(last.run))}, baseline ${formatScore(last.run.live?.baselineScore ?? last.run.baselineScore)}`,
        ]
      : ['Not trained yet: Optimize trains it against your tasks.']),
    ...(skill.hasEvals ? ['Has evals/evals.json'] : []),
    ...skill.problems.map((p) => `Line ${p.line + 1} (${p.severity}): ${p.message}`),
  ].join('\n');
  const running = last && statusText(last.run) === 'running';
  return {
    id: `skill:${skill.path}`,
    path: skill.path,
    label: skill.name,
    description,
    tooltip,
    accessibilityLabel: `${skill.name}, ${description}`,
    icon: errors
      ? { id: 'error', color: 'list.errorForeground' }
      : warnings
        ? { id: 'warning', color: 'list.warningForeground' }
        : running
          ? { id: 'sync~spin' }
          : { id: 'book' },
    contextValue: last ? SkillTreeContext.skillWithRun : SkillTreeContext.skill,
    ...(last ? { runId: last.run.dir } : {}),
  };
}
