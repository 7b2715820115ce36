/** A step's rows in the Runs tree: its files (candidate diff, reports, notes) and trajectories. */
import { skillVersionName } from '../../engine/store/layout';
import type { StepArtifacts } from '../../engine/store/runReader';
import { Commands, TreeItemContext } from '../constants';
import { appendixArtifactNode } from './appendixNodes';
import type { RunView } from './liveState';
import type { NodeCommand, NodeSpec } from './treeNodes';

function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

/** A step's files: the candidate diff, the apply report, the merged patch, failed trajectories. */
export function artifactNodes(run: RunView, step: number, a: StepArtifacts): NodeSpec[] {
  const base = `artifact:${run.dir}:${step}`;
  const out: NodeSpec[] = [];
  const open = (path: string): NodeCommand => ({
    command: Commands.openArtifact,
    title: 'Open',
    arguments: [path],
  });
  if (a.candidate) {
    out.push({
      id: `${base}:diff`,
      kind: 'artifact',
      runId: run.dir,
      step,
      label: 'Candidate diff',
      description: a.previous
        ? `${skillVersionName(step - 1).replace(/\.md$/, '')} ↔ candidate`
        : fileName(a.candidate),
      icon: { id: 'diff' },
      contextValue: TreeItemContext.artifact,
      collapsible: 'none',
      path: a.candidate,
      command: a.previous
        ? { command: Commands.openStepDiff, title: 'Open Candidate Diff', arguments: [run.dir, step] }
        : open(a.candidate),
    });
  }
  if (a.applyReport) {
    out.push({
      id: `${base}:report`,
      kind: 'artifact',
      runId: run.dir,
      step,
      label: 'Apply report',
      description: fileName(a.applyReport),
      icon: { id: 'checklist' },
      contextValue: TreeItemContext.artifact,
      collapsible: 'none',
      path: a.applyReport,
      command: open(a.applyReport),
    });
  }
  if (a.appendixNotes) out.push(appendixArtifactNode(run, step, a.appendixNotes));
  if (a.mergedPatch) {
    out.push({
      id: `${base}:patch`,
      kind: 'artifact',
      runId: run.dir,
      step,
      label: 'Merged edits',
      description: fileName(a.mergedPatch),
      icon: { id: 'json' },
      contextValue: TreeItemContext.artifact,
      collapsible: 'none',
      path: a.mergedPatch,
      command: open(a.mergedPatch),
    });
  }
  if (a.failedTrajectories.length > 0) {
    out.push({
      id: `${base}:failed`,
      kind: 'trajectories',
      runId: run.dir,
      step,
      label: 'Failed tasks',
      description: `${a.failedTrajectories.length}`,
      icon: { id: 'error', color: 'testing.iconFailed' },
      contextValue: TreeItemContext.artifact,
      collapsible: 'collapsed',
    });
  }
  if (out.length === 0) {
    out.push({
      id: `${base}:none`,
      kind: 'placeholder',
      runId: run.dir,
      step,
      label: 'No files kept for this step',
      contextValue: TreeItemContext.message,
      collapsible: 'none',
    });
  }
  return out;
}

/** One node per failed task of a step, opening its conversation. */
export function trajectoryNodes(run: RunView, step: number, a: StepArtifacts): NodeSpec[] {
  return a.failedTrajectories.map((t) => ({
    id: `artifact:${run.dir}:${step}:traj:${t.path}`,
    kind: 'trajectory' as const,
    runId: run.dir,
    step,
    label: t.id,
    ...(t.reason ? { description: t.reason } : {}),
    icon: { id: 'comment-discussion' },
    contextValue: TreeItemContext.artifact,
    collapsible: 'none' as const,
    path: t.path,
    command: { command: Commands.openArtifact, title: 'Open Trajectory', arguments: [t.path] },
  }));
}

/** Runs newest first: live ones on top, then by folder name (names end in a timestamp). */
