/**
 * The Runs tree as plain data: runs → epochs → steps → artifacts. Pure (no `vscode`): the tree
 * provider turns these specs into TreeItems, and unit tests check the mapping. Ids are stable
 * across refreshes so VS Code keeps expansion and selection while a run updates.
 */
import { RUN_FILE, RunLayout } from '../../engine/store/layout';
import type { GateTestRecord, ItemRegressions, StepRecord } from '../../protocol/records';
import { describeGateTest, describeItemRegressions, describePValue } from '../../protocol/gateText';
import { isAccepted, isSkipped, type StepAction } from '../../protocol/vocabulary';
import { actionLabel } from '../../protocol/words';
import { Commands, ReviewCommands, runWithBatchSuffix, TreeItemContext } from '../constants';
import { appendixEpochNode } from './appendixNodes';
import { formatDelta, formatScore, spendLine } from './format';
import { effectiveStatus, recordedBatchText, statusText, waitingForBatch, type RunView } from './liveState';

// The formatting helpers and the artifact rows live in their own modules; callers import them here.
export { formatDelta, formatPromptCache, formatScore, formatSpend, spendLine } from './format';
export { artifactNodes, trajectoryNodes } from './artifactNodes';

export type NodeKind =
  | 'skillGroup'
  | 'run'
  | 'epoch'
  | 'step'
  | 'epochEnd'
  | 'artifact'
  | 'trajectories'
  | 'trajectory'
  | 'placeholder'
  | 'evaluations'
  | 'evaluation'
  | 'evalTask';

export interface NodeIcon {
  /** Codicon id, e.g. `check` or `loading~spin`. */
  id: string;
  /** Theme color id. */
  color?: string;
}

export interface NodeCommand {
  command: string;
  title: string;
  arguments: unknown[];
}

export interface NodeSpec {
  id: string;
  kind: NodeKind;
  runId: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon?: NodeIcon;
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  command?: NodeCommand;
  epoch?: number;
  step?: number;
  /** File the node stands for (artifacts). */
  path?: string;
  /** The skill a group of runs trained (skillGroup rows; not a resourceUri, so no file decorations). */
  skillPath?: string;
}

interface Verdict {
  text: string;
  icon: NodeIcon;
}

const stepIcons: Record<StepAction, NodeIcon> = {
  accept_new_best: { id: 'star-full', color: 'testing.iconPassed' },
  accept: { id: 'check', color: 'testing.iconPassed' },
  force_accept: { id: 'check', color: 'list.warningForeground' },
  reject: { id: 'close', color: 'testing.iconFailed' },
  skip_no_patches: { id: 'circle-slash', color: 'disabledForeground' },
  skip_no_rewrite: { id: 'circle-slash', color: 'disabledForeground' },
  inconclusive: { id: 'question', color: 'list.warningForeground' },
};

/** How a step's gate action reads and looks (an action from another writer reads as itself). */
export function verdictOf(action: string): Verdict {
  const icon = Object.hasOwn(stepIcons, action) ? stepIcons[action as StepAction] : { id: 'circle-outline' };
  return { text: actionLabel(action), icon };
}

function runIcon(run: RunView): NodeIcon {
  switch (statusText(run)) {
    case 'running':
      return { id: 'sync~spin' };
    case 'finished':
      return { id: 'pass', color: 'testing.iconPassed' };
    case 'failed':
      return { id: 'error', color: 'testing.iconFailed' };
    case 'empty':
      return { id: 'circle-outline' };
    default:
      return { id: 'debug-pause', color: 'list.warningForeground' };
  }
}

function runContext(run: RunView): string {
  const status = effectiveStatus(run);
  if (status === 'running') {
    if (!run.live) return TreeItemContext.runOther;
    return run.live.status === 'running' && run.live.waiting
      ? TreeItemContext.runWaiting
      : TreeItemContext.runLive;
  }
  const batch = run.batches ? runWithBatchSuffix : '';
  if (status === 'interrupted') return TreeItemContext.runResumable + batch;
  if (status === 'finished') return TreeItemContext.runFinished + batch;
  return TreeItemContext.runOther + batch;
}

