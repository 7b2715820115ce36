/**
 * Evaluations in the Runs tree: the eval-only runs of the workspace (Evaluate, `.skillopt/evals/`)
 * at the root and those of a run (`<run>/eval_only/`) under it, each with its report and one row
 * per task (failing and unanswered first) that opens the task's conversation. Pure (no `vscode`).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { z } from 'zod';
import { readJsonl } from '../../engine/store/jsonl';
import { RESULT_ROWS } from '../../engine/store/runRows';
import { EVAL_FILE, EVALS_SUBDIR, RUN_DIR, RunLayout, evalPaths } from '../../engine/store/layout';
import { conversationPaths } from '../../engine/store/predictionNames';
import { artifactSchemas, readArtifact } from '../../engine/store/runSchemas';
import { aaSummary, aaText } from '../../protocol/gateText';
import type { RolloutRow } from '../../protocol/records';
import { scoreWords } from '../../protocol/words';
import { Commands, TreeItemContext } from '../constants';
import { failingTaskItem } from './conversationText';
import { formatScore } from './format';
import type { NodeSpec } from './treeNodes';

export type EvalSummaryFile = z.infer<typeof artifactSchemas.evalSummary>;

export interface EvaluationView {
  /** The eval-only output folder (holds eval_summary.json and eval_<split>/). */
  dir: string;
  summary: EvalSummaryFile;
  /** When eval_summary.json was written. */
  at: Date;
}

/** Where the extension's Evaluate writes, beside the config: `.skillopt/evals/<skill>_<split>_<time>/`. */
export const EVALS_DIR = EVALS_SUBDIR;

/** Rows shown per evaluation; the rest are counted in one line (the files keep them all). */
export const MAX_TASK_ROWS = 200;

function readSummary(dir: string): EvalSummaryFile | undefined {
  return readArtifact<EvalSummaryFile>(join(dir, EVAL_FILE.summary), artifactSchemas.evalSummary);
}

export function readEvaluation(dir: string): EvaluationView | undefined {
  const summary = readSummary(dir);
  if (!summary) return undefined;
  return { dir, summary, at: statSync(join(dir, EVAL_FILE.summary)).mtime };
}

/** The evaluations kept in a run folder (`<run>/eval_only/*`), newest first. */
export function runEvaluations(runDir: string): EvaluationView[] {
  return evaluationsIn(new RunLayout(runDir).file(RUN_DIR.evalOnly));
}

/** The evaluation folders directly inside `root`, newest first. */
export function evaluationsIn(root: string): EvaluationView[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => readEvaluation(join(root, d.name)))
    .filter((e): e is EvaluationView => e !== undefined)
    .sort((a, b) => b.at.getTime() - a.at.getTime());
}

/** The "Evaluations" row: under a run (`runId`), or at the root for the workspace's own ('' runId). */
export function evaluationsGroupNode(runId: string, count: number): NodeSpec {
  return {
    id: `evals:${runId}`,
    kind: 'evaluations',
    runId,
    label: 'Evaluations',
    description: `${count}`,
    tooltip: runId
      ? 'Eval-only runs of this run’s skills (skillopt eval)'
      : 'Skills scored with SkillOpt: Evaluate Skill… (target only, no training)',
    icon: { id: 'beaker' },
    contextValue: TreeItemContext.message,
    collapsible: 'collapsed',
  };
}

function skillLabel(e: EvaluationView): string {
  const skill = e.summary.skill;
  if (!skill) return basename(e.dir);
  const name = basename(skill);
  // A SKILL.md is known by its folder; a run's best_skill.md by itself.
  return /^skill\.md$/i.test(name) ? `${basename(join(skill, '..'))}/${name}` : name;
}

