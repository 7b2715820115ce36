/**
 * Skill-aware reflection in the Runs tree: the epoch's execution-notes appendix beside its slow
 * update, and each step's `appendix_notes.json` among its files. Pure, like treeNodes.
 */
import { RunLayout, STEP_FILE } from '../../engine/store/layout';
import type { EpochView } from '../../engine/store/runReader';
import { Commands, TreeItemContext } from '../constants';
import type { RunView } from './liveState';
import type { NodeSpec } from './treeNodes';

const open = (path: string): NonNullable<NodeSpec['command']> => ({
  command: Commands.openArtifact,
  title: 'Open',
  arguments: [path],
});

/** The appendix after the epoch's steps; opening it shows the skill, where the block is folded and marked. */
export function appendixEpochNode(run: RunView, view: EpochView): NodeSpec | undefined {
  const a = view.appendix;
  if (!a) return undefined;
  const last = [...view.steps].reverse().find((r) => r.n_appendix_notes_total !== undefined);
  const skill = last ? new RunLayout(run.dir).skillVersion(last.step) : undefined;
  const parts = [`+${a.added} this epoch`, `${a.total} note${a.total === 1 ? '' : 's'}`];
  if (a.consolidations > 0) parts.push(`consolidated ×${a.consolidations}`);
  return {
    id: `appendix:${run.dir}:${view.epoch}`,
    kind: 'epochEnd',
    runId: run.dir,
    epoch: view.epoch,
    label: 'Execution notes',
    description: parts.join(' · '),
    tooltip: [
      'Protected appendix (skill-aware reflection): reminders of rules the skill already has and the target',
      'did not apply. Added after each step’s gate, whatever its verdict; the next candidate carries them.',
      '',
      ...(a.notes.length ? a.notes.map((n) => `- ${n}`) : ['(no notes)']),
    ].join('\n'),
    icon: { id: 'note' },
    contextValue: skill ? TreeItemContext.artifact : TreeItemContext.message,
    collapsible: 'none',
    ...(skill ? { path: skill, command: open(skill) } : {}),
  };
}

/** A step's `appendix_notes.json`: the notes its analysts wrote and the appendix after them. */
export function appendixArtifactNode(run: RunView, step: number, path: string): NodeSpec {
  return {
    id: `artifact:${run.dir}:${step}:appendix`,
    kind: 'artifact',
    runId: run.dir,
    step,
    label: 'Execution notes',
    description: STEP_FILE.appendixNotes,
    icon: { id: 'note' },
    contextValue: TreeItemContext.artifact,
    collapsible: 'none',
    path,
    command: open(path),
  };
}