/** Best selection score so far: the folder's or the events', whichever is newer (it never decreases). */
export function bestScoreOf(run: RunView): number | undefined {
  const scores = [run.live?.bestScore, run.bestScore].filter((v): v is number => v !== undefined);
  return scores.length ? Math.max(...scores) : undefined;
}

export function runNode(run: RunView): NodeSpec {
  const live = run.live;
  const status = statusText(run);
  const best = bestScoreOf(run);
  const parts = [status];
  if (live && status === 'running' && live.waiting) {
    parts[0] = `waiting for your review of step ${live.waiting.step}`;
  } else if (live && status === 'running') {
    if (live.totalSteps > 0) parts.push(`step ${Math.max(live.step, 1)}/${live.totalSteps}`);
    else if (live.stage === 'baseline') parts.push('baseline');
    if (live.batch)
      parts.push(`waiting for the ${live.batch.evaluation} batch ${live.batch.done}/${live.batch.total}`);
  }
  if (best !== undefined) parts.push(`best ${formatScore(best)}`);
  if (run.writer === 'skillopt-python') parts.push('Python run');
  // A damaged run file, or one a newer SkillOpt wrote: said, not guessed around.
  if (run.problem) parts.push('unreadable run files');
  const baseline = live?.baselineScore ?? run.baselineScore;
  const tooltip = [
    run.dir,
    `Status: ${status}${live?.message ? ` (${live.message})` : ''}`,
    `Best selection score: ${formatScore(best)}${run.bestStep !== undefined ? ` at step ${run.bestStep}` : ''}`,
    `Baseline: ${formatScore(baseline)}`,
    ...(live?.batch ? [waitingForBatch(live.batch)] : []),
    ...(run.batches && effectiveStatus(run) !== 'running' ? [recordedBatchText(run.batches)] : []),
    ...(live
      ? [spendLine(live.spend, live.simulated)]
      : run.spend
        ? [spendLine(run.spend, run.spend.simulated)]
        : []),
    ...(run.problem ? [`Cannot read this run: ${run.problem}`] : []),
  ].join('\n');
  return {
    id: `run:${run.dir}`,
    kind: 'run',
    runId: run.dir,
    label: run.name,
    description: parts.join(' · '),
    tooltip,
    icon: runIcon(run),
    contextValue: runContext(run),
    collapsible: status === 'running' ? 'expanded' : 'collapsed',
  };
}

/** Epoch numbers to show: those on disk plus the one a live run is in. */
function epochNumbers(run: RunView): number[] {
  const nums = new Set(run.epochs.map((e) => e.epoch));
  const live = run.live;
  if (live && live.status === 'running' && live.epoch > 0) nums.add(live.epoch);
  return [...nums].sort((a, b) => a - b);
}

export function epochNodes(run: RunView): NodeSpec[] {
  const nums = epochNumbers(run);
  if (nums.length === 0) {
    const live = run.live;
    const waiting = live?.status === 'running';
    return [
      {
        id: `placeholder:${run.dir}`,
        kind: 'placeholder',
        runId: run.dir,
        label: waiting
          ? live?.stage === 'baseline'
            ? 'Scoring the initial skill…'
            : 'Starting…'
          : 'No steps yet',
        contextValue: TreeItemContext.message,
        collapsible: 'none',
        ...(waiting ? { icon: { id: 'loading~spin' } } : {}),
      },
    ];
  }
  const lastLive = run.live?.status === 'running' ? run.live.epoch : undefined;
  return nums.map((epoch) => {
    const view = run.epochs.find((e) => e.epoch === epoch);
    const steps = view?.steps ?? [];
    const accepted = steps.filter((s) => isAccepted(s.action)).length;
    const best = steps.length ? Math.max(...steps.map((s) => s.best_score)) : undefined;
    const desc = [`${steps.length} step${steps.length === 1 ? '' : 's'}`, `${accepted} accepted`];
    if (best !== undefined) desc.push(`best ${formatScore(best)}`);
    const active = epoch === lastLive;
    return {
      id: `epoch:${run.dir}:${epoch}`,
      kind: 'epoch' as const,
      runId: run.dir,
      epoch,
      label: `Epoch ${epoch}`,
      description: desc.join(' · '),
      icon: active ? { id: 'loading~spin' } : { id: 'layers' },
      contextValue: TreeItemContext.epoch,
      collapsible: active ? ('expanded' as const) : ('collapsed' as const),
    };
  });
}