export function evaluationNode(e: EvaluationView, runId: string): NodeSpec {
  const s = e.summary;
  const answered = s.n_items - (s.errored?.length ?? 0);
  const parts = [
    ...(s.aa ? [aaSummary(s.aa)] : []),
    `${formatScore(s.hard)} fully right`,
    `${answered} of ${s.n_items} answered`,
    `${s.failing.length} failing`,
    e.at.toLocaleString(),
  ];
  // A simulated role costs nothing; what a real one paid still shows.
  const spend =
    s.simulated && !s.dollars
      ? 'simulated target'
      : s.dollars == null
        ? 'price unknown'
        : `$${s.dollars.toFixed(4)}`;
  return {
    id: `eval:${e.dir}`,
    kind: 'evaluation',
    runId,
    label: `${skillLabel(e)} on ${s.split}`,
    description: parts.join(' · '),
    tooltip: [
      `Skill: ${s.skill ?? 'unknown'}`,
      `Split: ${s.split} (${s.n_items} tasks)`,
      `Score: ${scoreWords(s.hard, s.soft, formatScore)}`,
      ...(s.errored?.length ? [`Not answered by the target (not scored): ${s.errored.length}`] : []),
      ...(s.aa ? aaText(s.aa) : []),
      `Spend: ${s.model_calls ?? 0} target calls, ${spend}`,
      `Folder: ${e.dir}`,
    ].join('\n'),
    icon: {
      id: s.failing.length ? 'beaker' : 'pass',
      ...(s.failing.length ? {} : { color: 'testing.iconPassed' }),
    },
    contextValue: TreeItemContext.evaluation,
    collapsible: 'collapsed',
    path: e.dir,
  };
}

/** An evaluation's rows: its report, then each task, failing and unanswered first. */
export function evaluationChildren(e: EvaluationView, runId: string): NodeSpec[] {
  const dir = new RunLayout(e.dir).evalOnlyDir(e.summary.split);
  const rows = readJsonl(evalPaths(dir).results, RESULT_ROWS);
  const rank = (r: RolloutRow): number => (r.outcome === 'errored' ? 0 : r.hard ? 2 : 1);
  const sorted = [...rows].sort((a, b) => rank(a) - rank(b) || a.id.localeCompare(b.id));
  const report: NodeSpec = {
    id: `eval:${e.dir}:report`,
    kind: 'artifact',
    runId,
    label: 'Report',
    description: 'scores by task type, failing tasks, spend',
    icon: { id: 'output' },
    contextValue: TreeItemContext.artifact,
    collapsible: 'none',
    path: e.dir,
    command: { command: Commands.openEvaluation, title: 'Open Evaluation Report', arguments: [e.dir] },
  };
  const aa: NodeSpec[] = e.summary.aa
    ? [
        {
          id: `eval:${e.dir}:aa`,
          kind: 'artifact',
          runId,
          label: 'A/A check',
          description: aaSummary(e.summary.aa),
          tooltip: aaText(e.summary.aa).join('\n'),
          icon: e.summary.aa.strict_accepts
            ? { id: 'warning', color: 'list.warningForeground' }
            : { id: 'pass', color: 'testing.iconPassed' },
          contextValue: TreeItemContext.message,
          collapsible: 'none',
          command: { command: Commands.openEvaluation, title: 'Open Evaluation Report', arguments: [e.dir] },
        },
      ]
    : [];
  const conversationOf = conversationPaths(dir);
  const tasks = sorted.slice(0, MAX_TASK_ROWS).map((r): NodeSpec => {
    const item = failingTaskItem(r.id, r);
    const verdict = r.outcome === 'errored' ? 'not answered' : r.hard ? 'passed' : 'failed';
    const path = conversationOf(r.id);
    return {
      id: `eval:${e.dir}:task:${r.id}`,
      kind: 'evalTask',
      runId,
      label: r.id,
      description: `${verdict} · ${item.detail ?? ''}`,
      tooltip: [item.description, item.detail].filter(Boolean).join('\n'),
      icon:
        r.outcome === 'errored'
          ? { id: 'warning', color: 'list.warningForeground' }
          : r.hard
            ? { id: 'pass', color: 'testing.iconPassed' }
            : { id: 'error', color: 'testing.iconFailed' },
      contextValue: TreeItemContext.artifact,
      collapsible: 'none',
      path,
      command: { command: Commands.openArtifact, title: 'Open Conversation', arguments: [path] },
    };
  });
  const more =
    sorted.length > MAX_TASK_ROWS
      ? [
          {
            id: `eval:${e.dir}:more`,
            kind: 'placeholder' as const,
            runId,
            label: `${sorted.length - MAX_TASK_ROWS} more tasks${sorted.slice(MAX_TASK_ROWS).every((r) => rank(r) === 2) ? ' (passing)' : ''} in ${EVAL_FILE.results}`,
            contextValue: TreeItemContext.message,
            collapsible: 'none' as const,
          },
        ]
      : [];
  return [report, ...aa, ...tasks, ...more];
}