/** The run's own files after its epochs: the report and the best skill, where they exist. */
export function runFileNodes(run: RunView, exists: (path: string) => boolean): NodeSpec[] {
  const files = [
    {
      name: RUN_FILE.report,
      label: 'Report',
      description: 'scores, edits, spend, persistent failures',
      icon: 'output',
    },
    { name: RUN_FILE.bestSkill, label: 'Best skill', description: RUN_FILE.bestSkill, icon: 'star-full' },
  ];
  const layout = new RunLayout(run.dir);
  return files
    .map((f) => ({ ...f, path: layout.file(f.name) }))
    .filter((f) => exists(f.path))
    .map((f) => ({
      id: `file:${run.dir}:${f.name}`,
      kind: 'artifact' as const,
      runId: run.dir,
      label: f.label,
      description: f.description,
      icon: { id: f.icon },
      contextValue: TreeItemContext.artifact,
      collapsible: 'none' as const,
      path: f.path,
      command: { command: Commands.openArtifact, title: 'Open', arguments: [f.path] },
    }));
}

/** The score a step's candidate had to beat: the current score after the previous step. */
function scoreBefore(run: RunView, step: StepRecord): number | undefined {
  const prev = run.history.filter((r) => r.step < step.step).at(-1);
  return prev?.current_score ?? run.live?.baselineScore ?? run.baselineScore;
}

function editCount(r: StepRecord): number {
  return r.edit_apply_summary?.applied ?? r.n_edits_ranked ?? r.n_patches;
}

export function stepNode(run: RunView, r: StepRecord): NodeSpec {
  const verdict = verdictOf(r.action);
  const score = r.candidate_gate_score ?? r.selection_hard;
  const before = scoreBefore(run, r);
  const desc: string[] = [];
  if (score !== undefined) {
    desc.push(
      before !== undefined ? `${formatScore(score)} (${formatDelta(score - before)})` : formatScore(score),
    );
  }
  const edits = editCount(r);
  // A skipped step has no candidate: say why instead of counting edits it never applied.
  if (isSkipped(r.action)) desc.push(verdict.text);
  else desc.push(`${edits} edit${edits === 1 ? '' : 's'}`);
  // The paired gate's evidence, short in the row and whole in the hover.
  if (r.gate_test) desc.push(describePValue(r.gate_test.p_value));
  if (r.item_regressions?.items.length) desc.push(`broke ${r.item_regressions.items.length}`);
  // Items the target could not answer are not wrong answers: counted apart, kept out of the scores.
  const errored = (r.rollout_errored ?? 0) + (r.selection_errored ?? 0);
  if (errored) desc.push(`${errored} not answered`);
  const review = r.review ? ` · you: ${r.review.decision.replace('human_', '').replace('_', ' ')}` : '';
  const tooltip = [
    `Step ${r.step} (epoch ${r.epoch}): ${verdict.text}${review}`,
    `Selection score ${formatScore(score)}${before !== undefined ? `, before ${formatScore(before)}` : ''}`,
    `Best ${formatScore(r.best_score)} (step ${r.best_step})`,
    `Train rollout ${formatScore(r.rollout_hard)} on ${r.rollout_n} tasks`,
    `Edits applied ${edits}${r.edit_apply_summary ? ` of ${r.edit_apply_summary.total}` : ''}`,
    ...(r.gate_test ? [`Paired gate: ${describeGateTest(r.gate_test)}`] : []),
    ...(r.item_regressions ? [`Per-item rule: ${describeItemRegressions(r.item_regressions)}`] : []),
    ...(errored
      ? [
          `Not answered by the target (kept out of the scores): ${r.rollout_errored ?? 0} train, ${r.selection_errored ?? 0} selection`,
        ]
      : []),
  ].join('\n');
  return {
    id: `step:${run.dir}:${r.step}`,
    kind: 'step',
    runId: run.dir,
    epoch: r.epoch,
    step: r.step,
    label: `Step ${r.step}`,
    description: desc.join(' · ') + review,
    tooltip,
    icon: verdict.icon,
    contextValue: TreeItemContext.step,
    collapsible: 'collapsed',
  };
}

/** Steps of one epoch, the live step in progress, then the epoch-end updates. */
export function stepNodes(run: RunView, epoch: number): NodeSpec[] {
  const view = run.epochs.find((e) => e.epoch === epoch);
  const out = (view?.steps ?? []).map((r) => stepNode(run, r));
  const live = run.live;
  if (live?.status === 'running' && live.epoch === epoch && live.step > 0 && live.step > live.finishedStep) {
    const onDisk = view?.steps.some((r) => r.step === live.step) ?? false;
    if (!onDisk) {
      const stage = live.stage ? live.stage.replace('_', ' ') : 'starting';
      const progress = live.progress ? ` ${live.progress.done}/${live.progress.total}` : '';
      const row: NodeSpec = {
        id: `step:${run.dir}:${live.step}`,
        kind: 'step',
        runId: run.dir,
        epoch,
        step: live.step,
        label: `Step ${live.step}`,
        description: `${stage}${progress}…`,
        icon: { id: 'loading~spin' },
        contextValue: TreeItemContext.message,
        collapsible: 'none',
      };
      // The engine is paused on this step: the row says so and opens the review.
      if (live.waiting?.step === live.step) {
        row.description = 'waiting for your review';
        row.tooltip = 'The run is paused until you accept or reject this candidate. Click to review it.';
        row.icon = { id: 'bell', color: 'list.warningForeground' };
        row.command = { command: ReviewCommands.openWaiting, title: 'Review', arguments: [run.dir] };
      }
      out.push(row);
    }
  }
  const appendix = view && appendixEpochNode(run, view);
  if (appendix) out.push(appendix);
  const end = (
    key: string,
    label: string,
    icon: string,
    part: { action: string; content?: string; gateTest?: GateTestRecord; itemRegressions?: ItemRegressions },
  ): void => {
    // The paired gate's evidence, short in the row and whole in the hover, as a step's.
    const desc = [actionLabel(part.action)];
    if (part.gateTest) desc.push(describePValue(part.gateTest.p_value));
    if (part.itemRegressions?.items.length) desc.push(`broke ${part.itemRegressions.items.length}`);
    const tooltip = [
      ...(part.content ? [part.content] : []),
      ...(part.gateTest ? [`Paired gate: ${describeGateTest(part.gateTest)}`] : []),
      ...(part.itemRegressions ? [`Per-item rule: ${describeItemRegressions(part.itemRegressions)}`] : []),
    ].join('\n');
    out.push({
      id: `${key}:${run.dir}:${epoch}`,
      kind: 'epochEnd',
      runId: run.dir,
      epoch,
      label,
      description: desc.join(' · '),
      ...(tooltip ? { tooltip } : {}),
      icon: { id: icon },
      contextValue: TreeItemContext.message,
      collapsible: 'none',
    });
  };
  // In the order an epoch end runs them.
  if (view?.metaReflect) end('metaReflect', 'Meta reflect', 'sparkle', view.metaReflect);
  if (view?.slowUpdate) end('slow', 'Slow update', 'history', view.slowUpdate);
  if (view?.metaSkill) end('meta', 'Meta skill', 'lightbulb', view.metaSkill);
  return out;
}

export function sortRuns(runs: readonly RunView[]): RunView[] {
  return [...runs].sort((a, b) => {
    const la = a.live?.status === 'running' ? 1 : 0;
    const lb = b.live?.status === 'running' ? 1 : 0;
    if (la !== lb) return lb - la;
    return b.name.localeCompare(a.name) || a.dir.localeCompare(b.dir);
  });
}
